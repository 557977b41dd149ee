// Parses .sasm text line by line. Operand values are read according to the field's kind in
// isa.def (numbers, ub:/acc: local addresses, symbol names), and range-checked with the same
// FieldValueError the encoder uses, so text and binary accept exactly the same instructions.
#include "simulator/isa/assembler.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "simulator/isa/encoding.h"

namespace systolic {
namespace {

struct Token {
  std::string_view text;
  uint32_t column = 0;  // 1-based
};

// One operand: `name=value` (name.text empty for a positional operand).
struct Operand {
  Token name;
  Token value;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

class LineAssembler {
 public:
  LineAssembler(std::shared_ptr<const std::string> file, uint32_t line, std::string_view text)
      : file_(std::move(file)), line_(line), text_(text) {}

  // Returns false for a blank or comment-only line.
  bool Parse(Instruction& out) {
    size_t pos = SkipSpace(0);
    if (pos >= text_.size()) return false;
    size_t end = pos;
    while (end < text_.size() && !IsSpace(text_[end]) && text_[end] != ',') ++end;
    Token mnemonic{text_.substr(pos, end - pos), Column(pos)};
    const InstrInfo* info = FindMnemonic(mnemonic.text);
    if (info == nullptr) throw Fail(mnemonic, UnknownMnemonicMessage(mnemonic.text));
    std::vector<Operand> operands = SplitOperands(end);
    out = MakeInstruction(info->opcode);
    AssignOperands(*info, operands, out);
    return true;
  }

 private:
  uint32_t Column(size_t pos) const { return static_cast<uint32_t>(pos + 1); }
  hlo::Error Fail(const Token& at, std::string message) const {
    return hlo::Error(hlo::SourceLocation{file_, line_, at.column}, std::move(message));
  }
  hlo::Error FailAt(size_t pos, std::string message) const {
    return hlo::Error(hlo::SourceLocation{file_, line_, Column(pos)}, std::move(message));
  }
  size_t SkipSpace(size_t pos) const {
    while (pos < text_.size() && IsSpace(text_[pos])) ++pos;
    return pos;
  }

  static std::string UnknownMnemonicMessage(std::string_view mnemonic) {
    std::string message = "unknown mnemonic " + Quote(mnemonic);
    const InstrInfo* best = nullptr;
    size_t best_distance = 3;  // suggest only close misspellings
    for (const InstrInfo& info : AllInstructions()) {
      size_t d = EditDistance(mnemonic, info.mnemonic);
      if (d < best_distance) best = &info, best_distance = d;
    }
    if (best != nullptr) message += " (did you mean " + Quote(best->mnemonic) + "?)";
    return message;
  }

  // Splits "a=1, 2, b = x" into operands; `pos` is just past the mnemonic.
  std::vector<Operand> SplitOperands(size_t pos) {
    std::vector<Operand> operands;
    pos = SkipSpace(pos);
    if (pos >= text_.size()) return operands;
    while (true) {
      pos = SkipSpace(pos);
      size_t start = pos;
      while (pos < text_.size() && text_[pos] != ',') ++pos;
      size_t stop = pos;
      while (stop > start && IsSpace(text_[stop - 1])) --stop;
      if (stop == start) throw FailAt(start, "empty operand");
      std::string_view piece = text_.substr(start, stop - start);
      Operand operand;
      size_t eq = piece.find('=');
      if (eq == std::string_view::npos) {
        operand.value = {piece, Column(start)};
      } else {
        size_t name_end = eq;
        while (name_end > 0 && IsSpace(piece[name_end - 1])) --name_end;
        size_t value_start = eq + 1;
        while (value_start < piece.size() && IsSpace(piece[value_start])) ++value_start;
        operand.name = {piece.substr(0, name_end), Column(start)};
        operand.value = {piece.substr(value_start), Column(start + value_start)};
        if (operand.name.text.empty()) throw FailAt(start, "missing field name before '='");
        if (operand.value.text.empty()) throw FailAt(start + eq, "missing value after '='");
      }
      if (operand.value.text.find_first_of(" \t=") != std::string_view::npos)
        throw Fail(operand.value,
                   "malformed operand " + Quote(piece) + " (separate operands with ',')");
      operands.push_back(operand);
      if (pos >= text_.size()) break;
      ++pos;  // the comma
    }
    return operands;
  }

  void AssignOperands(const InstrInfo& info, const std::vector<Operand>& operands,
                      Instruction& out) {
    std::vector<bool> given(info.fields.size(), false);
    bool seen_named = false;
    size_t next_positional = 0;
    for (const Operand& operand : operands) {
      size_t field = 0;
      if (operand.name.text.empty()) {
        if (seen_named)
          throw Fail(operand.value,
                     "positional operand after a named one in " + Quote(info.mnemonic));
        if (next_positional >= info.fields.size())
          throw Fail(operand.value, Quote(info.mnemonic) + " takes " +
                                        std::to_string(info.fields.size()) + " operands");
        field = next_positional++;
      } else {
        seen_named = true;
        std::optional<int> index = FindField(info, operand.name.text);
        if (!index) throw Fail(operand.name, UnknownFieldMessage(info, operand.name.text));
        field = static_cast<size_t>(*index);
      }
      if (given[field])
        throw Fail(operand.name.text.empty() ? operand.value : operand.name,
                   "field " + Quote(info.fields[field].name) + " given twice");
      given[field] = true;
      out.fields[field] = ParseValue(info, field, operand.value);
    }
    for (size_t i = 0; i < info.fields.size(); ++i) {
      if (given[i] || info.fields[i].kind == FieldKind::kFlag) continue;
      throw FailAt(text_.size(),
                   "missing field " + Quote(info.fields[i].name) + " of " + Quote(info.mnemonic));
    }
  }

  static std::string UnknownFieldMessage(const InstrInfo& info, std::string_view name) {
    std::string message = Quote(info.mnemonic) + " has no field " + Quote(name);
    if (info.fields.empty()) return message + " (it takes no operands)";
    message += " (fields:";
    for (const FieldInfo& f : info.fields) message += " " + std::string(f.name);
    return message + ")";
  }

  // Decimal, 0x hex or 0b binary, with optional '_' digit separators.
  uint64_t ParseNumber(const Token& token, std::string_view text, const FieldInfo& field) const {
    std::string digits;
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      base = 16, text.remove_prefix(2);
    } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
      base = 2, text.remove_prefix(2);
    }
    for (char c : text)
      if (c != '_') digits.push_back(c);
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (ec == std::errc::result_out_of_range)
      throw Fail(token, "number " + Quote(token.text) + " for field " + Quote(field.name) +
                            " does not fit in 64 bits");
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
      throw Fail(token,
                 "expected a number for field " + Quote(field.name) + ", got " + Quote(token.text));
    return value;
  }

  uint64_t ParseSymbol(const Token& token, const FieldInfo& field) const {
    std::span<const SymbolInfo> symbols = SymbolsOf(field.kind);
    for (size_t i = 0; i < symbols.size(); ++i)
      if (symbols[i].name == token.text) return i;
    std::string valid;
    for (const SymbolInfo& s : symbols) {
      if (!valid.empty()) valid += ", ";
      valid += s.name;
    }
    throw Fail(token, "unknown " + std::string(FieldKindName(field.kind)) + " " +
                          Quote(token.text) + " for field " + Quote(field.name) +
                          " (valid: " + valid + ")");
  }

  uint64_t ParseLocal(const Token& token, const FieldInfo& field) const {
    std::string_view text = token.text;
    uint64_t base = 0;
    std::string_view memory;
    if (text.starts_with("ub:")) {
      memory = "unified buffer", text.remove_prefix(3);
    } else if (text.starts_with("acc:")) {
      memory = "accumulator", base = kAccumulatorBit, text.remove_prefix(4);
    } else {
      return ParseNumber(token, text, field);  // raw local address (bit 25 selects acc)
    }
    uint64_t offset = ParseNumber(token, text, field);
    if (offset >= kAccumulatorBit)
      throw Fail(token, "offset " + std::to_string(offset) + " of field " + Quote(field.name) +
                            " is outside the " + std::string(memory) +
                            "'s 25-bit address space (max " + std::to_string(kAccumulatorBit - 1) +
                            ")");
    return base | offset;
  }

  uint64_t ParseValue(const InstrInfo& info, size_t field_index, const Token& token) const {
    const FieldInfo& field = info.fields[field_index];
    uint64_t value = 0;
    switch (field.kind) {
      case FieldKind::kAddress:
      case FieldKind::kImmediate:
      case FieldKind::kSemaphore: value = ParseNumber(token, token.text, field); break;
      case FieldKind::kFlag:
        if (token.text == "true") return 1;
        if (token.text == "false") return 0;
        value = ParseNumber(token, token.text, field);
        break;
      case FieldKind::kLocal: value = ParseLocal(token, field); break;
      case FieldKind::kRegister: {
        std::optional<uint64_t> reg = FindConfigRegisterByName(token.text);
        if (!reg)
          throw Fail(token, "unknown configuration register " + Quote(token.text) +
                                " (see docs/isa.md for the register table)");
        return *reg;
      }
      case FieldKind::kUnit:
      case FieldKind::kDtype:
      case FieldKind::kCompare:
      case FieldKind::kDataflow: return ParseSymbol(token, field);
    }
    if (auto error = FieldValueError(info, field_index, value)) throw Fail(token, *error);
    return value;
  }

  std::shared_ptr<const std::string> file_;
  uint32_t line_;
  std::string_view text_;
};

// The line without its comment (`#` or `//` to the end of the line).
std::string_view StripComment(std::string_view line) {
  size_t hash = line.find('#');
  size_t slashes = line.find("//");
  return line.substr(0, std::min(hash, slashes));
}

}  // namespace

Program Assemble(std::string_view text, const std::string& filename) {
  auto file = std::make_shared<const std::string>(filename);
  Program program;
  uint32_t line_number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t newline = text.find('\n', pos);
    if (newline == std::string_view::npos) newline = text.size();
    ++line_number;
    std::string_view line = StripComment(text.substr(pos, newline - pos));
    Instruction inst;
    if (LineAssembler(file, line_number, line).Parse(inst)) {
      program.instructions.push_back(inst);
      program.locations.push_back(hlo::SourceLocation{file, line_number, 1});
    }
    pos = newline + 1;
  }
  return program;
}

}  // namespace systolic

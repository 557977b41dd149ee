// HLO text parser: module header, computations, instructions and name resolution.
//
// Guarantees (see parser.h for the accepted syntax): the returned module has every operand and
// called computation resolved, a root in every computation, an entry computation, and
// instructions in a topological order (forward references are sorted); every error is an
// hlo::Error at the offending token. Shapes and literals: parser_shape_literal.cc; typed
// attributes: parser_attributes.cc and parser_opcode_attributes.cc.
#include <cstdio>
#include <unordered_map>

#include "hlo/parser.h"
#include "hlo/parser_internal.h"

namespace hlo {
namespace {

size_t LiteralByteSize(const Literal& literal) {
  size_t bytes = literal.bytes().size();
  for (const Literal& element : literal.elements()) bytes += LiteralByteSize(element);
  return bytes;
}

using parser_internal::ComputationRef;
using parser_internal::ParsedAttributes;
using parser_internal::RawAttribute;

constexpr std::string_view kStackFrameTableNames[] = {"FileNames", "FunctionNames",
                                                      "FileLocations", "StackFrames"};

struct PendingOperand {
  Instruction* user;
  std::string_view name;
  LexPosition pos;
};

struct PendingCalls {
  Instruction* instruction;
  std::vector<ComputationRef> refs;
};

class TextParser {
 public:
  TextParser(std::string_view text, std::string_view filename)
      : lexer_(text, std::make_shared<const std::string>(filename)) {}

  std::unique_ptr<Module> ParseModule();
  int elided_constants() const { return elided_constants_; }

 private:
  bool AtStackFrameTable();
  std::string ReadStackFrameTables();
  void ParseComputation(Module& module);
  void SkipSignature();
  void ParseComputationAttributes(Computation& computation);
  void ParseInstruction(Computation& computation, bool& saw_root);
  void ParseOperands(Instruction& instruction);
  void ResolveOperands(Computation& computation);
  void ResolveCalls(Module& module);
  bool PeekOperandShape();
  bool PeekArrayShape();

  Lexer lexer_;
  std::unique_ptr<Module> module_;
  // Per computation: instruction names in definition order and unresolved operands.
  std::unordered_map<std::string_view, std::pair<Instruction*, size_t>> names_;
  std::vector<PendingOperand> operands_;
  std::vector<PendingCalls> calls_;
  std::vector<RawAttribute> raw_attributes_;  // reused for every instruction
  std::unordered_map<std::string_view, Computation*> computations_;  // the whole module
  int elided_constants_ = 0;
  int64_t elided_constant_bytes_ = 0;
};

std::unique_ptr<Module> TextParser::ParseModule() {
  LexPosition start = (lexer_.SkipTrivia(), lexer_.position());
  std::string_view keyword = lexer_.AtEnd() ? std::string_view() : lexer_.Name("'HloModule'");
  if (keyword != "HloModule") lexer_.FailAt(start, "expected 'HloModule' at the start of the module");
  auto module = std::make_unique<Module>(std::string(lexer_.Name("the module name")));
  while (lexer_.TryConsume(',')) {
    std::string_view name = lexer_.Name("a module attribute name");
    lexer_.Expect('=', "after the module attribute name");
    RawText value = lexer_.RawValue();
    // The entry layout is derived from the entry computation when printing.
    if (name != "entry_computation_layout") {
      module->mutable_header_attributes().push_back({std::string(name), std::string(value.text)});
    }
  }
  if (AtStackFrameTable()) module->mutable_leading_tables() = ReadStackFrameTables();
  while (!lexer_.AtEnd()) {
    if (AtStackFrameTable()) {
      module->mutable_trailing_tables() = std::string(lexer_.Rest());
      break;
    }
    ParseComputation(*module);
  }
  if (module->computations().empty()) lexer_.Fail("expected at least one computation");
  if (!module->entry()) module->set_entry(module->computations().back().get());
  ResolveCalls(*module);
  return module;
}

// A stack-frame table starts here: one of the table names, not followed by what follows a
// computation's name (its body or signature).
bool TextParser::AtStackFrameTable() {
  if (!lexer_.PeekNameStart()) return false;
  Lexer probe = lexer_;
  std::string_view word = probe.Name("");
  bool is_table = false;
  for (std::string_view table : kStackFrameTableNames) is_table |= word == table;
  const char next = probe.Peek();
  return is_table && next != '{' && next != '(' && next != ',';
}

// The tables before the first computation, verbatim: each is its name on a line, then one entry
// per line, `ID {...}` or `ID "..."`. They end where a line starts otherwise (a computation).
std::string TextParser::ReadStackFrameTables() {
  lexer_.SkipTrivia();
  const size_t start = lexer_.position().offset;
  size_t end = start;
  const std::string_view input = lexer_.input();
  auto at_entry = [&] {
    size_t i = (lexer_.SkipTrivia(), lexer_.position().offset);
    const size_t digits = i;
    while (i < input.size() && input[i] >= '0' && input[i] <= '9') ++i;
    return i > digits && i + 1 < input.size() && input[i] == ' ' &&
           (input[i + 1] == '{' || input[i + 1] == '"');
  };
  while (AtStackFrameTable()) {
    lexer_.Name("a table name");
    end = lexer_.position().offset;
    while (at_entry()) {
      lexer_.SkipRestOfLine();
      end = lexer_.position().offset;
    }
  }
  std::string_view text = input.substr(start, end - start);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return std::string(text);
}

void TextParser::ParseComputation(Module& module) {
  LexPosition start = (lexer_.SkipTrivia(), lexer_.position());
  std::string_view name = lexer_.Name("a computation name or ENTRY");
  bool is_entry = false;
  if (name == "ENTRY" && lexer_.PeekNameStart()) {
    is_entry = true;
    start = (lexer_.SkipTrivia(), lexer_.position());
    name = lexer_.Name("the entry computation name");
  }
  if (computations_.count(name)) {
    lexer_.FailAt(start, "duplicate computation name '" + std::string(name) + "'");
  }
  auto computation = std::make_unique<Computation>(std::string(name));
  computation->set_location(lexer_.LocationOf(start));
  if (lexer_.Peek() == '(') SkipSignature();
  ParseComputationAttributes(*computation);  // older dumps: before the body
  lexer_.Expect('{', "to start the computation body");
  Computation* comp = module.AddComputation(std::move(computation));
  computations_.emplace(name, comp);
  if (is_entry) {
    if (module.entry()) lexer_.FailAt(start, "more than one ENTRY computation");
    module.set_entry(comp);
  }
  names_.clear();
  operands_.clear();
  bool saw_root = false;
  while (!lexer_.TryConsume('}')) {
    if (lexer_.AtEnd()) lexer_.Fail("unexpected end of input inside computation '" + std::string(name) + "'");
    ParseInstruction(*comp, saw_root);
  }
  if (comp->instructions().empty()) {
    lexer_.FailAt(start, "computation '" + std::string(name) + "' has no instructions");
  }
  if (!comp->root()) comp->set_root(comp->instructions().back().get());
  ResolveOperands(*comp);
  ParseComputationAttributes(*comp);  // `}, execution_thread="x"`
}

void TextParser::ParseComputationAttributes(Computation& computation) {
  while (lexer_.TryConsume(',')) {
    std::string_view attr = lexer_.Name("a computation attribute name");
    lexer_.Expect('=', "after the computation attribute name");
    computation.mutable_opaque_attributes().push_back(
        {std::string(attr), std::string(lexer_.RawValue().text)});
  }
}

// `(p0: f32[2], p1: s32[]) -> f32[2]`: the parameters are instructions too, so it is only checked.
void TextParser::SkipSignature() {
  lexer_.Expect('(', "");
  if (!lexer_.TryConsume(')')) {
    do {
      lexer_.Name("a parameter name");
      lexer_.Expect(':', "after the parameter name");
      parser_internal::ParseShape(lexer_);
    } while (lexer_.TryConsume(','));
    lexer_.Expect(')', "to close the computation parameters");
  }
  lexer_.Expect("->", "before the computation result shape");
  parser_internal::ParseShape(lexer_);
}

void TextParser::ParseInstruction(Computation& computation, bool& saw_root) {
  LexPosition start = (lexer_.SkipTrivia(), lexer_.position());
  std::string_view name = lexer_.Name("an instruction name");
  bool is_root = false;
  if (name == "ROOT" && lexer_.PeekNameStart()) {
    is_root = true;
    start = (lexer_.SkipTrivia(), lexer_.position());
    name = lexer_.Name("the root instruction name");
  }
  lexer_.Expect('=', "after the instruction name");
  Shape shape = parser_internal::ParseShape(lexer_);
  LexPosition opcode_pos = (lexer_.SkipTrivia(), lexer_.position());
  std::string_view opcode_name = lexer_.Name("an opcode");
  std::optional<Opcode> opcode = OpcodeFromName(opcode_name);
  if (!opcode) lexer_.FailAt(opcode_pos, "unknown opcode '" + std::string(opcode_name) + "'");
  auto owned = std::make_unique<Instruction>(std::string(name), *opcode, std::move(shape));
  Instruction& instruction = *owned;
  instruction.set_location(lexer_.LocationOf(start));

  lexer_.Expect('(', "after the opcode");
  if (*opcode == Opcode::kParameter) {
    LexPosition pos = (lexer_.SkipTrivia(), lexer_.position());
    int64_t number = lexer_.Integer("a parameter number");
    if (number < 0 || number >= (int64_t{1} << 20)) lexer_.FailAt(pos, "parameter number out of range");
    instruction.set_attrs(ParameterAttrs{number});
  } else if (*opcode == Opcode::kConstant) {
    // Early dumps spelled the shape again inside: `constant(f32[2] {1, 2})`.
    if (PeekArrayShape()) parser_internal::ParseShape(lexer_);
    bool elided = false;
    Literal literal = parser_internal::ParseConstantLiteral(lexer_, instruction.shape(), name, elided);
    if (elided) {
      ++elided_constants_;
      elided_constant_bytes_ += static_cast<int64_t>(LiteralByteSize(literal));
      if (elided_constant_bytes_ > GlobalLimits().max_elided_constant_bytes_per_module) {
        throw Error(instruction.location(),
                    "elided constants of this module need more than " +
                        std::to_string(GlobalLimits().max_elided_constant_bytes_per_module) +
                        " bytes in total (the limit for constant({...}))");
      }
    }
    instruction.set_attrs(ConstantAttrs{std::move(literal), elided});
  } else {
    ParseOperands(instruction);
  }
  lexer_.Expect(')', "to close the operand list");

  raw_attributes_.clear();
  while (lexer_.TryConsume(',')) {
    LexPosition name_pos = (lexer_.SkipTrivia(), lexer_.position());
    std::string_view attr = lexer_.Name("an attribute name");
    lexer_.Expect('=', "after the attribute name");
    raw_attributes_.push_back({attr, name_pos, lexer_.RawValue()});
  }
  ParsedAttributes parsed;
  parser_internal::ParseInstructionAttributes(lexer_, *opcode, opcode_pos, raw_attributes_, parsed);
  if (*opcode != Opcode::kParameter && *opcode != Opcode::kConstant) {
    instruction.set_attrs(std::move(parsed.attrs));
  }
  instruction.mutable_opaque_attributes() = std::move(parsed.opaque);
  if (!parsed.called.empty()) calls_.push_back({&instruction, std::move(parsed.called)});

  if (!names_.emplace(name, std::make_pair(&instruction, computation.instructions().size())).second) {
    lexer_.FailAt(start, "duplicate instruction name '" + std::string(name) + "'");
  }
  if (is_root) {
    if (saw_root) lexer_.FailAt(start, "more than one ROOT instruction");
    saw_root = true;
  }
  computation.AddInstruction(std::move(owned));
  if (is_root) computation.set_root(&instruction);
}

// After trivia: does an operand start with its shape (`f32[2]{0} %a`, `(f32[], s32[]) %t`)?
bool TextParser::PeekOperandShape() { return lexer_.Peek() == '(' || PeekArrayShape(); }

// After trivia: does an array shape (`f32[`) start here?
bool TextParser::PeekArrayShape() {
  lexer_.SkipTrivia();
  size_t i = 0;
  while (true) {
    char d = lexer_.PeekAt(i);
    bool name_char = (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9');
    if (!name_char) return d == '[' && i > 0;
    ++i;
  }
}

void TextParser::ParseOperands(Instruction& instruction) {
  if (lexer_.Peek() == ')') return;
  do {
    if (PeekOperandShape()) parser_internal::ParseShape(lexer_);  // redundant with the definition
    LexPosition pos = (lexer_.SkipTrivia(), lexer_.position());
    std::string_view name = lexer_.Name("an operand name");
    operands_.push_back({&instruction, name, pos});
  } while (lexer_.TryConsume(','));
}

void TextParser::ResolveOperands(Computation& computation) {
  bool forward_reference = false;
  size_t user_index = 0;
  Instruction* previous_user = nullptr;
  for (const PendingOperand& op : operands_) {
    auto it = names_.find(op.name);
    if (it == names_.end()) {
      lexer_.FailAt(op.pos, "use of undefined instruction '" + std::string(op.name) + "'");
    }
    if (op.user != previous_user) {
      previous_user = op.user;
      user_index = names_.at(op.user->name()).second;
    }
    forward_reference |= it->second.second >= user_index;
    op.user->AppendOperand(it->second.first);
  }
  if (forward_reference) computation.SortTopologically();
}

void TextParser::ResolveCalls(Module& module) {
  for (PendingCalls& pending : calls_) {
    for (const ComputationRef& ref : pending.refs) {
      auto it = computations_.find(ref.name);
      if (it == computations_.end()) {
        lexer_.FailAt(ref.pos, "use of undefined computation '" + std::string(ref.name) + "'");
      }
      pending.instruction->mutable_called_computations().push_back(it->second);
    }
  }
}

}  // namespace

std::unique_ptr<Module> ParseHloText(std::string_view text, std::string_view filename,
                                     const ParseOptions& options) {
  TextParser parser(text, filename);
  std::unique_ptr<Module> module = parser.ParseModule();
  if (parser.elided_constants() > 0) {
    std::string message = std::to_string(parser.elided_constants()) +
                          " constant(s) have elided values ({...}); filled deterministically";
    if (options.warn) {
      options.warn(message);
    } else {
      std::fprintf(stderr, "%.*s: warning: %s\n", static_cast<int>(filename.size()), filename.data(),
                   message.c_str());
    }
  }
  return module;
}

}  // namespace hlo

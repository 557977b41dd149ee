// Packs and unpacks instructions per isa.def's field table, and reads/writes the .bin format.
// The bit layout is derived from the table alone (FieldInfo::lsb), so adding an instruction or a
// field needs no change here.
#include "simulator/isa/encoding.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace systolic {
namespace {

std::string InstructionPrefix(int64_t index) {
  return index < 0 ? std::string() : "instruction #" + std::to_string(index) + ": ";
}

// Bits [lsb, lsb + bits) of a 128-bit word (bits <= 64); a field may straddle the two halves.
uint64_t ExtractBits(const Word& word, int lsb, int bits) {
  uint64_t value = 0;
  for (int i = 0; i < bits; ++i) {
    int bit = lsb + i;
    value |= ((word[bit / 64] >> (bit % 64)) & 1u) << i;
  }
  return value;
}

// Whether any bit at or above `lsb` is set (the reserved tail of a word; may exceed 64 bits).
bool AnyBitSetFrom(const Word& word, int lsb) {
  for (int bit = lsb; bit < kWordBits; ++bit)
    if ((word[bit / 64] >> (bit % 64)) & 1u) return true;
  return false;
}

void InsertBits(Word& word, int lsb, int bits, uint64_t value) {
  for (int i = 0; i < bits; ++i) {
    int bit = lsb + i;
    if ((value >> i) & 1u) word[bit / 64] |= uint64_t{1} << (bit % 64);
  }
}

std::string JoinSymbols(std::span<const SymbolInfo> symbols) {
  std::string out;
  for (const SymbolInfo& s : symbols) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

uint32_t ReadLe(std::string_view bytes, size_t offset, size_t size) {
  uint32_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
  return value;
}

void AppendLe(std::string& out, uint64_t value, size_t size) {
  for (size_t i = 0; i < size; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

std::optional<std::string> FieldValueError(const InstrInfo& info, size_t field, uint64_t value) {
  const FieldInfo& f = info.fields[field];
  // Built only for an error: this runs for every field of every instruction encoded.
  auto where = [&] {
    return "field '" + std::string(f.name) + "' of '" + std::string(info.mnemonic) + "'";
  };
  if (value > f.max_value())
    return where() + " is " + std::to_string(value) + ", which does not fit in " +
           std::to_string(f.bits) + " bits (max " + std::to_string(f.max_value()) + ")";
  std::span<const SymbolInfo> symbols = SymbolsOf(f.kind);
  if (!symbols.empty() && value >= symbols.size())
    return where() + " is " + std::to_string(value) + ", which is not a " +
           std::string(FieldKindName(f.kind)) + " (valid: " + JoinSymbols(symbols) + ")";
  if (f.kind == FieldKind::kRegister && FindConfigRegister(value) == nullptr)
    return where() + " is " + std::to_string(value) + ", which is not a configuration register";
  return std::nullopt;
}

Word Encode(const Instruction& inst, int64_t index) {
  const InstrInfo& info = GetInstrInfo(inst.opcode);
  Word word{static_cast<uint64_t>(inst.opcode), 0};
  for (size_t i = 0; i < info.fields.size(); ++i) {
    if (auto error = FieldValueError(info, i, inst.fields[i]))
      throw hlo::Error(InstructionPrefix(index) + *error);
    InsertBits(word, info.fields[i].lsb, info.fields[i].bits, inst.fields[i]);
  }
  // Entries past the instruction's fields must stay zero, or two "equal" instructions could
  // differ (Instruction::operator== compares all entries).
  for (size_t i = info.fields.size(); i < kMaxFields; ++i)
    if (inst.fields[i] != 0)
      throw hlo::Error(InstructionPrefix(index) + "'" + std::string(info.mnemonic) + "' has " +
                       std::to_string(info.fields.size()) + " fields, but operand " +
                       std::to_string(i) + " is set");
  return word;
}

Instruction Decode(const Word& word, int64_t index) {
  uint8_t opcode = static_cast<uint8_t>(word[0] & 0xff);
  const InstrInfo* info = FindInstruction(opcode);
  if (info == nullptr) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", opcode);
    throw hlo::Error(InstructionPrefix(index) + "unknown opcode " + hex);
  }
  int used = info->used_bits();
  if (AnyBitSetFrom(word, used))
    throw hlo::Error(InstructionPrefix(index) + "reserved bits " + std::to_string(used) + ".." +
                     std::to_string(kWordBits - 1) + " of a '" + std::string(info->mnemonic) +
                     "' word are not zero");
  Instruction inst = MakeInstruction(info->opcode);
  for (size_t i = 0; i < info->fields.size(); ++i) {
    inst.fields[i] = ExtractBits(word, info->fields[i].lsb, info->fields[i].bits);
    if (auto error = FieldValueError(*info, i, inst.fields[i]))
      throw hlo::Error(InstructionPrefix(index) + "illegal encoding: " + *error);
  }
  return inst;
}

std::string WriteBinary(const Program& program) {
  if (program.instructions.size() > UINT32_MAX)
    throw hlo::Error("program has more than 2^32-1 instructions");
  std::string out(kBinaryMagic, sizeof kBinaryMagic);
  AppendLe(out, kBinaryVersion, 2);
  AppendLe(out, 0, 2);
  AppendLe(out, program.instructions.size(), 4);
  AppendLe(out, 0, 4);
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    Word word = Encode(program.instructions[i], static_cast<int64_t>(i));
    AppendLe(out, word[0], 8);
    AppendLe(out, word[1], 8);
  }
  return out;
}

Program ReadBinary(std::string_view bytes, const std::string& filename) {
  auto file = std::make_shared<const std::string>(filename);
  auto at = [&](size_t offset) {
    return hlo::SourceLocation{file, 0, static_cast<uint32_t>(offset + 1)};
  };
  if (bytes.size() < kBinaryHeaderBytes)
    throw hlo::Error(at(0), "truncated header: " + std::to_string(bytes.size()) +
                                " bytes, a .bin program starts with a 16-byte header");
  if (std::memcmp(bytes.data(), kBinaryMagic, sizeof kBinaryMagic) != 0)
    throw hlo::Error(at(0), "bad magic: not a systolic .bin program (expected \"SYSA\")");
  uint32_t version = ReadLe(bytes, 4, 2);
  if (version != kBinaryVersion)
    throw hlo::Error(at(4), "unsupported .bin version " + std::to_string(version) +
                                " (this build reads version " + std::to_string(kBinaryVersion) +
                                ")");
  if (ReadLe(bytes, 6, 2) != 0 || ReadLe(bytes, 12, 4) != 0)
    throw hlo::Error(at(6), "reserved header bytes are not zero");
  uint64_t count = ReadLe(bytes, 8, 4);
  uint64_t payload = bytes.size() - kBinaryHeaderBytes;
  // Check the size before allocating: the count alone must not drive an allocation.
  if (payload < count * kWordBytes)
    throw hlo::Error(at(kBinaryHeaderBytes + payload / kWordBytes * kWordBytes),
                     "truncated file: instruction #" + std::to_string(payload / kWordBytes) +
                         " is incomplete (header says " + std::to_string(count) +
                         " instructions, file holds " + std::to_string(payload) +
                         " bytes of words)");
  if (payload > count * kWordBytes)
    throw hlo::Error(at(kBinaryHeaderBytes + count * kWordBytes),
                     std::to_string(payload - count * kWordBytes) + " trailing bytes after the " +
                         std::to_string(count) + " instructions the header declares");
  Program program;
  program.instructions.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    size_t offset = kBinaryHeaderBytes + i * kWordBytes;
    Word word{};
    for (size_t half = 0; half < 2; ++half)
      for (size_t b = 0; b < 8; ++b)
        word[half] |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[offset + half * 8 + b]))
                      << (8 * b);
    try {
      program.instructions.push_back(Decode(word, static_cast<int64_t>(i)));
    } catch (const hlo::Error& e) {
      throw hlo::Error(at(offset), e.message());
    }
  }
  return program;
}

}  // namespace systolic

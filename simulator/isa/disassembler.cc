// Formats instructions as canonical .sasm text, driven by the field table of isa.def.
#include "simulator/isa/disassembler.h"

#include <cstdio>

namespace systolic {
namespace {

std::string Hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

std::string FormatFieldValue(const FieldInfo& field, uint64_t value) {
  switch (field.kind) {
    case FieldKind::kAddress: return Hex(value);
    case FieldKind::kLocal:
      if (value >= (kAccumulatorBit << 1)) return Hex(value);  // out of range: raw, rejected later
      return (value & kAccumulatorBit ? "acc:" : "ub:") + Hex(value & ~kAccumulatorBit);
    case FieldKind::kImmediate:
    case FieldKind::kFlag:
    case FieldKind::kSemaphore: return std::to_string(value);
    case FieldKind::kRegister:
      if (const SymbolInfo* reg = FindConfigRegister(value)) return std::string(reg->name);
      return std::to_string(value);
    case FieldKind::kUnit:
    case FieldKind::kDtype:
    case FieldKind::kCompare:
    case FieldKind::kDataflow: {
      std::span<const SymbolInfo> symbols = SymbolsOf(field.kind);
      if (value < symbols.size()) return std::string(symbols[value].name);
      return std::to_string(value);
    }
  }
  return std::to_string(value);
}

std::string FormatInstruction(const Instruction& inst) {
  const InstrInfo& info = GetInstrInfo(inst.opcode);
  std::string out(info.mnemonic);
  for (size_t i = 0; i < info.fields.size(); ++i) {
    out += i == 0 ? " " : ", ";
    out +=
        std::string(info.fields[i].name) + "=" + FormatFieldValue(info.fields[i], inst.fields[i]);
  }
  return out;
}

std::string Disassemble(const Program& program) {
  std::string out;
  for (const Instruction& inst : program.instructions) out += FormatInstruction(inst) + "\n";
  return out;
}

}  // namespace systolic

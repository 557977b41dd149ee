// Builds the ISA tables of isa.h from isa.def and checks the table's invariants at compile time:
// unique opcodes and mnemonics, unique field names per instruction, every instruction fits its
// 128-bit word, and no instruction has more fields than Instruction can hold.
#include "simulator/isa/isa.h"

#include <algorithm>

namespace systolic {
namespace {

// Assigns each field its first bit: fields are packed upwards from just above the opcode.
template <size_t N>
constexpr std::array<FieldInfo, N - 1> PackFields(std::array<FieldInfo, N> with_sentinel) {
  std::array<FieldInfo, N - 1> fields{};
  int lsb = kOpcodeBits;
  for (size_t i = 1; i < N; ++i) {
    fields[i - 1] = with_sentinel[i];
    fields[i - 1].lsb = lsb;
    lsb += with_sentinel[i].bits;
  }
  return fields;
}

template <size_t N>
constexpr int UsedBits(const std::array<FieldInfo, N>& fields) {
  int bits = kOpcodeBits;
  for (const FieldInfo& f : fields) bits += f.bits;
  return bits;
}

template <size_t N>
constexpr bool FieldNamesUnique(const std::array<FieldInfo, N>& fields) {
  for (size_t i = 0; i < N; ++i)
    for (size_t j = i + 1; j < N; ++j)
      if (fields[i].name == fields[j].name) return false;
  return true;
}

template <size_t N>
constexpr bool FieldWidthsValid(const std::array<FieldInfo, N>& fields) {
  for (const FieldInfo& f : fields)
    if (f.bits < 1 || f.bits > 64) return false;
  return true;
}

// The leading sentinel lets an instruction have no fields (std::array deduction needs one element).
constexpr FieldInfo kSentinel{"", 0, FieldKind::kImmediate, ""};

#define ISA_FIELD(name, bits, kind, doc) , FieldInfo{#name, bits, FieldKind::k##kind, doc}
#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...)                                    \
  constexpr auto k##id##Fields = PackFields(std::array{kSentinel __VA_ARGS__});               \
  static_assert(UsedBits(k##id##Fields) <= kWordBits, mnemonic " does not fit 128 bits");     \
  static_assert(k##id##Fields.size() <= kMaxFields, mnemonic " has too many fields");         \
  static_assert(FieldNamesUnique(k##id##Fields), mnemonic " repeats a field name");           \
  static_assert(FieldWidthsValid(k##id##Fields), mnemonic " has a field wider than 64 bits");
#include "simulator/isa/isa.def"

constexpr InstrInfo kInstructions[] = {
#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...) \
  {Opcode::k##id, mnemonic, Unit::unit, summary, std::span<const FieldInfo>(k##id##Fields)},
#include "simulator/isa/isa.def"
};

constexpr bool OpcodesAndMnemonicsUnique() {
  for (size_t i = 0; i < std::size(kInstructions); ++i)
    for (size_t j = i + 1; j < std::size(kInstructions); ++j)
      if (kInstructions[i].opcode == kInstructions[j].opcode ||
          kInstructions[i].mnemonic == kInstructions[j].mnemonic)
        return false;
  return true;
}
static_assert(OpcodesAndMnemonicsUnique(), "isa.def repeats an opcode or a mnemonic");

constexpr SymbolInfo kUnits[] = {
#define ISA_UNIT(id, name, doc) {name, doc},
#include "simulator/isa/isa.def"
};
constexpr SymbolInfo kDtypes[] = {
#define ISA_DTYPE(id, name, bytes, doc) {name, doc},
#include "simulator/isa/isa.def"
};
constexpr int kDtypeBytes[] = {
#define ISA_DTYPE(id, name, bytes, doc) bytes,
#include "simulator/isa/isa.def"
};
constexpr SymbolInfo kCompares[] = {
#define ISA_COMPARE(id, name) {name, ""},
#include "simulator/isa/isa.def"
};
constexpr SymbolInfo kDataflows[] = {
#define ISA_DATAFLOW(id, name, doc) {name, doc},
#include "simulator/isa/isa.def"
};

struct ConfigRegisterRow {
  uint64_t index;
  SymbolInfo symbol;
  Unit owner;
};
constexpr ConfigRegisterRow kConfigRegisters[] = {
#define ISA_CONFIG_REG(id, name, index, unit, doc) {index, {name, doc}, Unit::unit},
#include "simulator/isa/isa.def"
};
constexpr ConfigRegister kConfigRegisterIds[] = {
#define ISA_CONFIG_REG(id, name, index, unit, doc) ConfigRegister::id,
#include "simulator/isa/isa.def"
};

// The symbol tables must fit the widths of the fields that name them.
static_assert(std::size(kUnits) <= 8 && std::size(kDtypes) <= 16 && std::size(kCompares) <= 8 &&
              std::size(kDataflows) <= 4);
static_assert(std::size(kConfigRegisters) <= 32);

}  // namespace

int InstrInfo::used_bits() const {
  int bits = kOpcodeBits;
  for (const FieldInfo& f : fields) bits += f.bits;
  return bits;
}

void Instruction::CheckFamily(Opcode expected) const {
  if (opcode != expected)
    throw hlo::Error("internal: reading a '" + std::string(GetInstrInfo(expected).mnemonic) +
                     "' field of a '" + std::string(GetInstrInfo(opcode).mnemonic) +
                     "' instruction");
}

std::span<const InstrInfo> AllInstructions() { return kInstructions; }

const InstrInfo* FindInstruction(uint8_t opcode) {
  for (const InstrInfo& info : kInstructions)
    if (static_cast<uint8_t>(info.opcode) == opcode) return &info;
  return nullptr;
}

const InstrInfo& GetInstrInfo(Opcode opcode) {
  // Every Opcode enumerator comes from the table, so the lookup cannot fail for a valid enum;
  // a value cast from raw bits is reported rather than dereferenced.
  const InstrInfo* info = FindInstruction(static_cast<uint8_t>(opcode));
  if (info == nullptr)
    throw hlo::Error("internal: opcode " + std::to_string(static_cast<int>(opcode)) +
                     " is not in isa.def");
  return *info;
}

const InstrInfo* FindMnemonic(std::string_view mnemonic) {
  for (const InstrInfo& info : kInstructions)
    if (info.mnemonic == mnemonic) return &info;
  return nullptr;
}

std::optional<int> FindField(const InstrInfo& info, std::string_view name) {
  for (size_t i = 0; i < info.fields.size(); ++i)
    if (info.fields[i].name == name) return static_cast<int>(i);
  return std::nullopt;
}

std::span<const SymbolInfo> UnitSymbols() { return kUnits; }
std::span<const SymbolInfo> DtypeSymbols() { return kDtypes; }
std::span<const SymbolInfo> CompareSymbols() { return kCompares; }
std::span<const SymbolInfo> DataflowSymbols() { return kDataflows; }

std::span<const ConfigRegister> AllConfigRegisters() { return kConfigRegisterIds; }

const SymbolInfo* FindConfigRegister(uint64_t index) {
  for (const ConfigRegisterRow& row : kConfigRegisters)
    if (row.index == index) return &row.symbol;
  return nullptr;
}

std::optional<uint64_t> FindConfigRegisterByName(std::string_view name) {
  for (const ConfigRegisterRow& row : kConfigRegisters)
    if (row.symbol.name == name) return row.index;
  return std::nullopt;
}

Unit ConfigRegisterOwner(ConfigRegister reg) {
  for (const ConfigRegisterRow& row : kConfigRegisters)
    if (row.index == static_cast<uint64_t>(reg)) return row.owner;
  throw hlo::Error("internal: config register " + std::to_string(static_cast<int>(reg)) +
                   " is not in isa.def");
}

std::span<const SymbolInfo> SymbolsOf(FieldKind kind) {
  switch (kind) {
    case FieldKind::kUnit: return kUnits;
    case FieldKind::kDtype: return kDtypes;
    case FieldKind::kCompare: return kCompares;
    case FieldKind::kDataflow: return kDataflows;
    case FieldKind::kAddress:
    case FieldKind::kLocal:
    case FieldKind::kImmediate:
    case FieldKind::kFlag:
    case FieldKind::kSemaphore:
    case FieldKind::kRegister:  // sparse: see FindConfigRegister
      return {};
  }
  return {};
}

std::string_view FieldKindName(FieldKind kind) {
  switch (kind) {
    case FieldKind::kAddress: return "address";
    case FieldKind::kLocal: return "local address";
    case FieldKind::kImmediate: return "immediate";
    case FieldKind::kFlag: return "flag";
    case FieldKind::kUnit: return "unit";
    case FieldKind::kSemaphore: return "semaphore";
    case FieldKind::kRegister: return "register";
    case FieldKind::kDtype: return "dtype";
    case FieldKind::kCompare: return "compare";
    case FieldKind::kDataflow: return "dataflow";
  }
  return "?";
}

std::string_view UnitName(Unit unit) { return kUnits[static_cast<size_t>(unit)].name; }
std::string_view DtypeName(Dtype dtype) { return kDtypes[static_cast<size_t>(dtype)].name; }
int DtypeBytes(Dtype dtype) { return kDtypeBytes[static_cast<size_t>(dtype)]; }
std::string_view DataflowName(Dataflow dataflow) {
  return kDataflows[static_cast<size_t>(dataflow)].name;
}
std::string_view CompareName(CompareDirection direction) {
  return kCompares[static_cast<size_t>(direction)].name;
}

Unit ExecutingUnit(const Instruction& inst) {
  if (inst.opcode == Opcode::kSemSignal) return static_cast<Unit>(inst.get(SemSignalField::unit));
  if (inst.opcode == Opcode::kSemWait) return static_cast<Unit>(inst.get(SemWaitField::unit));
  if (inst.opcode == Opcode::kCfgSet)
    return ConfigRegisterOwner(static_cast<ConfigRegister>(inst.get(CfgSetField::reg)));
  if (inst.opcode == Opcode::kCfgLoad)
    return ConfigRegisterOwner(static_cast<ConfigRegister>(inst.get(CfgLoadField::reg)));
  return GetInstrInfo(inst.opcode).unit;
}

Instruction MakeInstruction(Opcode opcode) {
  Instruction inst;
  inst.opcode = opcode;
  return inst;
}

}  // namespace systolic

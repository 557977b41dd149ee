// The systolic accelerator's ISA, generated from isa.def: opcodes, units, operand fields and the
// symbolic values of enum-like fields. Everything else (encoder, decoder, assembler,
// disassembler, the simulator's dispatch, the lowering) reads these tables, so they cannot drift.
//
// Guarantees:
//  - Opcode values are those of isa.def; every instruction's fields fit in the 120 bits above
//    the 8-bit opcode of a 128-bit word (checked at compile time in isa.cc).
//  - An Instruction holds one raw uint64 per field, in table order. Building one does not check
//    ranges; Encode() (encoding.h) and the assembler do, naming the offending field.
//  - Typed access: `inst.get(DmaLoadField::rows)` reads a field by name, checked at compile time
//    to belong to the instruction family and at run time to match inst.opcode.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/diagnostic.h"

namespace systolic {

inline constexpr int kWordBits = 128;
inline constexpr int kOpcodeBits = 8;
// Local addresses (FieldKind::kLocal): bit 25 set selects the accumulator memory, clear the
// unified buffer; the low 25 bits are the byte offset in that memory (32 MiB each at most).
inline constexpr int kLocalAddressBits = 26;
inline constexpr uint64_t kAccumulatorBit = uint64_t{1} << (kLocalAddressBits - 1);

enum class Unit : uint8_t {
#define ISA_UNIT(id, name, doc) id,
#include "simulator/isa/isa.def"
};
enum class Dtype : uint8_t {
#define ISA_DTYPE(id, name, bytes, doc) id,
#include "simulator/isa/isa.def"
};
enum class CompareDirection : uint8_t {
#define ISA_COMPARE(id, name) id,
#include "simulator/isa/isa.def"
};
enum class Dataflow : uint8_t {
#define ISA_DATAFLOW(id, name, doc) id,
#include "simulator/isa/isa.def"
};
enum class ConfigRegister : uint8_t {
#define ISA_CONFIG_REG(id, name, index, unit, doc) id = index,
#include "simulator/isa/isa.def"
};

// Opcode enumerators are k<Id>; their values are the 8-bit opcodes of the table.
enum class Opcode : uint8_t {
#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...) k##id = opcode,
#include "simulator/isa/isa.def"
};

enum class FieldKind : uint8_t {
  kAddress,    // DRAM byte address
  kLocal,      // unified buffer / accumulator byte address (see kAccumulatorBit)
  kImmediate,  // unsigned integer
  kFlag,       // 0 or 1
  kUnit,       // a Unit
  kSemaphore,  // semaphore index
  kRegister,   // a ConfigRegister
  kDtype,      // a Dtype
  kCompare,    // a CompareDirection
  kDataflow,   // a Dataflow
};

// Counts the table fixes, for arrays indexed by them (the simulator's units and semaphores):
// a new ISA_UNIT row or a wider `sem` field changes them here and nowhere else.
inline constexpr size_t kUnitCount = 0
#define ISA_UNIT(id, name, doc) +1
#include "simulator/isa/isa.def"
    ;
inline constexpr int kSemaphoreFieldBits = std::max({0
#define ISA_FIELD(name, bits, kind, doc) , (FieldKind::k##kind == FieldKind::kSemaphore ? bits : 0)
#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...) __VA_ARGS__
#include "simulator/isa/isa.def"
});
inline constexpr size_t kSemaphoreCount = size_t{1} << kSemaphoreFieldBits;
static_assert(kSemaphoreFieldBits > 0, "isa.def: no Semaphore field");

struct FieldInfo {
  std::string_view name;
  int bits;
  FieldKind kind;
  std::string_view doc;
  int lsb = 0;  // first bit in the 128-bit word; filled in by the table builder
  uint64_t max_value() const { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
};

struct InstrInfo {
  Opcode opcode;
  std::string_view mnemonic;
  Unit unit;
  std::string_view summary;
  std::span<const FieldInfo> fields;
  int used_bits() const;  // opcode + fields; the rest of the word is reserved (zero)
};

// Named symbols of enum-like fields, indexed by value.
struct SymbolInfo {
  std::string_view name;
  std::string_view doc;
};

// Per-instruction field-index enums, e.g. DmaLoadField::rows, for typed access by the simulator
// and the lowering (their values are indices into InstrInfo::fields / Instruction::fields).
#define ISA_FIELD(name, bits, kind, doc) name,
#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...) \
  enum class id##Field : uint8_t { __VA_ARGS__ };
#include "simulator/isa/isa.def"

// Maps a field-index enum to its opcode (used by Instruction::get to check the family).
template <class FieldEnum>
struct FieldEnumOpcode;
#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...) \
  template <>                                               \
  struct FieldEnumOpcode<id##Field> {                       \
    static constexpr Opcode value = Opcode::k##id;          \
  };
#include "simulator/isa/isa.def"

inline constexpr size_t kMaxFields = 12;

struct Instruction {
  Opcode opcode = Opcode::kNop;
  std::array<uint64_t, kMaxFields> fields{};  // table order; unused entries stay 0

  template <class FieldEnum>
  uint64_t get(FieldEnum field) const {
    CheckFamily(FieldEnumOpcode<FieldEnum>::value);
    return fields[static_cast<size_t>(field)];
  }
  template <class FieldEnum>
  void set(FieldEnum field, uint64_t value) {
    CheckFamily(FieldEnumOpcode<FieldEnum>::value);
    fields[static_cast<size_t>(field)] = value;
  }
  bool operator==(const Instruction&) const = default;

 private:
  void CheckFamily(Opcode expected) const;  // throws hlo::Error on a mismatch
};

// A program: instructions in program order, plus (when it came from .sasm text) the source
// location of each, so the simulator can report errors at the line that caused them.
struct Program {
  std::vector<Instruction> instructions;
  std::vector<hlo::SourceLocation> locations;  // empty, or one per instruction
};

// ---- table queries ----
std::span<const InstrInfo> AllInstructions();              // in table order
const InstrInfo* FindInstruction(uint8_t opcode);          // nullptr if unassigned
const InstrInfo& GetInstrInfo(Opcode opcode);
const InstrInfo* FindMnemonic(std::string_view mnemonic);  // nullptr if unknown
std::optional<int> FindField(const InstrInfo& info, std::string_view name);

std::span<const SymbolInfo> UnitSymbols();
std::span<const SymbolInfo> DtypeSymbols();
std::span<const SymbolInfo> CompareSymbols();
std::span<const SymbolInfo> DataflowSymbols();
// Every config register, in table order.
std::span<const ConfigRegister> AllConfigRegisters();
// Config registers are sparse in principle: index -> name, or nullptr if unassigned.
const SymbolInfo* FindConfigRegister(uint64_t index);
std::optional<uint64_t> FindConfigRegisterByName(std::string_view name);
Unit ConfigRegisterOwner(ConfigRegister reg);
// The symbols of an enum-like field kind; empty for numeric kinds (address, immediate, ...).
std::span<const SymbolInfo> SymbolsOf(FieldKind kind);
std::string_view FieldKindName(FieldKind kind);

std::string_view UnitName(Unit unit);
std::string_view DtypeName(Dtype dtype);
int DtypeBytes(Dtype dtype);
std::string_view DataflowName(Dataflow dataflow);
std::string_view CompareName(CompareDirection direction);

// The unit whose queue executes `inst`: the table's unit, except that sem.signal/sem.wait run on
// the unit named by their `unit` field and cfg.set / cfg.load on the owner of its register (so
// they are ordered with that unit's other instructions). Throws hlo::Error on an unassigned
// register.
Unit ExecutingUnit(const Instruction& inst);

// Makes an Instruction with all fields zero (callers set them by name or index).
Instruction MakeInstruction(Opcode opcode);

}  // namespace systolic

// Table-driven tests of the ISA: every instruction of isa.def round-trips text -> program ->
// binary -> program -> text with zero, maximal and pseudo-random field values, each field lands
// in exactly its own bits, and the typed field accessors check the instruction family.
#include <gtest/gtest.h>

#include <bit>

#include "simulator/isa/assembler.h"
#include "simulator/isa/disassembler.h"
#include "simulator/isa/encoding.h"
#include "simulator/isa/isa.h"

namespace systolic {
namespace {

// The largest legal value of a field, derived from its kind (not from the encoder's checks).
uint64_t LargestLegal(const FieldInfo& f) {
  switch (f.kind) {
    case FieldKind::kUnit: return UnitSymbols().size() - 1;
    case FieldKind::kDtype: return DtypeSymbols().size() - 1;
    case FieldKind::kCompare: return CompareSymbols().size() - 1;
    case FieldKind::kDataflow: return DataflowSymbols().size() - 1;
    case FieldKind::kRegister: {
      uint64_t last = 0;
      for (uint64_t i = 0; i < 32; ++i)
        if (FindConfigRegister(i)) last = i;
      return last;
    }
    case FieldKind::kAddress:
    case FieldKind::kLocal:
    case FieldKind::kImmediate:
    case FieldKind::kFlag:
    case FieldKind::kSemaphore: return f.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << f.bits) - 1;
  }
  return 0;
}

enum class Pattern { kZero, kMax, kRandom };

Instruction Sample(const InstrInfo& info, Pattern pattern, uint64_t& seed) {
  Instruction inst = MakeInstruction(info.opcode);
  for (size_t i = 0; i < info.fields.size(); ++i) {
    uint64_t largest = LargestLegal(info.fields[i]);
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
    switch (pattern) {
      case Pattern::kZero: inst.fields[i] = 0; break;
      case Pattern::kMax: inst.fields[i] = largest; break;
      case Pattern::kRandom: inst.fields[i] = (seed >> 11) % (largest + 1); break;
    }
  }
  return inst;
}

TEST(IsaTable, EveryInstructionRoundTripsTextAndBinary) {
  uint64_t seed = 42;
  Program program;
  for (const InstrInfo& info : AllInstructions()) {
    for (Pattern p : {Pattern::kZero, Pattern::kMax, Pattern::kRandom, Pattern::kRandom}) {
      Instruction inst = Sample(info, p, seed);
      std::string text = FormatInstruction(inst);
      SCOPED_TRACE(text);
      Program assembled = Assemble(text, "gen.sasm");
      ASSERT_EQ(assembled.instructions.size(), 1u);
      EXPECT_EQ(assembled.instructions[0], inst);
      EXPECT_EQ(Decode(Encode(inst)), inst);
      program.instructions.push_back(inst);
    }
  }
  std::string text = Disassemble(program);
  Program from_binary = ReadBinary(WriteBinary(program), "gen.bin");
  EXPECT_EQ(from_binary.instructions, program.instructions);
  EXPECT_EQ(Disassemble(from_binary), text);
  EXPECT_EQ(Disassemble(Assemble(text, "gen.sasm")), text);
}

TEST(IsaTable, EachFieldOccupiesExactlyItsBits) {
  for (const InstrInfo& info : AllInstructions()) {
    int expected_lsb = kOpcodeBits;
    for (size_t i = 0; i < info.fields.size(); ++i) {
      const FieldInfo& f = info.fields[i];
      SCOPED_TRACE(std::string(info.mnemonic) + "." + std::string(f.name));
      EXPECT_EQ(f.lsb, expected_lsb);
      expected_lsb += f.bits;
      if (f.kind != FieldKind::kAddress && f.kind != FieldKind::kLocal &&
          f.kind != FieldKind::kImmediate && f.kind != FieldKind::kFlag &&
          f.kind != FieldKind::kSemaphore)
        continue;  // symbol fields cannot hold all-ones
      Instruction inst = MakeInstruction(info.opcode);
      inst.fields[i] = (f.bits == 64) ? ~uint64_t{0} : (uint64_t{1} << f.bits) - 1;
      Word word = Encode(inst);
      // Remove the opcode; what remains must be exactly bits [lsb, lsb + bits).
      word[0] &= ~uint64_t{0xff};
      EXPECT_EQ(std::popcount(word[0]) + std::popcount(word[1]), f.bits);
      for (int bit = 0; bit < kWordBits; ++bit) {
        bool set = (word[bit / 64] >> (bit % 64)) & 1;
        EXPECT_EQ(set, bit >= f.lsb && bit < f.lsb + f.bits) << "bit " << bit;
      }
    }
    EXPECT_EQ(info.used_bits(), expected_lsb);
    EXPECT_LE(info.used_bits(), kWordBits);
  }
}

TEST(IsaTable, LookupsAndUnits) {
  ASSERT_NE(FindMnemonic("mxu.matmul"), nullptr);
  EXPECT_EQ(FindMnemonic("mxu.matmul")->unit, Unit::kMxu);
  EXPECT_EQ(FindMnemonic("dma.load")->unit, Unit::kLoad);
  EXPECT_EQ(FindMnemonic("dma.store")->unit, Unit::kStore);
  EXPECT_EQ(FindMnemonic("vtanh")->unit, Unit::kVector);
  EXPECT_EQ(FindMnemonic("halt")->unit, Unit::kControl);
  EXPECT_EQ(FindMnemonic("mtmul"), nullptr);
  EXPECT_EQ(FindInstruction(0xff), nullptr);
  EXPECT_EQ(static_cast<int>(Opcode::kDmaLoad), 0x10);
  EXPECT_EQ(DtypeBytes(Dtype::kBf16), 2);
  EXPECT_EQ(DtypeBytes(Dtype::kS32), 4);
  EXPECT_EQ(ConfigRegisterOwner(ConfigRegister::kQuantScale), Unit::kVector);
  EXPECT_EQ(ConfigRegisterOwner(ConfigRegister::kStoreDramRowStride), Unit::kStore);
  EXPECT_EQ(FindConfigRegisterByName("load.dram_row_stride"), 0u);
  EXPECT_EQ(FindConfigRegister(31), nullptr);
  // The brief's vocabulary is all present.
  for (std::string_view m :
       {"nop",     "halt",       "cfg.set",  "sem.signal", "sem.wait", "dma.load", "dma.store",
        "mxu.ldw", "mxu.matmul", "mxu.conv", "vadd",       "vsub",     "vmul",     "vmax",
        "vmin",    "vcmp",       "vsel",     "vexp",       "vrecip",   "vrsqrt",   "vtanh",
        "vcvt",    "vrequant",   "vredsum",  "vredmax",    "vbcast"})
    EXPECT_NE(FindMnemonic(m), nullptr) << m;
}

TEST(IsaTable, ExecutingUnitRoutesSyncAndConfigToTheirUnits) {
  Program p = Assemble(
      "sem.wait unit=vector, sem=1, count=1\nsem.signal store, 2, 1\n"
      "cfg.set reg=load.dram_row_stride, value=64\ncfg.set reg=quant.zero_point, value=3\n"
      "mxu.ldw ub:0, 4, 4, bf16\nnop\n",
      "u.sasm");
  std::vector<Unit> units;
  for (const Instruction& inst : p.instructions) units.push_back(ExecutingUnit(inst));
  EXPECT_EQ(units, (std::vector<Unit>{Unit::kVector, Unit::kStore, Unit::kLoad, Unit::kVector,
                                      Unit::kMxu, Unit::kControl}));
}

TEST(IsaTable, TypedFieldAccessChecksTheFamily) {
  Instruction load = MakeInstruction(Opcode::kDmaLoad);
  load.set(DmaLoadField::rows, 7);
  EXPECT_EQ(load.fields[3], 7u);  // rows is the fourth field of dma.load
  EXPECT_EQ(load.get(DmaLoadField::rows), 7u);
  try {
    load.get(MxuMatmulField::m);
    FAIL() << "expected a family mismatch";
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.message(), "internal: reading a 'mxu.matmul' field of a 'dma.load' instruction");
  }
}

}  // namespace
}  // namespace systolic

// The .sasm assembler: syntax (comments, positional and named operands, number forms, local
// address prefixes, default flags), source locations, and every error with FILE:LINE:COL.
#include "simulator/isa/assembler.h"

#include <gtest/gtest.h>

#include "simulator/isa/disassembler.h"

namespace systolic {
namespace {

std::string AssembleError(const std::string& text) {
  try {
    Assemble(text, "prog.sasm");
  } catch (const hlo::Error& e) {
    return hlo::FormatError(e);
  }
  return "no error";
}

// The first line of the formatted error (without the source excerpt).
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST(Assembler, UnknownMnemonicWithLineAndColumn) {
  std::string text = "# a tile\nnop\n    mtmul src=ub:0\n";
  try {
    Assemble(text, "prog.sasm");
    FAIL();
  } catch (const hlo::Error& e) {
    EXPECT_EQ(hlo::FormatError(e, "", text),
              "prog.sasm:3:5: error: unknown mnemonic 'mtmul' (did you mean 'vmul'?)\n"
              "    mtmul src=ub:0\n"
              "    ^\n");
  }
  EXPECT_EQ(FirstLine(AssembleError("frobnicate")),
            "prog.sasm:1:1: error: unknown mnemonic 'frobnicate'");
}

TEST(Assembler, SampleProgramCanonicalText) {
  const char* source = R"(
// One int8 GEMM tile: C[64x128] = A[64x256] * W[256x128], then requantize and store.
cfg.set reg=quant.scale, value=0x3d800000          # 1/16
dma.load dram=0x1000, local=ub:0, row_bytes=128, rows=256, planes=1
dma.load 0x9000, ub:0x8000, 256, 64, 1             # positional operands
sem.signal unit=load, sem=0, count=2
sem.wait mxu, 0, 2
mxu.ldw src=ub:0, k=256, n=128, dtype=s8
mxu.matmul src=ub:0x8000, dst=acc:0, m=64, dtype=s8, acc=true, dataflow=ws
sem.signal unit=mxu, sem=1, count=1
sem.wait unit=vector, sem=1, count=1
vrequant dst=ub:0x10000, src=acc:0, count=8_192, src_type=s32, dst_type=s8
vcmp ub:0x20000, ub:0x10000, ub:0x10000, 0b1000, s8, cmp=ge
halt
)";
  Program p = Assemble(source, "tile.sasm");
  ASSERT_EQ(p.instructions.size(), 12u);
  ASSERT_EQ(p.locations.size(), 12u);
  EXPECT_EQ(p.locations[0].line, 3u);
  EXPECT_EQ(p.locations[11].line, 14u);
  EXPECT_EQ(*p.locations[0].file, "tile.sasm");
  EXPECT_EQ(Disassemble(p),
            "cfg.set reg=quant.scale, value=1031798784\n"
            "dma.load dram=0x1000, local=ub:0x0, row_bytes=128, rows=256, planes=1\n"
            "dma.load dram=0x9000, local=ub:0x8000, row_bytes=256, rows=64, planes=1\n"
            "sem.signal unit=load, sem=0, count=2\n"
            "sem.wait unit=mxu, sem=0, count=2\n"
            "mxu.ldw src=ub:0x0, k=256, n=128, dtype=s8, buf=0\n"
            "mxu.matmul src=ub:0x8000, dst=acc:0x0, m=64, dtype=s8, buf=0, acc=1, dataflow=ws\n"
            "sem.signal unit=mxu, sem=1, count=1\n"
            "sem.wait unit=vector, sem=1, count=1\n"
            "vrequant dst=ub:0x10000, src=acc:0x0, count=8192, src_type=s32, dst_type=s8\n"
            "vcmp dst=ub:0x20000, a=ub:0x10000, b=ub:0x10000, count=8, dtype=s8, cmp=ge\n"
            "halt\n");
  // 0x3d800000 is the f32 bit pattern of 1/16 = 2^-4: exponent 127-4 = 123 = 0x7b, << 23.
  EXPECT_EQ(p.instructions[0].get(CfgSetField::value), uint64_t{123} << 23);
  EXPECT_EQ(p.instructions[6].get(MxuMatmulField::dst), kAccumulatorBit);
}

TEST(Assembler, EmptyAndCommentOnlyInput) {
  EXPECT_TRUE(Assemble("", "e.sasm").instructions.empty());
  EXPECT_TRUE(Assemble("  # only a comment\n\n// another\n", "e.sasm").instructions.empty());
  EXPECT_EQ(Assemble("halt // trailing\r\n", "e.sasm").instructions.size(), 1u);
}

TEST(Assembler, OperandErrors) {
  EXPECT_EQ(FirstLine(AssembleError("dma.load dram=1, local=ub:0, row_bytes=4, rows=1, plane=1")),
            "prog.sasm:1:51: error: 'dma.load' has no field 'plane' (fields: dram local row_bytes "
            "rows planes)");
  EXPECT_EQ(FirstLine(AssembleError("nop x=1")),
            "prog.sasm:1:5: error: 'nop' has no field 'x' (it takes no operands)");
  EXPECT_EQ(FirstLine(AssembleError("halt 1")), "prog.sasm:1:6: error: 'halt' takes 0 operands");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu, sem=1, sem=2, count=1")),
            "prog.sasm:1:27: error: field 'sem' given twice");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu, 1, 1")),
            "prog.sasm:1:20: error: positional operand after a named one in 'sem.wait'");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu, sem=1")),
            "prog.sasm:1:25: error: missing field 'count' of 'sem.wait'");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu, sem=1, count=1,")),
            "prog.sasm:1:35: error: empty operand");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu sem=1, count=1")),
            "prog.sasm:1:15: error: malformed operand 'unit=mxu sem=1' (separate operands with "
            "',')");
}

TEST(Assembler, ValueErrors) {
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu, sem=32, count=1")),
            "prog.sasm:1:24: error: field 'sem' of 'sem.wait' is 32, which does not fit in 5 bits "
            "(max 31)");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu, sem=x1, count=1")),
            "prog.sasm:1:24: error: expected a number for field 'sem', got 'x1'");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=mxu, sem=-1, count=1")),
            "prog.sasm:1:24: error: expected a number for field 'sem', got '-1'");
  EXPECT_EQ(FirstLine(AssembleError("cfg.set reg=quant.scale, value=0x1_0000_0000")),
            "prog.sasm:1:32: error: field 'value' of 'cfg.set' is 4294967296, which does not fit "
            "in 32 bits (max 4294967295)");
  EXPECT_EQ(FirstLine(AssembleError("cfg.set reg=quant.scale, value=99999999999999999999999")),
            "prog.sasm:1:32: error: number '99999999999999999999999' for field 'value' does not "
            "fit in 64 bits");
  EXPECT_EQ(FirstLine(AssembleError("sem.wait unit=gpu, sem=1, count=1")),
            "prog.sasm:1:15: error: unknown unit 'gpu' for field 'unit' (valid: load, store, mxu, "
            "vector, control)");
  EXPECT_EQ(FirstLine(AssembleError("cfg.set reg=stride, value=1")),
            "prog.sasm:1:13: error: unknown configuration register 'stride' (see docs/isa.md for "
            "the register table)");
  EXPECT_EQ(FirstLine(AssembleError("vexp ub:0, acc:0x2000000, 1, f32")),
            "prog.sasm:1:12: error: offset 33554432 of field 'src' is outside the accumulator's "
            "25-bit address space (max 33554431)");
  EXPECT_EQ(FirstLine(AssembleError("vexp ub:0, 0x4000000, 1, f32")),
            "prog.sasm:1:12: error: field 'src' of 'vexp' is 67108864, which does not fit in 26 "
            "bits (max 67108863)");
  EXPECT_EQ(FirstLine(AssembleError("vbcast ub:0, ub:0, 1, 1, f32, per_row=2")),
            "prog.sasm:1:39: error: field 'per_row' of 'vbcast' is 2, which does not fit in 1 "
            "bits (max 1)");
  // The error is reported on the line where it occurs.
  EXPECT_EQ(FirstLine(AssembleError("nop\n\nhalt\nvexp ub:0, ub:0, 1, f33\n")),
            "prog.sasm:4:21: error: unknown dtype 'f33' for field 'dtype' (valid: s8, u8, s32, "
            "bf16, f16, f32, pred)");
}

TEST(Assembler, RawLocalAddressesAndFlagsDefaultToZero) {
  Program p = Assemble("vexp 0x2000004, 8, 1, f32\nmxu.ldw ub:0, 16, 16, bf16\n", "p.sasm");
  EXPECT_EQ(p.instructions[0].get(VExpField::dst), kAccumulatorBit | 4);
  EXPECT_EQ(FormatInstruction(p.instructions[0]),
            "vexp dst=acc:0x4, src=ub:0x8, count=1, dtype=f32");
  EXPECT_EQ(p.instructions[1].get(MxuLoadWeightsField::buf), 0u);
}

}  // namespace
}  // namespace systolic

namespace systolic {
namespace {

// Random printable garbage (biased towards the assembler's own punctuation and mnemonics) is
// either assembled or rejected with an hlo::Error that has a line and column; it never crashes.
TEST(Assembler, RandomTextIsAssembledOrRejectedWithALocation) {
  const std::string alphabet = "abcdmuvx.:=,_ #/0123456789\t";
  const char* prefixes[] = {"", "vadd ", "dma.load ", "sem.wait ", "cfg.set reg=", "mxu.conv "};
  uint64_t seed = 11;
  auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = prefixes[next() % 6];
    for (size_t n = next() % 40; n > 0; --n) text += alphabet[next() % alphabet.size()];
    try {
      Program p = Assemble(text, "fuzz.sasm");
      EXPECT_EQ(Disassemble(Assemble(Disassemble(p), "again.sasm")), Disassemble(p));
    } catch (const hlo::Error& e) {
      EXPECT_EQ(e.location().line, 1u) << text;
      EXPECT_GE(e.location().column, 1u) << text;
      EXPECT_LE(e.location().column, text.size() + 1) << text;
    }
  }
}

}  // namespace
}  // namespace systolic

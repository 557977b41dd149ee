// Binary encoding: three instructions whose 128-bit words were computed by hand from the layout
// in encoding.h, the .bin header bytes, field-range errors, and every kind of illegal binary
// input (unknown opcode, reserved bits, illegal symbol values, bad magic/version, truncation).
#include "simulator/isa/encoding.h"

#include <gtest/gtest.h>

#include "simulator/isa/assembler.h"

namespace systolic {
namespace {

Word EncodeText(const std::string& line) {
  Program p = Assemble(line, "t.sasm");
  EXPECT_EQ(p.instructions.size(), 1u);
  return Encode(p.instructions.at(0));
}

std::string ErrorOf(auto&& fn) {
  try {
    fn();
  } catch (const hlo::Error& e) {
    return hlo::FormatError(e);
  }
  return "no error";
}

TEST(Encoding, HandComputedWords) {
  // halt: opcode 0x01, no fields.
  EXPECT_EQ(EncodeText("halt"), (Word{0x01, 0}));
  // sem.signal: opcode 0x03 | unit=mxu(2) << 8 | sem=3 << 11 | count=2 << 16.
  //   0x03 + 0x200 + 0x1800 + 0x20000 = 0x21A03
  EXPECT_EQ(EncodeText("sem.signal unit=mxu, sem=3, count=2"), (Word{0x21A03, 0}));
  // dma.load: opcode 0x10; dram 0x123456789A at bit 8; local acc:0x10 = 0x2000010 at bit 48
  // (low 16 bits 0x0010 in word 0, high bits 0x200 start word 1); row_bytes 256 at bit 74
  // (word-1 bit 10: 0x40000); rows 16 at bit 90 (word-1 bit 26: 0x40000000); planes 3 at bit 106
  // (word-1 bit 42: 0xC0000000000).
  EXPECT_EQ(EncodeText("dma.load dram=0x123456789A, local=acc:0x10, row_bytes=256, rows=16, "
                       "planes=3"),
            (Word{0x0010123456789A10ull, 0x00000C0040040200ull}));
}

TEST(Encoding, BinaryHeaderBytes) {
  Program p = Assemble("halt\n", "t.sasm");
  std::string bin = WriteBinary(p);
  ASSERT_EQ(bin.size(), 32u);
  EXPECT_EQ(bin.substr(0, 4), "SYSA");
  EXPECT_EQ(bin[4], 1);  // version 1, little-endian
  EXPECT_EQ(bin[5], 0);
  EXPECT_EQ(bin[8], 1);      // one instruction
  EXPECT_EQ(bin[16], 0x01);  // halt's opcode
  for (size_t i = 17; i < 32; ++i) EXPECT_EQ(bin[i], 0) << i;
}

TEST(Encoding, FieldRangeErrorsNameTheField) {
  Instruction load = MakeInstruction(Opcode::kDmaLoad);
  load.set(DmaLoadField::rows, 70000);
  EXPECT_EQ(ErrorOf([&] { Encode(load, 5); }),
            "<input>:0:0: error: instruction #5: field 'rows' of 'dma.load' is 70000, which does "
            "not fit in 16 bits (max 65535)\n");
  Instruction add = MakeInstruction(Opcode::kVAdd);
  add.set(VAddField::dtype, 12);
  EXPECT_EQ(ErrorOf([&] { Encode(add); }),
            "<input>:0:0: error: field 'dtype' of 'vadd' is 12, which is not a dtype (valid: s8, "
            "u8, s32, bf16, f16, f32, pred)\n");
  Instruction cfg = MakeInstruction(Opcode::kCfgSet);
  cfg.set(CfgSetField::reg, 31);
  EXPECT_NE(ErrorOf([&] { Encode(cfg); }).find("is 31, which is not a configuration register"),
            std::string::npos);
  Instruction halt = MakeInstruction(Opcode::kHalt);
  halt.fields[2] = 1;
  EXPECT_EQ(ErrorOf([&] { Encode(halt, 0); }),
            "<input>:0:0: error: instruction #0: 'halt' has 0 fields, but operand 2 is set\n");
  // The largest legal values are accepted.
  load.set(DmaLoadField::rows, 65535);
  load.set(DmaLoadField::dram, (uint64_t{1} << 40) - 1);
  EXPECT_EQ(Decode(Encode(load)), load);
}

TEST(Encoding, IllegalWords) {
  EXPECT_EQ(ErrorOf([] {
              Decode(Word{0x7f, 0}, 3);
            }),
            "<input>:0:0: error: instruction #3: unknown opcode 0x7f\n");
  EXPECT_EQ(ErrorOf([] {
              Decode(Word{0x01, uint64_t{1} << 63}, 0);
            }),
            "<input>:0:0: error: instruction #0: reserved bits 8..127 of a 'halt' word are not "
            "zero\n");
  // vadd dtype field: bits [8+26*3+20, +4) = [106, 110) -> word-1 bits 42..45; 12 is illegal.
  EXPECT_EQ(ErrorOf([] {
              Decode(Word{0x30, uint64_t{12} << 42}, 1);
            }),
            "<input>:0:0: error: instruction #1: illegal encoding: field 'dtype' of 'vadd' is 12, "
            "which is not a dtype (valid: s8, u8, s32, bf16, f16, f32, pred)\n");
  // mxu.matmul dataflow (2 bits at 8+26+26+20+4+1+1 = 86 -> word-1 bit 22) value 3 is illegal.
  EXPECT_NE(ErrorOf([] {
              Decode(Word{0x21, uint64_t{3} << 22}, 0);
            }).find("field 'dataflow' of 'mxu.matmul' is 3, which is not a dataflow"),
            std::string::npos);
}

TEST(Encoding, IllegalFiles) {
  std::string good = WriteBinary(Assemble("nop\nhalt\n", "t.sasm"));
  EXPECT_EQ(ErrorOf([] { ReadBinary("SYS", "p.bin"); }),
            "p.bin:0:1: error: truncated header: 3 bytes, a .bin program starts with a 16-byte "
            "header\n");
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_EQ(ErrorOf([&] { ReadBinary(bad_magic, "p.bin"); }),
            "p.bin:0:1: error: bad magic: not a systolic .bin program (expected \"SYSA\")\n");
  std::string bad_version = good;
  bad_version[4] = 9;
  EXPECT_EQ(ErrorOf([&] { ReadBinary(bad_version, "p.bin"); }),
            "p.bin:0:5: error: unsupported .bin version 9 (this build reads version 1)\n");
  // Second word cut short: the error names instruction #1.
  EXPECT_EQ(ErrorOf([&] { ReadBinary(good.substr(0, 40), "p.bin"); }),
            "p.bin:0:33: error: truncated file: instruction #1 is incomplete (header says 2 "
            "instructions, file holds 24 bytes of words)\n");
  EXPECT_EQ(ErrorOf([&] { ReadBinary(good + "x", "p.bin"); }),
            "p.bin:0:49: error: 1 trailing bytes after the 2 instructions the header declares\n");
  // A huge count in a tiny file is refused before anything is allocated for it.
  std::string huge = good;
  huge[8] = huge[9] = huge[10] = huge[11] = '\xff';
  EXPECT_NE(ErrorOf([&] { ReadBinary(huge, "p.bin"); }).find("header says 4294967295"),
            std::string::npos);
  // An illegal word inside a file: instruction index and byte offset (16 + 16 + 1).
  std::string bad_word = good;
  bad_word[32] = '\x7f';
  EXPECT_EQ(ErrorOf([&] { ReadBinary(bad_word, "p.bin"); }),
            "p.bin:0:33: error: instruction #1: unknown opcode 0x7f\n");
  EXPECT_EQ(ReadBinary(WriteBinary(Program{}), "empty.bin").instructions.size(), 0u);
}

}  // namespace
}  // namespace systolic

namespace systolic {
namespace {

// Flipping random bits of a valid program never crashes the reader: each result is either a
// program that re-encodes to the same bytes or an hlo::Error.
TEST(Encoding, RandomCorruptionIsDecodedOrRejected) {
  std::string good = WriteBinary(Assemble(
      "dma.load 0x1000, ub:0, 64, 4, 1\nmxu.ldw ub:0, 16, 16, s8, 1\nvcmp ub:0, ub:4, ub:8, 4, "
      "f32, lt\nhalt\n",
      "t.sasm"));
  uint64_t seed = 7;
  int accepted = 0, rejected = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::string bytes = good;
    for (int flips = 0; flips < 1 + trial % 3; ++flips) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      size_t bit = (seed >> 17) % (bytes.size() * 8);
      bytes[bit / 8] = static_cast<char>(bytes[bit / 8] ^ (1 << (bit % 8)));
    }
    if (trial % 5 == 0) bytes.resize((seed >> 40) % (bytes.size() + 1));
    try {
      Program p = ReadBinary(bytes, "fuzz.bin");
      EXPECT_EQ(WriteBinary(p), bytes);
      ++accepted;
    } catch (const hlo::Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace systolic

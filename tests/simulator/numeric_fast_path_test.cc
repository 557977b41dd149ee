// The functional model's fast paths against the one-element-at-a-time definitions they replace,
// on random operands (special values included) and on shapes that reach every branch of the
// tiled kernels: the register-tiled GEMM (numeric_mxu_gemm.cc: tiles of 4 rows x 2 or 1 vectors
// of 16 or 8 columns, single columns, leftover rows) against chained MxuMac, whole-row
// accumulation against MxuAccumulate, bulk element loads/stores against hand-written
// little-endian bytes, and the vector unit's f32 max/min, vfill and vbcast against values
// computed here.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "simulator/functional.h"
#include "simulator/numeric_mxu.h"
#include "simulator/numeric_types.h"

namespace simulator {
namespace {

using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

// Random element bit patterns of `dtype`, with a share of special values for the float types.
std::vector<uint32_t> RandomBits(Dtype dtype, size_t count, std::mt19937& rng) {
  std::vector<uint32_t> bits(count);
  std::uniform_int_distribution<uint32_t> any;
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  const std::vector<float> specials = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity(),
                                       std::numeric_limits<float>::quiet_NaN(),
                                       std::numeric_limits<float>::denorm_min(), 1e30f, -1e30f};
  for (uint32_t& b : bits) {
    switch (dtype) {
      case Dtype::kS8: b = any(rng) & 0xff; break;
      case Dtype::kBf16: b = any(rng) & 0xffff; break;  // every pattern: NaNs, infs, subnormals
      default: {
        const uint32_t pick = any(rng) % 16;
        const float value = pick == 0 ? specials[any(rng) % specials.size()]
                                      : std::ldexp(uniform(rng), exponent(rng));
        b = std::bit_cast<uint32_t>(value);
      }
    }
  }
  return bits;
}

// Equal bit patterns, or both NaN (x86 keeps a NaN's payload, but which of two NaN operands
// survives is the compiler's choice in either implementation).
bool SameAccumulator(Dtype dtype, uint32_t a, uint32_t b) {
  if (a == b) return true;
  return dtype != Dtype::kS8 && std::isnan(std::bit_cast<float>(a)) &&
         std::isnan(std::bit_cast<float>(b));
}

// The definition: each output element chains MxuMac from +0 in increasing k.
std::vector<uint32_t> ChainedMacs(Dtype dtype, int64_t m, int64_t k, int64_t n,
                                  const std::vector<uint32_t>& a, const std::vector<uint32_t>& w) {
  std::vector<uint32_t> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      uint32_t sum = kMxuZeroSum;
      for (int64_t kk = 0; kk < k; ++kk) sum = MxuMac(dtype, sum, a[i * k + kk], w[kk * n + j]);
      out[i * n + j] = sum;
    }
  }
  return out;
}

std::vector<uint8_t> ToBytes(Dtype dtype, const std::vector<uint32_t>& bits) {
  std::vector<uint8_t> bytes(bits.size() * systolic::DtypeBytes(dtype));
  for (size_t i = 0; i < bits.size(); ++i) {
    for (int b = 0; b < systolic::DtypeBytes(dtype); ++b) {
      bytes[i * systolic::DtypeBytes(dtype) + b] = static_cast<uint8_t>(bits[i] >> (8 * b));
    }
  }
  return bytes;
}

TEST(MxuGemmKernel, EveryTileShapeMatchesChainedMacs) {
  std::mt19937 rng(7);
  // m: below, at and past the 4-row tile; n: every combination of 32-, 16- and 8-column tiles
  // (AVX-512 kernel; 16 and 8 for the AVX2 / SSE one) and single columns; k: 1 and longer chains.
  for (Dtype dtype : {Dtype::kS8, Dtype::kBf16, Dtype::kF32}) {
    for (int64_t m : {1, 3, 4, 5, 9}) {
      for (int64_t n : {1, 7, 8, 9, 16, 17, 24, 31, 40, 48, 57}) {
        for (int64_t k : {1, 2, 13}) {
          const std::vector<uint32_t> a = RandomBits(dtype, static_cast<size_t>(m * k), rng);
          const std::vector<uint32_t> w = RandomBits(dtype, static_cast<size_t>(k * n), rng);
          const std::vector<uint32_t> expected = ChainedMacs(dtype, m, k, n, a, w);
          const std::vector<uint8_t> a_bytes = ToBytes(dtype, a), w_bytes = ToBytes(dtype, w);
          std::vector<uint32_t> elements(static_cast<size_t>(m * n), 0xdeadbeef);
          MxuGemmElements(dtype, m, k, n, a_bytes.data(), w_bytes.data(), elements.data());
          const std::vector<uint32_t> bits = MxuGemm(dtype, m, k, n, a, w);
          for (size_t e = 0; e < expected.size(); ++e) {
            ASSERT_TRUE(SameAccumulator(dtype, elements[e], expected[e]))
                << systolic::DtypeName(dtype) << " m=" << m << " n=" << n << " k=" << k
                << " element " << e << ": " << elements[e] << " vs " << expected[e];
            ASSERT_TRUE(SameAccumulator(dtype, bits[e], expected[e])) << "MxuGemm, element " << e;
          }
        }
      }
    }
  }
}

// A 4-row x 16-column f32 GEMM (one register tile) whose operands are `a` (row 0, the other
// rows 0) and `w` (column 5, the others 0); returns column 5 of row 0.
float F32TileColumn5(const std::vector<float>& a, const std::vector<float>& w) {
  const int64_t m = 4, n = 16, k = static_cast<int64_t>(a.size());
  std::vector<float> a_full(m * k, 0.0f), w_full(k * n, 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) {
    a_full[kk] = a[kk];
    w_full[kk * n + 5] = w[kk];
  }
  std::vector<uint8_t> a_bytes(a_full.size() * 4), w_bytes(w_full.size() * 4);
  std::memcpy(a_bytes.data(), a_full.data(), a_bytes.size());
  std::memcpy(w_bytes.data(), w_full.data(), w_bytes.size());
  std::vector<uint32_t> out(m * n);
  MxuGemmElements(Dtype::kF32, m, k, n, a_bytes.data(), w_bytes.data(), out.data());
  return std::bit_cast<float>(out[5]);
}

TEST(MxuGemmKernel, F32SumsInIncreasingKWithoutFusedMultiplyAdd) {
  // ((0 + 1e8) + 1) + -1e8 = 0 in f32 (1e8 + 1 rounds back to 1e8); any other order gives 1.
  EXPECT_EQ(F32TileColumn5({1.0f, 1.0f, 1.0f}, {1e8f, 1.0f, -1e8f}), 0.0f);
  // -1 + (1 + 2^-12)^2: the product rounds to 1 + 2^-11 (its 2^-24 is a tie to even), so the
  // sum is 2^-11; a fused multiply-add would keep the 2^-24.
  const float x = 1.0f + std::ldexp(1.0f, -12);
  EXPECT_EQ(F32TileColumn5({1.0f, x}, {-1.0f, x}), std::ldexp(1.0f, -11));
}

TEST(MxuGemmKernel, Int8SumsWrapInS32) {
  // 131073 products of (-128) * (-128) = 2^14: 2^31 + 2^14 wraps to -2^31 + 2^14.
  const int64_t m = 4, k = 131073, n = 8;
  std::vector<uint8_t> a(m * k, 0x80), w(k * n, 0x80);
  std::vector<uint32_t> out(m * n);
  MxuGemmElements(Dtype::kS8, m, k, n, a.data(), w.data(), out.data());
  for (uint32_t v : out) {
    EXPECT_EQ(static_cast<int32_t>(v), std::numeric_limits<int32_t>::min() + 16384);
  }
  // (-128) * 127 = -16256 per product, no wrap.
  std::fill(w.begin(), w.end(), 0x7f);
  MxuGemmElements(Dtype::kS8, m, 3, n, a.data(), w.data(), out.data());
  EXPECT_EQ(static_cast<int32_t>(out[n * m - 1]), -16256 * 3);
}

TEST(MxuGemmKernel, RejectsDtypesTheArrayDoesNotMultiply) {
  uint8_t bytes[4] = {};
  uint32_t out[1];
  try {
    MxuGemmElements(Dtype::kF16, 1, 1, 1, bytes, bytes, out);
    ADD_FAILURE() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("multiplies s8, bf16 or f32, not f16"), std::string::npos)
        << e.message();
  }
}

TEST(MxuAccumulateRow, MatchesMxuAccumulatePerElement) {
  std::mt19937 rng(11);
  for (Dtype dtype : {Dtype::kS8, Dtype::kBf16, Dtype::kF32}) {
    // Accumulator words are s32 or f32 patterns whatever the input dtype.
    const Dtype word = dtype == Dtype::kS8 ? Dtype::kS32 : Dtype::kF32;
    std::vector<uint32_t> acc = RandomBits(word == Dtype::kS32 ? Dtype::kS8 : Dtype::kF32, 37, rng);
    if (word == Dtype::kS32) {
      for (uint32_t& v : acc) v = v * 0x01010101u;  // spread over all 32 bits: wraps happen
    }
    const std::vector<uint32_t> sums = RandomBits(Dtype::kF32, 37, rng);
    std::vector<uint32_t> row = acc;
    MxuAccumulateRow(dtype, row, sums);
    for (size_t j = 0; j < acc.size(); ++j) {
      ASSERT_TRUE(SameAccumulator(dtype, row[j], MxuAccumulate(dtype, true, acc[j], sums[j])))
          << j;
    }
  }
}

TEST(ElementArrays, LoadAndStoreLittleEndianOfEveryWidth) {
  const std::vector<uint8_t> bytes = {0x01, 0x82, 0x03, 0xf4, 0x05, 0x06, 0x07, 0x88};
  uint32_t out[8];
  LoadBitsArray(Dtype::kS8, bytes.data(), 3, out);  // zero-extended, not sign-extended
  EXPECT_EQ(out[1], 0x82u);
  LoadBitsArray(Dtype::kBf16, bytes.data(), 4, out);
  EXPECT_EQ(out[0], 0x8201u);
  EXPECT_EQ(out[3], 0x8807u);
  LoadBitsArray(Dtype::kF32, bytes.data(), 2, out);
  EXPECT_EQ(out[0], 0xf4038201u);
  EXPECT_EQ(out[1], 0x88070605u);
  std::vector<uint8_t> stored(8, 0xee);
  const uint32_t words[2] = {0x11223344u, 0xaabbccddu};
  StoreBitsArray(Dtype::kBf16, stored.data(), 2, words);  // the low 16 bits of each
  EXPECT_EQ(stored, (std::vector<uint8_t>{0x44, 0x33, 0xdd, 0xcc, 0xee, 0xee, 0xee, 0xee}));
  StoreBitsArray(Dtype::kS32, stored.data(), 2, words);
  EXPECT_EQ(stored, (std::vector<uint8_t>{0x44, 0x33, 0x22, 0x11, 0xdd, 0xcc, 0xbb, 0xaa}));
  StoreBitsArray(Dtype::kPred, stored.data(), 2, words);
  EXPECT_EQ(stored[0], 0x44);
  EXPECT_EQ(stored[1], 0xdd);
  EXPECT_EQ(stored[2], 0x22);  // untouched
}

// The matrix unit's instructions end to end (ExecuteMxu gathers UB bytes, including the
// implicit im2col, and feeds the kernel in blocks of 64 rows) against chained MxuMac.
class MxuFastPathTest : public ::testing::Test {
 protected:
  MxuFastPathTest() : config_(MakeConfig()), memories_(config_) {}
  static systolic::ArchConfig MakeConfig() {
    systolic::ArchConfig config = systolic::Preset("gemmini");
    config.array_rows = 32;
    config.array_cols = 32;
    config.mxu_dtypes = systolic::kMxuInt8 | systolic::kMxuBf16 | systolic::kMxuF32;
    return config;
  }
  void PutBits(uint64_t offset, Dtype dtype, const std::vector<uint32_t>& bits) {
    const std::vector<uint8_t> bytes = ToBytes(dtype, bits);
    std::span<uint8_t> out = memories_.ub.Write(offset, bytes.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  std::vector<uint32_t> Accumulators(size_t count) {
    std::span<const uint8_t> in = memories_.acc.Read(0, count * 4);
    std::vector<uint32_t> words(count);
    std::memcpy(words.data(), in.data(), in.size());
    return words;
  }
  void LoadWeights(int64_t k, int64_t n, Dtype dtype) {
    Instruction inst = systolic::MakeInstruction(Opcode::kMxuLoadWeights);
    inst.set(systolic::MxuLoadWeightsField::src, 0);
    inst.set(systolic::MxuLoadWeightsField::k, static_cast<uint64_t>(k));
    inst.set(systolic::MxuLoadWeightsField::n, static_cast<uint64_t>(n));
    inst.set(systolic::MxuLoadWeightsField::dtype, static_cast<uint64_t>(dtype));
    ExecuteMxu(inst, config_, registers_, weights_, memories_);
  }
  void Matmul(uint64_t src, int64_t m, Dtype dtype, bool acc) {
    Instruction inst = systolic::MakeInstruction(Opcode::kMxuMatmul);
    inst.set(systolic::MxuMatmulField::src, src);
    inst.set(systolic::MxuMatmulField::dst, systolic::kAccumulatorBit);
    inst.set(systolic::MxuMatmulField::m, static_cast<uint64_t>(m));
    inst.set(systolic::MxuMatmulField::dtype, static_cast<uint64_t>(dtype));
    inst.set(systolic::MxuMatmulField::acc, acc ? 1 : 0);
    ExecuteMxu(inst, config_, registers_, weights_, memories_);
  }

  systolic::ArchConfig config_;
  Memories memories_;
  RegisterFile registers_{};
  WeightBuffers weights_;
};

TEST_F(MxuFastPathTest, MatmulOverwriteThenAccumulateAcrossRowBlocks) {
  std::mt19937 rng(3);
  const int64_t m = 70, k = 13, n = 24;  // two row blocks (64 + 6), tiles and leftovers
  for (Dtype dtype : {Dtype::kS8, Dtype::kBf16, Dtype::kF32}) {
    const std::vector<uint32_t> w = RandomBits(dtype, k * n, rng);
    const std::vector<uint32_t> a1 = RandomBits(dtype, m * k, rng);
    const std::vector<uint32_t> a2 = RandomBits(dtype, m * k, rng);
    PutBits(0, dtype, w);
    PutBits(8192, dtype, a1);
    PutBits(16384, dtype, a2);
    LoadWeights(k, n, dtype);
    Matmul(8192, m, dtype, /*acc=*/false);
    const std::vector<uint32_t> first = ChainedMacs(dtype, m, k, n, a1, w);
    std::vector<uint32_t> got = Accumulators(first.size());
    for (size_t e = 0; e < first.size(); ++e) {
      ASSERT_TRUE(SameAccumulator(dtype, got[e], first[e])) << "acc=0, element " << e;
    }
    Matmul(16384, m, dtype, /*acc=*/true);
    const std::vector<uint32_t> second = ChainedMacs(dtype, m, k, n, a2, w);
    got = Accumulators(first.size());
    for (size_t e = 0; e < first.size(); ++e) {
      ASSERT_TRUE(SameAccumulator(dtype, got[e], MxuAccumulate(dtype, true, first[e], second[e])))
          << "acc=1, element " << e;
    }
  }
}

TEST_F(MxuFastPathTest, ConvGathersWindowsInKernelRowColumnChannelOrder) {
  std::mt19937 rng(5);
  // 5 x 6 x 2 input, 2 x 3 kernel, stride 1: 4 x 4 = 16 output pixels, k = 12, n = 17.
  const int64_t in_h = 5, in_w = 6, cin = 2, kh = 2, kw = 3, n = 17;
  const int64_t k = kh * kw * cin, out_h = in_h - kh + 1, out_w = in_w - kw + 1;
  for (Dtype dtype : {Dtype::kS8, Dtype::kBf16, Dtype::kF32}) {
    const std::vector<uint32_t> w = RandomBits(dtype, k * n, rng);
    const std::vector<uint32_t> image = RandomBits(dtype, in_h * in_w * cin, rng);
    PutBits(0, dtype, w);
    PutBits(8192, dtype, image);
    LoadWeights(k, n, dtype);
    Instruction inst = systolic::MakeInstruction(Opcode::kMxuConv);
    inst.set(systolic::MxuConvField::src, 8192);
    inst.set(systolic::MxuConvField::dst, systolic::kAccumulatorBit);
    inst.set(systolic::MxuConvField::in_h, in_h);
    inst.set(systolic::MxuConvField::in_w, in_w);
    inst.set(systolic::MxuConvField::kh, kh);
    inst.set(systolic::MxuConvField::kw, kw);
    inst.set(systolic::MxuConvField::stride, 1);
    inst.set(systolic::MxuConvField::dtype, static_cast<uint64_t>(dtype));
    ExecuteMxu(inst, config_, registers_, weights_, memories_);
    // im2col by the ISA's formula: row oh*out_w+ow holds input (oh+dh, ow+dw, c) in (dh, dw, c)
    // order.
    std::vector<uint32_t> rows;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      for (int64_t ow = 0; ow < out_w; ++ow) {
        for (int64_t dh = 0; dh < kh; ++dh) {
          for (int64_t dw = 0; dw < kw; ++dw) {
            for (int64_t c = 0; c < cin; ++c) {
              rows.push_back(image[((oh + dh) * in_w + (ow + dw)) * cin + c]);
            }
          }
        }
      }
    }
    const std::vector<uint32_t> expected = ChainedMacs(dtype, out_h * out_w, k, n, rows, w);
    const std::vector<uint32_t> got = Accumulators(expected.size());
    for (size_t e = 0; e < expected.size(); ++e) {
      ASSERT_TRUE(SameAccumulator(dtype, got[e], expected[e]))
          << systolic::DtypeName(dtype) << " element " << e;
    }
  }
}

// The vector unit's bulk paths, through ExecuteVector on a small machine.
class VectorFastPathTest : public ::testing::Test {
 protected:
  VectorFastPathTest() : config_(systolic::Preset("gemmini")), memories_(config_) {}

  template <class T>
  void Put(uint64_t offset, const std::vector<T>& values) {
    std::span<uint8_t> out = memories_.ub.Write(offset, values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
  }
  template <class T>
  std::vector<T> Get(uint64_t offset, size_t count) {
    std::span<const uint8_t> in = memories_.ub.Read(offset, count * sizeof(T));
    std::vector<T> values(count);
    std::memcpy(values.data(), in.data(), in.size());
    return values;
  }
  void Vec(const Instruction& inst) { ExecuteVector(inst, registers_, memories_); }
  Instruction Fill(uint64_t dst, int64_t count, Dtype dtype, uint64_t value) {
    Instruction inst = systolic::MakeInstruction(Opcode::kVFill);
    inst.set(systolic::VFillField::dst, dst);
    inst.set(systolic::VFillField::count, static_cast<uint64_t>(count));
    inst.set(systolic::VFillField::dtype, static_cast<uint64_t>(dtype));
    inst.set(systolic::VFillField::value, value);
    return inst;
  }
  Instruction Bcast(uint64_t dst, uint64_t src, int64_t rows, int64_t cols, Dtype dtype,
                    bool per_row) {
    Instruction inst = systolic::MakeInstruction(Opcode::kVBcast);
    inst.set(systolic::VBcastField::dst, dst);
    inst.set(systolic::VBcastField::src, src);
    inst.set(systolic::VBcastField::rows, static_cast<uint64_t>(rows));
    inst.set(systolic::VBcastField::cols, static_cast<uint64_t>(cols));
    inst.set(systolic::VBcastField::dtype, static_cast<uint64_t>(dtype));
    inst.set(systolic::VBcastField::per_row, per_row ? 1 : 0);
    return inst;
  }

  systolic::ArchConfig config_;
  Memories memories_;
  RegisterFile registers_{};
};

TEST_F(VectorFastPathTest, FillWritesExactlyCountElementsOfEveryWidth) {
  for (int64_t count : {1, 2, 5, 13}) {
    Put<uint8_t>(0, std::vector<uint8_t>(64, 0xee));
    Vec(Fill(0, count, Dtype::kF32, 0x3fc00000));  // 1.5f
    std::vector<float> f = Get<float>(0, static_cast<size_t>(count));
    for (float v : f) EXPECT_EQ(v, 1.5f);
    EXPECT_EQ(Get<uint8_t>(static_cast<uint64_t>(4 * count), 1)[0], 0xee) << count;
    Vec(Fill(0, count, Dtype::kBf16, 0x1234));
    for (uint16_t v : Get<uint16_t>(0, static_cast<size_t>(count))) EXPECT_EQ(v, 0x1234);
    Vec(Fill(0, count, Dtype::kS8, 0xff));  // the low byte: -1
    for (int8_t v : Get<int8_t>(0, static_cast<size_t>(count))) EXPECT_EQ(v, -1);
    EXPECT_EQ(Get<uint16_t>(static_cast<uint64_t>(count), 1)[0] & 0xff,
              count % 2 == 0 ? 0x34 : 0x12);  // the bf16 fill past the s8 one is intact
  }
  Vec(Fill(0, 0, Dtype::kF32, 7));  // nothing written, nothing thrown
}

TEST_F(VectorFastPathTest, BroadcastBothDirectionsOfEveryWidth) {
  Put<uint16_t>(0, {0x1111, 0x2222, 0x3333});
  Vec(Bcast(64, 0, 3, 5, Dtype::kBf16, /*per_row=*/true));  // row r = 5 copies of src[r]
  const std::vector<uint16_t> along = Get<uint16_t>(64, 15);
  for (size_t i = 0; i < along.size(); ++i) EXPECT_EQ(along[i], 0x1111 * (i / 5 + 1)) << i;
  Put<uint8_t>(0, {1, 2, 3});
  Vec(Bcast(64, 0, 4, 3, Dtype::kS8, /*per_row=*/false));  // every row = src
  EXPECT_EQ(Get<uint8_t>(64, 12), (std::vector<uint8_t>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  Put<float>(0, {2.5f, -1.0f});
  Vec(Bcast(64, 0, 2, 7, Dtype::kF32, /*per_row=*/true));
  const std::vector<float> f = Get<float>(64, 14);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], i < 7 ? 2.5f : -1.0f) << i;
}

TEST_F(VectorFastPathTest, F32MaxMinOverManyElements) {
  // 3 x 37 elements: every pair of {NaN, -0, +0, -inf, 1, -1} in both orders, and more.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {nan, -0.0f, 0.0f, -inf, 1.0f, -1.0f};
  std::vector<float> a, b;
  for (float x : values) {
    for (float y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  Put<float>(0, a);
  Put<float>(1024, b);
  for (Opcode op : {Opcode::kVMax, Opcode::kVMin}) {
    Instruction inst = systolic::MakeInstruction(op);
    inst.fields[0] = 2048;  // dst, a, b, count, dtype (the binary ops' shared layout)
    inst.fields[1] = 0;
    inst.fields[2] = 1024;
    inst.fields[3] = a.size();
    inst.fields[4] = static_cast<uint64_t>(Dtype::kF32);
    Vec(inst);
    const std::vector<float> out = Get<float>(2048, a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const float x = a[i], y = b[i];
      if (std::isnan(x) || std::isnan(y)) {
        EXPECT_TRUE(std::isnan(out[i])) << i;
        continue;
      }
      // Zeros of both signs compare equal: max picks +0 unless both are -0, min the reverse.
      float want;
      if (x == 0.0f && y == 0.0f) {
        const bool negative = op == Opcode::kVMax ? std::signbit(x) && std::signbit(y)
                                                  : std::signbit(x) || std::signbit(y);
        want = negative ? -0.0f : 0.0f;
      } else {
        want = op == Opcode::kVMax ? (x < y ? y : x) : (x < y ? x : y);
      }
      EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want))
          << (op == Opcode::kVMax ? "max(" : "min(") << x << ", " << y << ")";
    }
  }
}

}  // namespace
}  // namespace simulator

// The compute units' data effects (functional.h) against values worked out by hand: int8
// wrapping and saturation, bf16 rounding ties, NaN propagation, accumulation order, strides,
// implicit im2col order, and the error messages of forbidden combinations.
#include "simulator/functional.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "simulator/numeric_types.h"
#include "simulator/unit_timing.h"

namespace simulator {
namespace {

using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

constexpr uint64_t kAcc = systolic::kAccumulatorBit;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

class FunctionalTest : public ::testing::Test {
 protected:
  FunctionalTest() : config_(MakeConfig()), memories_(config_) {}
  static systolic::ArchConfig MakeConfig() {
    systolic::ArchConfig config = systolic::Preset("gemmini");
    config.array_rows = 8;
    config.array_cols = 8;
    config.mxu_dtypes = systolic::kMxuInt8 | systolic::kMxuBf16 | systolic::kMxuF32;
    return config;
  }

  // Typed access to local memory by local address (ub offset, or kAcc | offset).
  template <class T>
  void Put(uint64_t address, const std::vector<T>& values) {
    std::span<uint8_t> out = memories_.Local(address).Write(Memories::LocalOffset(address),
                                                            values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
  }
  template <class T>
  std::vector<T> Get(uint64_t address, size_t count) {
    std::span<const uint8_t> in =
        memories_.Local(address).Read(Memories::LocalOffset(address), count * sizeof(T));
    std::vector<T> values(count);
    std::memcpy(values.data(), in.data(), in.size());
    return values;
  }
  void PutBf16(uint64_t address, const std::vector<float>& values) {
    std::vector<uint16_t> bits;
    for (float v : values) bits.push_back(FloatToBf16Bits(v));
    Put(address, bits);
  }
  std::vector<float> GetBf16(uint64_t address, size_t count) {
    std::vector<float> values;
    for (uint16_t b : Get<uint16_t>(address, count)) values.push_back(Bf16BitsToFloat(b));
    return values;
  }

  void Mxu(const Instruction& inst) { ExecuteMxu(inst, config_, registers_, weights_, memories_); }
  void Vec(const Instruction& inst) { ExecuteVector(inst, registers_, memories_); }
  void SetRegister(systolic::ConfigRegister reg, uint32_t value) {
    registers_[static_cast<size_t>(reg)] = value;
  }

  Instruction Ldw(uint64_t src, int64_t k, int64_t n, Dtype dtype, int buf = 0) {
    Instruction inst = systolic::MakeInstruction(Opcode::kMxuLoadWeights);
    inst.set(systolic::MxuLoadWeightsField::src, src);
    inst.set(systolic::MxuLoadWeightsField::k, k);
    inst.set(systolic::MxuLoadWeightsField::n, n);
    inst.set(systolic::MxuLoadWeightsField::dtype, static_cast<uint64_t>(dtype));
    inst.set(systolic::MxuLoadWeightsField::buf, buf);
    return inst;
  }
  Instruction Matmul(uint64_t src, uint64_t dst, int64_t m, Dtype dtype, bool acc = false,
                     int buf = 0) {
    Instruction inst = systolic::MakeInstruction(Opcode::kMxuMatmul);
    inst.set(systolic::MxuMatmulField::src, src);
    inst.set(systolic::MxuMatmulField::dst, dst);
    inst.set(systolic::MxuMatmulField::m, m);
    inst.set(systolic::MxuMatmulField::dtype, static_cast<uint64_t>(dtype));
    inst.set(systolic::MxuMatmulField::acc, acc);
    inst.set(systolic::MxuMatmulField::buf, buf);
    return inst;
  }
  Instruction Binary(Opcode op, uint64_t dst, uint64_t a, uint64_t b, int64_t count, Dtype dtype) {
    Instruction inst = systolic::MakeInstruction(op);
    inst.fields[0] = dst;  // the binary ops share dst, a, b, count, dtype (isa.def)
    inst.fields[1] = a;
    inst.fields[2] = b;
    inst.fields[3] = static_cast<uint64_t>(count);
    inst.fields[4] = static_cast<uint64_t>(dtype);
    return inst;
  }
  Instruction Unary(Opcode op, uint64_t dst, uint64_t src, int64_t count, Dtype dtype) {
    Instruction inst = systolic::MakeInstruction(op);
    inst.fields[0] = dst;  // the unary ops share dst, src, count, dtype
    inst.fields[1] = src;
    inst.fields[2] = static_cast<uint64_t>(count);
    inst.fields[3] = static_cast<uint64_t>(dtype);
    return inst;
  }
  Instruction Convert(Opcode op, uint64_t dst, uint64_t src, int64_t count, Dtype from, Dtype to) {
    Instruction inst = systolic::MakeInstruction(op);
    inst.fields[0] = dst;  // vcvt and vrequant share dst, src, count, src_type, dst_type
    inst.fields[1] = src;
    inst.fields[2] = static_cast<uint64_t>(count);
    inst.fields[3] = static_cast<uint64_t>(from);
    inst.fields[4] = static_cast<uint64_t>(to);
    return inst;
  }
  // Runs `inst` expecting an hlo::Error whose message contains `text`.
  template <class Fn>
  void ExpectError(Fn fn, const std::string& text) {
    try {
      fn();
      ADD_FAILURE() << "expected an error containing '" << text << "'";
    } catch (const hlo::Error& e) {
      EXPECT_NE(e.message().find(text), std::string::npos) << e.message();
    }
  }

  systolic::ArchConfig config_;
  Memories memories_;
  RegisterFile registers_{};
  WeightBuffers weights_;
};

// ---- matrix unit ----

TEST_F(FunctionalTest, Int8MatmulOverwriteThenAccumulate) {
  // A = [[1, 2, 3], [-4, 5, -6]], W = [[1, -1], [2, 0], [127, -128]]:
  // C = [[1+4+381, -1+0-384], [-4+10-762, 4+0+768]] = [[386, -385], [-756, 772]].
  Put<int8_t>(0, {1, -1, 2, 0, 127, -128});
  Put<int8_t>(64, {1, 2, 3, -4, 5, -6});
  Mxu(Ldw(0, 3, 2, Dtype::kS8));
  Mxu(Matmul(64, kAcc, 2, Dtype::kS8));
  EXPECT_EQ(Get<int32_t>(kAcc, 4), (std::vector<int32_t>{386, -385, -756, 772}));
  Mxu(Matmul(64, kAcc, 2, Dtype::kS8, /*acc=*/true));
  EXPECT_EQ(Get<int32_t>(kAcc, 4), (std::vector<int32_t>{772, -770, -1512, 1544}));
}

TEST_F(FunctionalTest, LongMatmulSpansSeveralRowBlocks) {
  // m = 150 rows (the model multiplies 64 at a time): A[i] = [a_i, 1] with a_i = i % 100 - 50,
  // W = [[1, 2, 3], [4, 5, 6]] -> C[i] = [a_i + 4, 2 a_i + 5, 3 a_i + 6]; acc=1 doubles it.
  Put<int8_t>(0, {1, 2, 3, 4, 5, 6});
  std::vector<int8_t> a;
  for (int i = 0; i < 150; ++i) {
    a.push_back(static_cast<int8_t>(i % 100 - 50));
    a.push_back(1);
  }
  Put<int8_t>(1024, a);
  Mxu(Ldw(0, 2, 3, Dtype::kS8));
  Mxu(Matmul(1024, kAcc, 150, Dtype::kS8));
  Mxu(Matmul(1024, kAcc, 150, Dtype::kS8, /*acc=*/true));
  std::vector<int32_t> c = Get<int32_t>(kAcc, 450);
  for (int i = 0; i < 150; ++i) {
    const int32_t x = i % 100 - 50;
    ASSERT_EQ(c[3 * i], 2 * (x + 4)) << "row " << i;
    ASSERT_EQ(c[3 * i + 1], 2 * (2 * x + 5)) << "row " << i;
    ASSERT_EQ(c[3 * i + 2], 2 * (3 * x + 6)) << "row " << i;
  }
}

TEST_F(FunctionalTest, Int8AccumulatorWraps) {
  Put<int8_t>(0, {1});
  Put<int8_t>(64, {1});
  Put<int32_t>(kAcc, {std::numeric_limits<int32_t>::max()});
  Mxu(Ldw(0, 1, 1, Dtype::kS8));
  Mxu(Matmul(64, kAcc, 1, Dtype::kS8, true));
  EXPECT_EQ(Get<int32_t>(kAcc, 1)[0], std::numeric_limits<int32_t>::min());
}

TEST_F(FunctionalTest, Bf16AccumulatesInF32) {
  // 1 * 1 + 2^-9 * 1 = 1 + 2^-9: not a bf16 value, exact in the f32 accumulator.
  PutBf16(0, {1.0f, 1.0f});
  PutBf16(64, {1.0f, std::ldexp(1.0f, -9)});
  Mxu(Ldw(0, 2, 1, Dtype::kBf16));
  Mxu(Matmul(64, kAcc, 1, Dtype::kBf16));
  EXPECT_EQ(Get<float>(kAcc, 1)[0], 1.0f + std::ldexp(1.0f, -9));
}

TEST_F(FunctionalTest, F32AccumulatesInIncreasingK) {
  // ((0 + 1e8) + 1) + -1e8 = 0 in f32 (1e8 + 1 rounds back to 1e8); any other order gives 1.
  Put<float>(0, {1.0f, 1.0f, 1.0f});
  Put<float>(64, {1e8f, 1.0f, -1e8f});
  Mxu(Ldw(0, 3, 1, Dtype::kF32));
  Mxu(Matmul(64, kAcc, 1, Dtype::kF32));
  EXPECT_EQ(Get<float>(kAcc, 1)[0], 0.0f);
  Put<float>(64, {-1e8f, 1e8f, 1.0f});  // the same numbers reordered: ((0 - 1e8) + 1e8) + 1 = 1
  Mxu(Matmul(64, kAcc, 1, Dtype::kF32));
  EXPECT_EQ(Get<float>(kAcc, 1)[0], 1.0f);
}

TEST_F(FunctionalTest, MatmulStrides) {
  // k=2 n=2 s8. Weight rows 4 bytes apart, activation rows 8 bytes apart, output rows 16 apart.
  SetRegister(systolic::ConfigRegister::kMxuSrcRowStride, 4);
  Put<int8_t>(0, {1, 2, 99, 99, 3, 4});  // W = [[1, 2], [3, 4]]
  Mxu(Ldw(0, 2, 2, Dtype::kS8));
  SetRegister(systolic::ConfigRegister::kMxuSrcRowStride, 8);
  SetRegister(systolic::ConfigRegister::kMxuDstRowStride, 16);
  Put<int8_t>(64, {1, 1, 0, 0, 0, 0, 0, 0, 2, -1});  // A = [[1, 1], [2, -1]]
  Mxu(Matmul(64, kAcc, 2, Dtype::kS8));
  EXPECT_EQ(Get<int32_t>(kAcc, 2), (std::vector<int32_t>{4, 6}));          // row 0
  EXPECT_EQ(Get<int32_t>(kAcc | 16, 2), (std::vector<int32_t>{-1, 0}));    // row 1: 2-3, 4-4
}

Instruction ConvInst(uint64_t src, uint64_t dst, int64_t in_h, int64_t in_w, int64_t kh,
                     int64_t kw, int64_t stride, Dtype dtype) {
  Instruction inst = systolic::MakeInstruction(Opcode::kMxuConv);
  using F = systolic::MxuConvField;
  inst.set(F::src, src);
  inst.set(F::dst, dst);
  inst.set(F::in_h, in_h);
  inst.set(F::in_w, in_w);
  inst.set(F::kh, kh);
  inst.set(F::kw, kw);
  inst.set(F::stride, stride);
  inst.set(F::dtype, static_cast<uint64_t>(dtype));
  return inst;
}

TEST_F(FunctionalTest, ConvImplicitIm2col) {
  // 3x3x1 input 1..9, 2x2 kernel, W = [1, 10, 100, 1000] in (kh, kw) order:
  // out(0,0) = 1 + 20 + 400 + 5000 = 5421, (0,1) = 2 + 30 + 500 + 6000 = 6532,
  // (1,0) = 4 + 50 + 700 + 8000 = 8754, (1,1) = 5 + 60 + 800 + 9000 = 9865.
  Put<float>(0, {1, 10, 100, 1000});
  Put<float>(256, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Mxu(Ldw(0, 4, 1, Dtype::kF32));
  Mxu(ConvInst(256, kAcc, 3, 3, 2, 2, 1, Dtype::kF32));
  EXPECT_EQ(Get<float>(kAcc, 4), (std::vector<float>{5421, 6532, 8754, 9865}));
}

TEST_F(FunctionalTest, ConvChannelsAreInnermost) {
  // 1x2x2 HWC input [x(0,0,0)=1, x(0,0,1)=2, x(0,1,0)=3, x(0,1,1)=4], 1x2 kernel, cin = 4/2 = 2:
  // k order (kw, cin): 1*1 + 2*10 + 3*100 + 4*1000 = 4321.
  Put<float>(0, {1, 10, 100, 1000});
  Put<float>(256, {1, 2, 3, 4});
  Mxu(Ldw(0, 4, 1, Dtype::kF32));
  Mxu(ConvInst(256, kAcc, 1, 2, 1, 2, 1, Dtype::kF32));
  EXPECT_EQ(Get<float>(kAcc, 1)[0], 4321.0f);
}

TEST_F(FunctionalTest, ConvStrideAndRowStride) {
  // 2 x 5 x 1 input whose rows are 8 bytes apart (s8), 1x1 kernel (k=1, W=[2]), stride 2:
  // out 1 x 3 = 2 * [x(0,0), x(0,2), x(0,4)] = [2, 6, 10]. Output pixels 8 bytes apart.
  Put<int8_t>(0, {2});
  Put<int8_t>(256, {1, 2, 3, 4, 5, 0, 0, 0, 6, 7, 8, 9, 10});
  Mxu(Ldw(0, 1, 1, Dtype::kS8));
  Put<int32_t>(kAcc, {0, 0, 0, 0, 0});  // the gaps between output pixels stay 0
  SetRegister(systolic::ConfigRegister::kMxuSrcRowStride, 8);
  SetRegister(systolic::ConfigRegister::kMxuDstRowStride, 8);
  Mxu(ConvInst(256, kAcc, 2, 5, 1, 1, 2, Dtype::kS8));
  EXPECT_EQ(Get<int32_t>(kAcc, 5), (std::vector<int32_t>{2, 0, 6, 0, 10}));
}

TEST_F(FunctionalTest, MxuErrors) {
  Put<int8_t>(0, std::vector<int8_t>(64, 1));
  ExpectError([&] { Mxu(Ldw(0, 9, 2, Dtype::kS8)); }, "does not fit the 8 x 8 array");
  ExpectError([&] { Mxu(Ldw(0, 2, 2, Dtype::kU8)); }, "multiplies s8, bf16 or f32, not u8");
  ExpectError([&] { Mxu(Matmul(0, kAcc, 1, Dtype::kS8)); }, "weight buffer 0 was never loaded");
  Mxu(Ldw(0, 2, 2, Dtype::kS8));
  ExpectError([&] { Mxu(Matmul(0, kAcc, 1, Dtype::kBf16)); },
              "activations are bf16 but weight buffer 0 holds s8");
  ExpectError([&] { Mxu(Matmul(0, 0x100, 1, Dtype::kS8)); }, "dst must be an accumulator");
  ExpectError([&] { Mxu(Matmul(kAcc, kAcc, 1, Dtype::kS8)); }, "src must be a unified buffer");
  // Accumulating onto accumulators never written: the memory refuses the read.
  EXPECT_THROW(Mxu(Matmul(0, kAcc | 0x400, 1, Dtype::kS8, true)), hlo::Error);
  ExpectError([&] { Mxu(ConvInst(0, kAcc, 3, 3, 3, 3, 1, Dtype::kS8)); },
              "is not a multiple of kh*kw=9");
  config_.mxu_dtypes = systolic::kMxuInt8;
  ExpectError([&] { Mxu(Ldw(0, 2, 2, Dtype::kF32)); }, "does not support f32");
}

// ---- vector unit ----

TEST_F(FunctionalTest, IntegerArithmeticWraps) {
  Put<int8_t>(0, {100, -128});
  Put<int8_t>(16, {100, -1});
  Vec(Binary(Opcode::kVAdd, 32, 0, 16, 2, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(32, 2), (std::vector<int8_t>{-56, 127}));  // 200 - 256, -129 + 256
  Put<uint8_t>(0, {3});
  Put<uint8_t>(16, {5});
  Vec(Binary(Opcode::kVSub, 32, 0, 16, 1, Dtype::kU8));
  EXPECT_EQ(Get<uint8_t>(32, 1)[0], 254);
  Put<int32_t>(0, {65536, -7});
  Put<int32_t>(16, {65536, 3});
  Vec(Binary(Opcode::kVMul, 32, 0, 16, 2, Dtype::kS32));
  EXPECT_EQ(Get<int32_t>(32, 2), (std::vector<int32_t>{0, -21}));  // 2^32 wraps to 0
}

// The f32 add/sub/mul path (no per-element dtype dispatch): IEEE single results, specials and
// signed zeros included, operands aliasing the destination.
TEST_F(FunctionalTest, F32ArithmeticIsSinglePrecisionIeee) {
  const float inf = std::numeric_limits<float>::infinity();
  Put<float>(0, {1.0f, 0.1f, inf, -0.0f, 3e38f});
  Put<float>(32, {std::ldexp(1.0f, -24), 0.2f, -inf, 0.0f, 3e38f});
  Vec(Binary(Opcode::kVAdd, 64, 0, 32, 5, Dtype::kF32));
  const std::vector<float> sum = Get<float>(64, 5);
  EXPECT_EQ(sum[0], 1.0f);  // 1 + 2^-24 is a tie: rounds to the even 1
  EXPECT_EQ(sum[1], 0.1f + 0.2f);
  EXPECT_NE(static_cast<double>(sum[1]), 0.1 + 0.2);  // rounded to f32, not computed in double
  EXPECT_TRUE(std::isnan(sum[2]));
  EXPECT_FALSE(std::signbit(sum[3]));  // -0 + +0 = +0
  EXPECT_EQ(sum[4], inf);              // overflows
  Vec(Binary(Opcode::kVSub, 64, 0, 32, 5, Dtype::kF32));
  const std::vector<float> difference = Get<float>(64, 5);
  EXPECT_EQ(difference[0], 1.0f - std::ldexp(1.0f, -24));  // exactly representable
  EXPECT_EQ(difference[2], inf);
  EXPECT_TRUE(std::signbit(difference[3]));  // -0 - +0 = -0
  EXPECT_EQ(difference[4], 0.0f);
  Vec(Binary(Opcode::kVMul, 0, 0, 0, 5, Dtype::kF32));  // x = x * x in place
  const std::vector<float> square = Get<float>(0, 5);
  EXPECT_EQ(square[1], 0.1f * 0.1f);
  EXPECT_EQ(square[2], inf);
  EXPECT_FALSE(std::signbit(square[3]));
  EXPECT_EQ(square[4], inf);
}

TEST_F(FunctionalTest, Bf16RoundsTiesToEven) {
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to the even 1.
  // (1 + 2^-7) + 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): 1 + 2^-6.
  PutBf16(0, {1.0f, 1.0f + std::ldexp(1.0f, -7)});
  PutBf16(16, {std::ldexp(1.0f, -8), std::ldexp(1.0f, -8)});
  Vec(Binary(Opcode::kVAdd, 32, 0, 16, 2, Dtype::kBf16));
  EXPECT_EQ(GetBf16(32, 2), (std::vector<float>{1.0f, 1.0f + std::ldexp(1.0f, -6)}));
}

TEST_F(FunctionalTest, MaxMinPropagateNaNAndOrderZeros) {
  Put<float>(0, {kNaN, 1.0f, -0.0f, 2.0f});
  Put<float>(16, {1.0f, kNaN, 0.0f, -3.0f});
  Vec(Binary(Opcode::kVMax, 32, 0, 16, 4, Dtype::kF32));
  std::vector<float> max = Get<float>(32, 4);
  EXPECT_TRUE(std::isnan(max[0]));
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_EQ(max[2], 0.0f);
  EXPECT_FALSE(std::signbit(max[2]));  // max(-0, +0) = +0
  EXPECT_EQ(max[3], 2.0f);
  Vec(Binary(Opcode::kVMin, 32, 0, 16, 4, Dtype::kF32));
  std::vector<float> min = Get<float>(32, 4);
  EXPECT_TRUE(std::isnan(min[0]) && std::isnan(min[1]));
  EXPECT_TRUE(std::signbit(min[2]));  // min(-0, +0) = -0
  EXPECT_EQ(min[3], -3.0f);
  PutBf16(64, {kNaN, 1.0f});
  PutBf16(80, {5.0f, 2.0f});
  Vec(Binary(Opcode::kVMax, 96, 64, 80, 2, Dtype::kBf16));
  std::vector<float> bf = GetBf16(96, 2);
  EXPECT_TRUE(std::isnan(bf[0]));
  EXPECT_EQ(bf[1], 2.0f);
}

TEST_F(FunctionalTest, CompareGivesPredBytes) {
  Put<float>(0, {1.0f, kNaN, 2.0f});
  Put<float>(16, {2.0f, kNaN, 2.0f});
  Instruction lt = Binary(Opcode::kVCmp, 32, 0, 16, 3, Dtype::kF32);
  lt.set(systolic::VCmpField::cmp, static_cast<uint64_t>(systolic::CompareDirection::kLt));
  Vec(lt);
  EXPECT_EQ(Get<uint8_t>(32, 3), (std::vector<uint8_t>{1, 0, 0}));
  Instruction ne = lt;
  ne.set(systolic::VCmpField::cmp, static_cast<uint64_t>(systolic::CompareDirection::kNe));
  Vec(ne);
  EXPECT_EQ(Get<uint8_t>(32, 3), (std::vector<uint8_t>{1, 1, 0}));  // NaN != NaN
  Put<uint8_t>(48, {255});
  Put<uint8_t>(49, {1});
  Instruction gt = Binary(Opcode::kVCmp, 50, 48, 49, 1, Dtype::kU8);
  gt.set(systolic::VCmpField::cmp, static_cast<uint64_t>(systolic::CompareDirection::kGt));
  Vec(gt);
  EXPECT_EQ(Get<uint8_t>(50, 1)[0], 1);  // unsigned: 255 > 1
  Vec(Binary(Opcode::kVCmp, 50, 48, 49, 1, Dtype::kS8));  // eq (cmp 0): -1 == 1 is false
  EXPECT_EQ(Get<uint8_t>(50, 1)[0], 0);
}

TEST_F(FunctionalTest, SelectBlends) {
  Put<int32_t>(0, {10, 20, 30});    // dst: the on-false values
  Put<uint8_t>(16, {1, 0, 1});      // mask
  Put<int32_t>(32, {-1, -2, -3});   // src
  Instruction sel = systolic::MakeInstruction(Opcode::kVSel);
  sel.set(systolic::VSelField::dst, 0);
  sel.set(systolic::VSelField::mask, 16);
  sel.set(systolic::VSelField::src, 32);
  sel.set(systolic::VSelField::count, 3);
  sel.set(systolic::VSelField::dtype, static_cast<uint64_t>(Dtype::kS32));
  Vec(sel);
  EXPECT_EQ(Get<int32_t>(0, 3), (std::vector<int32_t>{-1, 20, -3}));
}

TEST_F(FunctionalTest, UnaryOpsAndMovBetweenMemories) {
  Put<float>(0, {0.0f, 4.0f, -2.0f});
  Vec(Unary(Opcode::kVMov, kAcc | 0x40, 0, 3, Dtype::kF32));
  Vec(Unary(Opcode::kVRsqrt, 32, kAcc | 0x40, 2, Dtype::kF32));
  std::vector<float> rsqrt = Get<float>(32, 2);
  EXPECT_TRUE(std::isinf(rsqrt[0]));  // 1 / sqrt(0)
  EXPECT_EQ(rsqrt[1], 0.5f);
  Vec(Unary(Opcode::kVRecip, 32, 0, 3, Dtype::kF32));
  EXPECT_EQ(Get<float>(32, 3)[2], -0.5f);
  PutBf16(64, {0.0f, 1.0f});
  Vec(Unary(Opcode::kVExp, 80, 64, 2, Dtype::kBf16));
  // e = 2.71828...: bf16 neighbours 2.703125 and 2.71875; nearer is 2.71875.
  EXPECT_EQ(GetBf16(80, 2), (std::vector<float>{1.0f, 2.71875f}));
  Vec(Unary(Opcode::kVTanh, 80, 64, 2, Dtype::kBf16));
  EXPECT_EQ(GetBf16(80, 2)[1], Bf16BitsToFloat(FloatToBf16Bits(std::tanh(1.0f))));
  ExpectError([&] { Vec(Unary(Opcode::kVExp, 80, 0, 1, Dtype::kS8)); },
              "vexp: dtype s8 is not supported");
  // Reading accumulators that were never written.
  EXPECT_THROW(Vec(Unary(Opcode::kVMov, 0, kAcc | 0x1000, 4, Dtype::kF32)), hlo::Error);
}

TEST_F(FunctionalTest, OperandsMayAliasTheDestination) {
  Put<int32_t>(0, {1, 2, 3});
  Vec(Binary(Opcode::kVAdd, 0, 0, 0, 3, Dtype::kS32));  // x = x + x in place
  EXPECT_EQ(Get<int32_t>(0, 3), (std::vector<int32_t>{2, 4, 6}));
}

TEST_F(FunctionalTest, Fill) {
  Instruction fill = systolic::MakeInstruction(Opcode::kVFill);
  fill.set(systolic::VFillField::dst, 0);
  fill.set(systolic::VFillField::count, 3);
  fill.set(systolic::VFillField::dtype, static_cast<uint64_t>(Dtype::kBf16));
  fill.set(systolic::VFillField::value, 0x3f80);
  Vec(fill);
  EXPECT_EQ(GetBf16(0, 3), (std::vector<float>{1.0f, 1.0f, 1.0f}));
  fill.set(systolic::VFillField::dtype, static_cast<uint64_t>(Dtype::kPred));
  fill.set(systolic::VFillField::value, 2);
  ExpectError([&] { Vec(fill); }, "pred value must be 0 or 1");
}

TEST_F(FunctionalTest, ConvertFloatToIntRoundsEvenSaturatesNaNToZero) {
  Put<float>(0, {2.5f, 3.5f, -2.5f, 300.0f, -300.0f, kNaN, -0.6f});
  Vec(Convert(Opcode::kVCvt, 64, 0, 7, Dtype::kF32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(64, 7), (std::vector<int8_t>{2, 4, -2, 127, -128, 0, -1}));
  Vec(Convert(Opcode::kVCvt, 64, 0, 7, Dtype::kF32, Dtype::kU8));
  EXPECT_EQ(Get<uint8_t>(64, 7), (std::vector<uint8_t>{2, 4, 0, 255, 0, 0, 0}));
}

TEST_F(FunctionalTest, ConvertToSixteenBitFloats) {
  // f32 -> bf16: 1 + 2^-8 ties to 1; 1 + 3*2^-8 ties to the even 1 + 2^-6; NaN stays NaN.
  Put<float>(0, {1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8), kNaN});
  Vec(Convert(Opcode::kVCvt, 64, 0, 3, Dtype::kF32, Dtype::kBf16));
  std::vector<float> bf = GetBf16(64, 3);
  EXPECT_EQ(bf[0], 1.0f);
  EXPECT_EQ(bf[1], 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(bf[2]));
  // s32 -> bf16 rounds once: 2^24 + 2^16 + 1 is just above the midpoint of 2^24 and 2^24 + 2^17,
  // so it rounds up (through f32 first it would tie down to 2^24).
  Put<int32_t>(16, {(1 << 24) + (1 << 16) + 1});
  Vec(Convert(Opcode::kVCvt, 80, 16, 1, Dtype::kS32, Dtype::kBf16));
  EXPECT_EQ(GetBf16(80, 1)[0], 16908288.0f);
  // f32 -> f16: 65520 rounds to infinity, 1/3 to 0x3555.
  Put<float>(32, {65520.0f, 1.0f / 3.0f});
  Vec(Convert(Opcode::kVCvt, 96, 32, 2, Dtype::kF32, Dtype::kF16));
  EXPECT_EQ(Get<uint16_t>(96, 2), (std::vector<uint16_t>{0x7c00, 0x3555}));
}

TEST_F(FunctionalTest, ConvertIntegersSaturateAndPred) {
  Put<int32_t>(0, {200, -200, 5});
  Vec(Convert(Opcode::kVCvt, 64, 0, 3, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(64, 3), (std::vector<int8_t>{127, -128, 5}));
  Put<int8_t>(16, {-5, 7});
  Vec(Convert(Opcode::kVCvt, 80, 16, 2, Dtype::kS8, Dtype::kU8));
  EXPECT_EQ(Get<uint8_t>(80, 2), (std::vector<uint8_t>{0, 7}));
  Put<float>(32, {kNaN, 0.0f, -0.0f, 0.25f});
  Vec(Convert(Opcode::kVCvt, 96, 32, 4, Dtype::kF32, Dtype::kPred));
  EXPECT_EQ(Get<uint8_t>(96, 4), (std::vector<uint8_t>{1, 0, 0, 1}));  // != 0
  Vec(Convert(Opcode::kVCvt, 112, 96, 2, Dtype::kPred, Dtype::kF32));
  EXPECT_EQ(Get<float>(112, 2), (std::vector<float>{1.0f, 0.0f}));
  ExpectError([&] { Vec(Convert(Opcode::kVCvt, 0, 0, 1, Dtype::kF32, static_cast<Dtype>(9))); },
              "dst_type 9 is not a dtype");
}

TEST_F(FunctionalTest, Requantize) {
  // scale 0.5, zero point -3: 5 -> 2.5 -> 2 - 3 = -1; 7 -> 3.5 -> 4 - 3 = 1;
  // -5 -> -2.5 -> -2 - 3 = -5; 1000 -> 497 -> 127; -1000 -> -503 -> -128.
  SetRegister(systolic::ConfigRegister::kQuantScale, std::bit_cast<uint32_t>(0.5f));
  SetRegister(systolic::ConfigRegister::kQuantZeroPoint, static_cast<uint32_t>(-3));
  Put<int32_t>(kAcc, {5, 7, -5, 1000, -1000});
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 5, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 5), (std::vector<int8_t>{-1, 1, -5, 127, -128}));
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 5, Dtype::kS32, Dtype::kU8));
  EXPECT_EQ(Get<uint8_t>(0, 5), (std::vector<uint8_t>{0, 1, 0, 255, 0}));
  ExpectError([&] { Vec(Convert(Opcode::kVRequant, 0, kAcc, 1, Dtype::kS32, Dtype::kF32)); },
              "dst_type f32 is not supported");
}

TEST_F(FunctionalTest, RequantizeWithFusedRelu) {
  // quant.relu: results below the zero point become the zero point, before saturation.
  // Zero point -3, scale 0.5: 5 -> -1; 7 -> 1; -5 -> -5 -> -3; 1000 -> 127; -1000 -> -3.
  SetRegister(systolic::ConfigRegister::kQuantScale, std::bit_cast<uint32_t>(0.5f));
  SetRegister(systolic::ConfigRegister::kQuantZeroPoint, static_cast<uint32_t>(-3));
  SetRegister(systolic::ConfigRegister::kQuantRelu, 1);
  Put<int32_t>(kAcc, {5, 7, -5, 1000, -1000});
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 5, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 5), (std::vector<int8_t>{-1, 1, -3, 127, -3}));
  // Zero point 0 is ReLU: -1000 -> 0, 3 -> 2 (1.5 rounds to even).
  SetRegister(systolic::ConfigRegister::kQuantZeroPoint, 0);
  Put<int32_t>(kAcc, {-1000, 3});
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 2, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 2), (std::vector<int8_t>{0, 2}));
  // Off again: the plain saturating result.
  SetRegister(systolic::ConfigRegister::kQuantRelu, 0);
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 2, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 2), (std::vector<int8_t>{-128, 2}));
}

TEST_F(FunctionalTest, RequantizeFixedPoint) {
  // Mode 1, gemmlowp / TFLite single rounding: (x * 2^30 + 2^39) >> 40 = round-half-up(x / 1024).
  // 1536 -> 1.5 -> 2; -1536 -> -1.5 -> -1 (half up); 1535 -> 1; 2^31-1 -> 2^21 -> 127;
  // -2^31 -> -2^21 -> -128. Zero point 5 on top: 7, 4, 6, 127, -128.
  SetRegister(systolic::ConfigRegister::kQuantMode, 1);
  SetRegister(systolic::ConfigRegister::kQuantMultiplier, 1u << 30);
  SetRegister(systolic::ConfigRegister::kQuantShift, 40);
  SetRegister(systolic::ConfigRegister::kQuantZeroPoint, 5);
  Put<int32_t>(kAcc, {1536, -1536, 1535, INT32_MAX, INT32_MIN});
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 5, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 5), (std::vector<int8_t>{7, 4, 6, 127, -128}));
  // Mode 2 with multiplier 1: an arithmetic shift (floor). -1536 >> 10 = -2; 1535 >> 10 = 1.
  SetRegister(systolic::ConfigRegister::kQuantMode, 2);
  SetRegister(systolic::ConfigRegister::kQuantMultiplier, 1);
  SetRegister(systolic::ConfigRegister::kQuantShift, 10);
  SetRegister(systolic::ConfigRegister::kQuantZeroPoint, 0);
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 3, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 3), (std::vector<int8_t>{1, -2, 1}));
  // With the fused ReLU the negative result is raised to the zero point.
  SetRegister(systolic::ConfigRegister::kQuantRelu, 1);
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 3, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 3), (std::vector<int8_t>{1, 0, 1}));
  SetRegister(systolic::ConfigRegister::kQuantRelu, 0);
  // A float source or a shift beyond 62 is an error in the fixed-point modes, as is mode 3.
  ExpectError([&] { Vec(Convert(Opcode::kVRequant, 0, kAcc, 1, Dtype::kF32, Dtype::kS8)); },
              "needs an integer src_type");
  SetRegister(systolic::ConfigRegister::kQuantShift, 63);
  ExpectError([&] { Vec(Convert(Opcode::kVRequant, 0, kAcc, 1, Dtype::kS32, Dtype::kS8)); },
              "quant.shift <= 62");
  SetRegister(systolic::ConfigRegister::kQuantMode, 3);
  ExpectError([&] { Vec(Convert(Opcode::kVRequant, 0, kAcc, 1, Dtype::kS32, Dtype::kS8)); },
              "quant.mode 3 is not a mode");
}

TEST_F(FunctionalTest, RequantizePostScaleRoundsTwice) {
  // AQT's dequantize-then-requantize: f32(x) * a rounded to f32, then * b rounded again.
  // 3 * (1/3.f) = 1.0000000298 rounds to 1.0f; * 2.5 = 2.5 -> 2 (half to even).
  SetRegister(systolic::ConfigRegister::kQuantScale, std::bit_cast<uint32_t>(1.0f / 3.0f));
  SetRegister(systolic::ConfigRegister::kQuantPostScale, std::bit_cast<uint32_t>(2.5f));
  Put<int32_t>(kAcc, {3, -3, 300});
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 3, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 3), (std::vector<int8_t>{2, -2, 127}));
  SetRegister(systolic::ConfigRegister::kQuantPostScale, 0);  // none: round(3 * (1/3.f)) = 1
  Vec(Convert(Opcode::kVRequant, 0, kAcc, 1, Dtype::kS32, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0, 1), (std::vector<int8_t>{1}));
}

TEST_F(FunctionalTest, ShiftsAndBitwiseOnNarrowTypes) {
  // u8: vshra fills with the top bit (0x80 >> 1 = 0xC0); vshrl with zeros; vshl wraps.
  Put<uint8_t>(0, {0x80, 0x81, 0x0F, 0xFF});
  Put<uint8_t>(0x100, {1, 7, 4, 8});
  Vec(Binary(Opcode::kVShra, 0x200, 0, 0x100, 4, Dtype::kU8));
  EXPECT_EQ(Get<uint8_t>(0x200, 4), (std::vector<uint8_t>{0xC0, 0xFF, 0x00, 0xFF}));
  Vec(Binary(Opcode::kVShrl, 0x200, 0, 0x100, 4, Dtype::kU8));
  EXPECT_EQ(Get<uint8_t>(0x200, 4), (std::vector<uint8_t>{0x40, 0x01, 0x00, 0x00}));
  Vec(Binary(Opcode::kVShl, 0x200, 0, 0x100, 4, Dtype::kU8));
  EXPECT_EQ(Get<uint8_t>(0x200, 4), (std::vector<uint8_t>{0x00, 0x80, 0xF0, 0x00}));
  // s8: an amount of -1 reads as 255, beyond the width.
  Put<int8_t>(0, {-100, 100, -1, 3});
  Put<int8_t>(0x100, {-1, -1, 2, 1});
  Vec(Binary(Opcode::kVShra, 0x200, 0, 0x100, 4, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0x200, 4), (std::vector<int8_t>{-1, 0, -1, 1}));
  Vec(Binary(Opcode::kVXor, 0x200, 0, 0x100, 4, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(0x200, 4), (std::vector<int8_t>{99, -101, -3, 2}));
  ExpectError([&] { Vec(Binary(Opcode::kVAnd, 0x200, 0, 0x100, 1, Dtype::kF32)); },
              "is not supported (needs s8, u8 or s32)");
}

Instruction RowInst(Opcode op, uint64_t dst, uint64_t src, int64_t rows, int64_t cols, Dtype dtype) {
  Instruction inst = systolic::MakeInstruction(op);
  inst.fields[0] = dst;  // vredsum, vredmax, vbcast share dst, src, rows, cols, dtype
  inst.fields[1] = src;
  inst.fields[2] = static_cast<uint64_t>(rows);
  inst.fields[3] = static_cast<uint64_t>(cols);
  inst.fields[4] = static_cast<uint64_t>(dtype);
  return inst;
}

TEST_F(FunctionalTest, RowReductions) {
  // s8 rows: [100, 100, -10] -> 190 wraps to -66; [1, 2, 3] -> 6.
  Put<int8_t>(0, {100, 100, -10, 1, 2, 3});
  Vec(RowInst(Opcode::kVRedSum, 16, 0, 2, 3, Dtype::kS8));
  EXPECT_EQ(Get<int8_t>(16, 2), (std::vector<int8_t>{-66, 6}));
  // bf16 sums round after every add: 1 + 2^-8 ties to 1, twice -> 1 (f32 would give 1 + 2^-7).
  PutBf16(32, {1.0f, std::ldexp(1.0f, -8), std::ldexp(1.0f, -8)});
  Vec(RowInst(Opcode::kVRedSum, 64, 32, 1, 3, Dtype::kBf16));
  EXPECT_EQ(GetBf16(64, 1)[0], 1.0f);
  // vredmax: a NaN anywhere in a row wins; -0 < +0.
  Put<float>(128, {1.0f, kNaN, 3.0f, -0.0f, 0.0f, -1.0f});
  Vec(RowInst(Opcode::kVRedMax, 192, 128, 2, 3, Dtype::kF32));
  std::vector<float> max = Get<float>(192, 2);
  EXPECT_TRUE(std::isnan(max[0]));
  EXPECT_EQ(max[1], 0.0f);
  EXPECT_FALSE(std::signbit(max[1]));
  ExpectError([&] { Vec(RowInst(Opcode::kVRedMax, 192, 128, 1, 0, Dtype::kF32)); },
              "cols must be at least 1");
}

TEST_F(FunctionalTest, Broadcast) {
  Put<int32_t>(0, {7, 8, 9});
  Instruction down = RowInst(Opcode::kVBcast, 64, 0, 2, 3, Dtype::kS32);
  Vec(down);  // per_row = 0: the vector repeated down 2 rows
  EXPECT_EQ(Get<int32_t>(64, 6), (std::vector<int32_t>{7, 8, 9, 7, 8, 9}));
  Instruction along = down;
  along.set(systolic::VBcastField::per_row, 1);  // each of 2 elements along its row of 3
  Vec(along);
  EXPECT_EQ(Get<int32_t>(64, 6), (std::vector<int32_t>{7, 7, 7, 8, 8, 8}));
}

TEST_F(FunctionalTest, VectorDtypeErrors) {
  ExpectError([&] { Vec(Binary(Opcode::kVAdd, 0, 0, 0, 1, Dtype::kPred)); },
              "vadd: dtype pred is not supported");
  ExpectError([&] { Vec(Binary(Opcode::kVAdd, 0, 0, 0, 1, static_cast<Dtype>(12))); },
              "dtype 12 is not a dtype");
  ExpectError([&] { ExecuteVector(systolic::MakeInstruction(Opcode::kMxuMatmul), registers_,
                                  memories_); },
              "mxu.matmul is not a vector-unit instruction");
}

// Bad input never crashes: every compute instruction with random field values (small addresses,
// so many of them get past the checks and run) either executes or throws hlo::Error, in the
// functional model and in ComputeCost alike. Run under ASan/UBSan this also checks the bounds.
TEST_F(FunctionalTest, RandomFieldsExecuteOrThrowHloError) {
  std::mt19937_64 rng(99);
  Put<uint8_t>(0, std::vector<uint8_t>(4096, 0x3c));  // UB and accumulators partly written
  Put<uint8_t>(kAcc, std::vector<uint8_t>(1024, 0x01));
  std::vector<systolic::Opcode> opcodes;
  for (const systolic::InstrInfo& info : systolic::AllInstructions()) {
    if (info.unit == systolic::Unit::kMxu || info.unit == systolic::Unit::kVector) {
      opcodes.push_back(info.opcode);
    }
  }
  int executed = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const systolic::InstrInfo& info =
        systolic::GetInstrInfo(opcodes[rng() % opcodes.size()]);
    Instruction inst = systolic::MakeInstruction(info.opcode);
    for (size_t f = 0; f < info.fields.size(); ++f) {
      const systolic::FieldInfo& field = info.fields[f];
      uint64_t value = rng() & field.max_value();
      if (field.kind == systolic::FieldKind::kLocal) {
        value = (rng() % 2 ? kAcc : 0) | (rng() % 8192);  // mostly inside the memories
      } else if (field.kind == systolic::FieldKind::kImmediate && rng() % 4 != 0) {
        value %= 40;  // mostly small shapes, sometimes the field's full range
      } else if (field.kind == systolic::FieldKind::kDtype && rng() % 8 != 0) {
        value %= 7;
      }
      inst.fields[f] = value;
    }
    try {
      (void)ComputeCost(inst, config_, registers_, weights_);
      if (info.unit == systolic::Unit::kMxu) {
        Mxu(inst);
      } else {
        Vec(inst);
      }
      ++executed;
    } catch (const hlo::Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(executed, 300);  // the generator reaches the arithmetic, not only the checks
  EXPECT_GT(rejected, 300);
}

// The sorting network and the transpose unit: a full sort by stages, ties ordered by the
// payload, and the shapes they refuse.
TEST_F(FunctionalTest, BitonicStagesSortAndTransposeTurns) {
  Put<float>(0x0, {5, -0.0f, 3, 0.0f, -7, 3, 9, 1});
  Put<int32_t>(0x100, {0, 1, 2, 3, 4, 5, 6, 7});
  auto stage = [&](int k, int j, bool descending) {
    Instruction inst = systolic::MakeInstruction(Opcode::kVBitonic);
    inst.set(systolic::VBitonicField::keys, 0x0);
    inst.set(systolic::VBitonicField::payload, 0x100);
    inst.set(systolic::VBitonicField::count, 8);
    inst.set(systolic::VBitonicField::k, static_cast<uint64_t>(k));
    inst.set(systolic::VBitonicField::j, static_cast<uint64_t>(j));
    inst.set(systolic::VBitonicField::dtype, static_cast<uint64_t>(Dtype::kF32));
    inst.set(systolic::VBitonicField::descending, descending ? 1 : 0);
    inst.set(systolic::VBitonicField::has_payload, 1);
    return inst;
  };
  for (int k = 1; k <= 3; ++k) {
    for (int j = k - 1; j >= 0; --j) Vec(stage(k, j, /*descending=*/true));
  }
  // Largest first; -0 after +0 in the total order; the two 3s by index.
  EXPECT_EQ(Get<float>(0x0, 8), (std::vector<float>{9, 5, 3, 3, 1, 0.0f, -0.0f, -7}));
  EXPECT_EQ(Get<int32_t>(0x100, 8), (std::vector<int32_t>{6, 0, 2, 5, 7, 3, 1, 4}));
  EXPECT_TRUE(std::signbit(Get<float>(0x0, 8)[6]));
  Instruction bad = stage(1, 0, false);
  bad.set(systolic::VBitonicField::count, 6);
  ExpectError([&] { Vec(bad); }, "is not a stage of a power-of-two sort");

  Put<int32_t>(0x200, {1, 2, 3, 4, 5, 6});
  Instruction turn = systolic::MakeInstruction(Opcode::kVTrans);
  turn.set(systolic::VTransField::dst, 0x300);
  turn.set(systolic::VTransField::src, 0x200);
  turn.set(systolic::VTransField::rows, 3);
  turn.set(systolic::VTransField::cols, 2);
  turn.set(systolic::VTransField::dtype, static_cast<uint64_t>(Dtype::kS32));
  Vec(turn);
  EXPECT_EQ(Get<int32_t>(0x300, 6), (std::vector<int32_t>{1, 3, 5, 2, 4, 6}));
  turn.set(systolic::VTransField::dst, 0x208);
  ExpectError([&] { Vec(turn); }, "the source and the destination overlap");
}

}  // namespace
}  // namespace simulator

// int8 requantization as frameworks spell it, on the accelerator: each idiom after an s8 dot is
// one vrequant out of the accumulators (the dot's epilogue), bit-exact against the
// interpreter on signed accumulators, with zero points, inner bounds and ReLU in every place
// the idioms put it; spellings that would wrap an HLO integer are not taken for the idiom.
// Integer shifts and bitwise logic run on the vector unit, and so do converts to and from
// pred (0 or 1; x != 0), which vcvt computes exactly.
#include <gtest/gtest.h>

#include <string>

#include "tests/systolic/systolic_run_support.h"

namespace {

using systolic_testing::Outcome;

Outcome RunLayer(const std::string& text) {
  return systolic_testing::RunAgainstInterpreter(
      text,
      systolic::LoadArchConfig("tpu-v1", std::vector<std::string>{"array.rows=8", "array.cols=8"}),
      11);
}

// An s8 dot of signed activations (x - 8, x drawn in [0, 16)) and the requantize body `body`,
// a loop fusion from the s32 accumulators `p` to the s8 result `q`.
std::string Layer(const std::string& body) {
  return R"(HloModule m
requant {
  p = s32[6,12] parameter(0)
)" + body + R"(
}
ENTRY main {
  x = s8[6,20] parameter(0)
  eight = s8[] constant(8)
  e = s8[6,20] broadcast(eight), dimensions={}
  xs = s8[6,20] subtract(x, e)
  w = s8[20,12] parameter(1)
  d = s32[6,12] dot(xs, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT q = s8[6,12] fusion(d), kind=kLoop, calls=requant
})";
}

// gemmlowp / TFLite single rounding: ((s64(acc) * 2^30 + 2^34) >> 35) + zp = round(acc / 32) + zp.
std::string FixedPoint(int64_t multiplier, int64_t shift, int64_t zero_point, int64_t lo) {
  return R"(  w = s64[6,12] convert(p)
  m = s64[] constant()" + std::to_string(multiplier) + R"()
  mb = s64[6,12] broadcast(m), dimensions={}
  prod = s64[6,12] multiply(mb, w)
  nudge = s64[] constant()" + std::to_string(int64_t{1} << (shift - 1)) + R"()
  nb = s64[6,12] broadcast(nudge), dimensions={}
  a = s64[6,12] add(prod, nb)
  n = s64[] constant()" + std::to_string(shift) + R"()
  sb = s64[6,12] broadcast(n), dimensions={}
  sh = s64[6,12] shift-right-arithmetic(a, sb)
  y = s32[6,12] convert(sh)
  zp = s32[] constant()" + std::to_string(zero_point) + R"()
  zb = s32[6,12] broadcast(zp), dimensions={}
  z = s32[6,12] add(zb, y)
  lo = s32[] constant()" + std::to_string(lo) + R"()
  hi = s32[] constant(100)
  c = s32[6,12] clamp(lo, z, hi)
  ROOT q = s8[6,12] convert(c))";
}

void ExpectOneVrequantEpilogue(const Outcome& outcome) {
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0) << outcome.assembly;
  // subtract, and the dot with its requantize epilogue
  EXPECT_EQ(outcome.counters.at("native_instructions"), 3) << outcome.assembly;
  // The idiom is vrequant's, not a chain of f32 passes ending in a vcvt.
  EXPECT_NE(outcome.assembly.find("vrequant"), std::string::npos) << outcome.assembly;
  EXPECT_EQ(outcome.assembly.find("vcvt"), std::string::npos) << outcome.assembly;
}

TEST(SystolicRequantize, FixedPointWithZeroPointIsOneVrequant) {
  ExpectOneVrequantEpilogue(RunLayer(Layer(FixedPoint(1 << 30, 35, -3, -128))));
}

TEST(SystolicRequantize, FixedPointWithReluAtTheZeroPointIsOneVrequant) {
  ExpectOneVrequantEpilogue(RunLayer(Layer(FixedPoint(1 << 30, 35, -3, -3))));
}

TEST(SystolicRequantize, FixedPointThatCouldWrapIsNotTheIdiomAndStillMatches) {
  // M = 2^40 > 2^(n-1): y may exceed s32, where HLO's convert wraps and vrequant would not.
  const Outcome outcome = RunLayer(Layer(FixedPoint(int64_t{1} << 40, 35, 0, -128)));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_GE(outcome.counters.at("host_instructions"), 1);
}

TEST(SystolicRequantize, IntegerReluAndShiftIsOneVrequant) {
  ExpectOneVrequantEpilogue(RunLayer(Layer(R"(  zero = s32[] constant(0)
  zb = s32[6,12] broadcast(zero), dimensions={}
  r = s32[6,12] maximum(p, zb)
  four = s32[] constant(4)
  fb = s32[6,12] broadcast(four), dimensions={}
  s = s32[6,12] shift-right-arithmetic(r, fb)
  lo = s32[] constant(0)
  hi = s32[] constant(127)
  c = s32[6,12] clamp(lo, s, hi)
  ROOT q = s8[6,12] convert(c))")));
}

TEST(SystolicRequantize, SignedShiftWithInnerBoundsIsVrequantAndBounds) {
  // No ReLU: negative results floor (-5 >> 1 = -3); the bounds -100, 90 are inside s8.
  const Outcome outcome = RunLayer(Layer(R"(  one = s32[] constant(1)
  ob = s32[6,12] broadcast(one), dimensions={}
  s = s32[6,12] shift-right-arithmetic(p, ob)
  lo = s32[] constant(-100)
  hi = s32[] constant(90)
  c = s32[6,12] clamp(lo, s, hi)
  ROOT q = s8[6,12] convert(c))"));
  ExpectOneVrequantEpilogue(outcome);
}

TEST(SystolicRequantize, AqtDequantizeReluRequantizeIsOneVrequant) {
  // Two f32 products, each rounded (0.1 and 0.3 are inexact), ReLU between them.
  ExpectOneVrequantEpilogue(RunLayer(Layer(R"(  f = f32[6,12] convert(p)
  a = f32[] constant(0.1)
  ab = f32[6,12] broadcast(a), dimensions={}
  deq = f32[6,12] multiply(f, ab)
  zero = f32[] constant(0)
  zb = f32[6,12] broadcast(zero), dimensions={}
  r = f32[6,12] maximum(deq, zb)
  b = f32[] constant(0.3)
  bb = f32[6,12] broadcast(b), dimensions={}
  s = f32[6,12] multiply(bb, r)
  rn = f32[6,12] round-nearest-even(s)
  lo = f32[] constant(-127)
  hi = f32[] constant(127)
  c = f32[6,12] clamp(lo, rn, hi)
  ROOT q = s8[6,12] convert(c))")));
}

TEST(SystolicRequantize, AqtWithoutReluKeepsTheSymmetricLowerBound) {
  const Outcome outcome = RunLayer(Layer(R"(  f = f32[6,12] convert(p)
  a = f32[] constant(0.1)
  ab = f32[6,12] broadcast(a), dimensions={}
  deq = f32[6,12] multiply(f, ab)
  b = f32[] constant(0.3)
  bb = f32[6,12] broadcast(b), dimensions={}
  s = f32[6,12] multiply(deq, bb)
  rn = f32[6,12] round-nearest-even(s)
  lo = f32[] constant(-127)
  hi = f32[] constant(127)
  c = f32[6,12] clamp(lo, rn, hi)
  ROOT q = s8[6,12] convert(c))"));
  ExpectOneVrequantEpilogue(outcome);
}

TEST(SystolicRequantize, IntegerShiftsAndBitwiseLogicRunOnTheVectorUnit) {
  const Outcome outcome = RunLayer(R"(HloModule m
ENTRY main {
  a = s32[64] parameter(0)
  b = s32[64] parameter(1)
  shl = s32[64] shift-left(a, b)
  x = s32[64] xor(shl, a)
  n = s32[64] not(x)
  srl = s32[64] shift-right-logical(n, b)
  sra = s32[64] shift-right-arithmetic(n, b)
  o = s32[64] or(srl, b)
  ROOT r = s32[64] and(o, sra)
})");
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0) << outcome.assembly;
  EXPECT_NE(outcome.assembly.find("vshrl"), std::string::npos);
}

// Two layers in one segment, the first a fixed-point requantization with ReLU at zero point -3,
// the second a float one without ReLU: the second must not inherit quant.mode, quant.relu or
// the zero point (each op starts from reset registers, segment_builder.cc).
TEST(SystolicRequantize, EachLayerStartsFromResetQuantizationRegisters) {
  const std::string text = R"(HloModule m
fixed {
  p = s32[6,12] parameter(0)
)" + FixedPoint(1 << 30, 35, -3, -3) + R"(
}
scaled {
  p = s32[6,10] parameter(0)
  f = f32[6,10] convert(p)
  s = f32[] constant(0.0625)
  b = f32[6,10] broadcast(s), dimensions={}
  m = f32[6,10] multiply(f, b)
  r = f32[6,10] round-nearest-even(m)
  lo = f32[] constant(-128)
  hi = f32[] constant(127)
  c = f32[6,10] clamp(lo, r, hi)
  ROOT q = s8[6,10] convert(c)
}
ENTRY main {
  x = s8[6,20] parameter(0)
  eight = s8[] constant(8)
  e = s8[6,20] broadcast(eight), dimensions={}
  xs = s8[6,20] subtract(x, e)
  w1 = s8[20,12] parameter(1)
  d1 = s32[6,12] dot(xs, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q1 = s8[6,12] fusion(d1), kind=kLoop, calls=fixed
  e2 = s8[6,12] broadcast(eight), dimensions={}
  qs = s8[6,12] subtract(q1, e2)
  w2 = s8[12,10] parameter(2)
  d2 = s32[6,10] dot(qs, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT q2 = s8[6,10] fusion(d2), kind=kLoop, calls=scaled
})";
  const Outcome outcome = RunLayer(text);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0) << outcome.assembly;
  EXPECT_NE(outcome.assembly.find("cfg.set reg=quant.mode, value=0"), std::string::npos)
      << outcome.assembly;
}

TEST(SystolicRequantize, ConvertsToAndFromPredRunOnTheVectorUnit) {
  const Outcome outcome = RunLayer(R"(HloModule m
ENTRY main {
  a = f32[64] parameter(0)
  b = s32[64] parameter(1)
  z = f32[] constant(0.5)
  zb = f32[64] broadcast(z), dimensions={}
  p = pred[64] compare(a, zb), direction=GT
  c = s32[64] convert(p)
  d = bf16[64] convert(p)
  e = pred[64] convert(b)
  f = pred[64] convert(a)
  ROOT t = (s32[64], bf16[64], pred[64], pred[64]) tuple(c, d, e, f)
})");
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0) << outcome.assembly;
}

}  // namespace

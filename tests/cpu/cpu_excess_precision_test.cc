// CPU backend: bf16 fusions evaluated in f32 between their ops (targets/cpu/excess_precision.h),
// the f32-only exp for values rounded to bf16 (targets/llvm/llvm_math_fast.h) and softmax's exp
// kept in a row buffer instead of recomputed (thunk_builder_rows.cc). Results must stay within
// the bf16 tolerance of the interpreter (which rounds after every op), the fast exp within one
// bf16 ulp of the correctly rounded value over the whole range, and the fusions must still be
// one row kernel each.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "hlo/literal.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/test_support.h"

namespace {

using cpu_tests::Counter;
using hlo::PrimitiveType;

const char kCombiners[] = R"(
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max_bf16 { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT m = bf16[] maximum(a, b) }
)";

TEST(CpuExcessPrecision, Bf16LayerNormAndSoftmaxStayWithinBf16Tolerance) {
  // layer_norm_1x4096x768_bf16's fusion, smaller: bf16 subtract / multiply / sqrt / divide
  // between f32 reductions.
  const std::string layer_norm = std::string("HloModule ln\n") + kCombiners + R"(
ENTRY e {
  x = bf16[64,384] parameter(0)
  xf = f32[64,384] convert(x)
  zero = f32[] constant(0)
  sum = f32[64] reduce(xf, zero), dimensions={1}, to_apply=add_f32
  c384 = f32[] constant(384)
  n = f32[64] broadcast(c384), dimensions={}
  mean = f32[64] divide(sum, n)
  meanb = bf16[64] convert(mean)
  mb = bf16[64,384] broadcast(meanb), dimensions={0}
  d = bf16[64,384] subtract(x, mb)
  sq = bf16[64,384] multiply(d, d)
  sqf = f32[64,384] convert(sq)
  ss = f32[64] reduce(sqf, zero), dimensions={1}, to_apply=add_f32
  var = f32[64] divide(ss, n)
  varb = bf16[64] convert(var)
  c_eps = bf16[] constant(1e-5)
  eps = bf16[64] broadcast(c_eps), dimensions={}
  ve = bf16[64] add(varb, eps)
  sd = bf16[64] sqrt(ve)
  sdb = bf16[64,384] broadcast(sd), dimensions={0}
  ROOT y = bf16[64,384] divide(d, sdb)
})";
  // mha_block's softmax: bf16 max, bf16 exp summed in f32, a squeezed root.
  const std::string softmax = std::string("HloModule sm\n") + kCombiners + R"(
ENTRY e {
  x = bf16[1,6,33,129] parameter(0)
  c4 = bf16[] constant(4)
  four = bf16[1,6,33,129] broadcast(c4), dimensions={}
  s = bf16[1,6,33,129] multiply(x, four)
  ninf = bf16[] constant(-inf)
  mx = bf16[1,6,33] reduce(s, ninf), dimensions={3}, to_apply=max_bf16
  mxb = bf16[1,6,33,129] broadcast(mx), dimensions={0,1,2}
  d = bf16[1,6,33,129] subtract(s, mxb)
  ex = bf16[1,6,33,129] exponential(d)
  exf = f32[1,6,33,129] convert(ex)
  zero = f32[] constant(0)
  sum = f32[1,6,33] reduce(exf, zero), dimensions={3}, to_apply=add_f32
  sb = bf16[1,6,33] convert(sum)
  sbb = bf16[1,6,33,129] broadcast(sb), dimensions={0,1,2}
  q = bf16[1,6,33,129] divide(ex, sbb)
  ROOT r = bf16[6,33,129] reshape(q)
})";
  for (const std::string* text : {&layer_norm, &softmax}) {
    for (uint64_t seed : {0, 1, 2}) {
      cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(*text, seed);
      EXPECT_EQ(Counter(run, "kernels.row-fused"), 1) << *text;
      EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
    }
  }
}

TEST(CpuExcessPrecision, FastBf16ExpWithinOneUlpOverTheWholeRange) {
  // exp of every bf16 value in [-110, 95] (both signs of tiny values, denormal and overflowing
  // results) and of the specials, inside a row kernel (the reduce only makes it one; z = 0).
  constexpr int64_t kColumns = 512;
  std::vector<float> inputs;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float value = std::bit_cast<float>(bits << 16);
    if (std::isnan(value) || std::fabs(value) > 110.0f) continue;
    if (value > 95.0f) continue;
    inputs.push_back(value);
  }
  for (float special : {INFINITY, -INFINITY, NAN, 0.0f, -0.0f}) inputs.push_back(special);
  while (inputs.size() % kColumns != 0) inputs.push_back(1.0f);
  const auto rows = static_cast<int64_t>(inputs.size()) / kColumns;
  const std::string r = std::to_string(rows);
  const std::string c = std::to_string(kColumns);
  auto module = testing_support::ParseAndVerify(
      std::string("HloModule fast_exp\n") + kCombiners + "ENTRY e {\n" +
      "  x = bf16[" + r + "," + c + "] parameter(0)\n" +
      "  z = bf16[" + r + "," + c + "] parameter(1)\n" +
      "  zf = f32[" + r + "," + c + "] convert(z)\n" +
      "  zero = f32[] constant(0)\n" +
      "  s = f32[" + r + "] reduce(zf, zero), dimensions={1}, to_apply=add_f32\n" +
      "  sb = bf16[" + r + "] convert(s)\n" +
      "  sbb = bf16[" + r + "," + c + "] broadcast(sb), dimensions={0}\n" +
      "  ex = bf16[" + r + "," + c + "] exponential(x)\n" +
      "  ROOT y = bf16[" + r + "," + c + "] add(ex, sbb)\n}");
  hlo::Literal x(hlo::Shape::Array(PrimitiveType::kBF16, {rows, kColumns}));
  hlo::Literal z(hlo::Shape::Array(PrimitiveType::kBF16, {rows, kColumns}));
  for (size_t i = 0; i < inputs.size(); ++i) {
    x.SetFromDouble(static_cast<int64_t>(i), inputs[i]);
    z.SetFromDouble(static_cast<int64_t>(i), 0.0);
  }
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x, z});
  EXPECT_EQ(Counter(run, "kernels.row-fused"), 1);
  int64_t off_by_one = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double got = run.result.GetAsDouble(static_cast<int64_t>(i));
    // The correctly rounded bf16 of e^x (from double), by the literal's own rounding.
    hlo::Literal want_literal(hlo::Shape::Scalar(PrimitiveType::kBF16));
    want_literal.SetFromDouble(0, std::exp(static_cast<double>(inputs[i])));
    const double want = want_literal.GetAsDouble(0);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << inputs[i];
      continue;
    }
    if (got == want) continue;
    // One bf16 ulp of the larger one (a rounding tie flipped by the f32 approximation).
    const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(want), 1e-38)) - 7);
    EXPECT_LE(std::fabs(got - want), ulp * 1.0001) << "exp(" << inputs[i] << ")";
    ++off_by_one;
  }
  EXPECT_LT(off_by_one, static_cast<int64_t>(inputs.size()) / 100);  // rare, not systematic
}

TEST(CpuExcessPrecision, AnExplicitRoundingToBf16AndBackIsKept) {
  // x.astype(bf16).astype(f32) at the end of an f32 layer norm-like fusion (what JAX writes
  // for a user's explicit rounding): the bf16 value is only widened again, so the rounding is
  // the program's intent, kept as XLA:CPU keeps it. Every result must be a bf16 value, the
  // round-to-nearest-even of the f32 product (computed here by the literal's own rounding).
  auto module = testing_support::ParseAndVerify(std::string("HloModule explicit_rounding\n") +
                                                kCombiners + R"(
ENTRY e {
  x = f32[16,256] parameter(0)
  zero = f32[] constant(0)
  sum = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f32
  sb = f32[16,256] broadcast(sum), dimensions={0}
  p = f32[16,256] multiply(x, sb)
  r = bf16[16,256] convert(p)
  ROOT back = f32[16,256] convert(r)
})");
  hlo::Literal x(hlo::Shape::Array(PrimitiveType::kF32, {16, 256}));
  for (int64_t i = 0; i < 16 * 256; ++i) {
    x.SetFromDouble(i, 1.0 + 0.001 * static_cast<double>(i % 97));
  }
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x});
  int64_t rounded_away = 0;
  for (int64_t row = 0; row < 16; ++row) {
    float sum = 0;
    for (int64_t col = 0; col < 256; ++col) {
      sum += static_cast<float>(x.GetAsDouble(row * 256 + col));
    }
    for (int64_t col = 0; col < 256; ++col) {
      const int64_t i = row * 256 + col;
      const float product = static_cast<float>(x.GetAsDouble(i)) * sum;
      hlo::Literal want(hlo::Shape::Scalar(PrimitiveType::kBF16));
      want.SetFromDouble(0, product);
      const double got = run.result.GetAsDouble(i);
      // A sum in another order may differ in its last f32 bits and flip a rounding tie: the
      // result is then the neighbouring bf16 value, never an unrounded f32.
      hlo::Literal as_bf16(hlo::Shape::Scalar(PrimitiveType::kBF16));
      as_bf16.SetFromDouble(0, got);
      EXPECT_EQ(as_bf16.GetAsDouble(0), got) << "element " << i << " was not rounded to bf16";
      const double ulp = std::ldexp(1.0, std::ilogb(want.GetAsDouble(0)) - 7);
      EXPECT_LE(std::fabs(got - want.GetAsDouble(0)), ulp) << "element " << i;
      rounded_away += got != static_cast<double>(product);
    }
  }
  EXPECT_GT(rounded_away, 16 * 256 / 2);  // the rounding changed most values
}

}  // namespace

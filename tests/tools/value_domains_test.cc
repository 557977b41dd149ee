// Tests of io::InferFloatParameterDomains (value_domains.h) and of the random inputs drawn from
// it: positive values for variances, divisors and logs (through reshape, broadcast, calls and
// "+ eps"), LeCun-scaled kernels for dots and convolutions (fan-ins computed here by hand), the
// defaults everywhere else, and the domains of two real models from the corpus.
#include "tools/io/value_domains.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace {

using io::FloatDomain;

std::vector<FloatDomain> DomainsOf(const std::string& text) {
  return io::InferFloatParameterDomains(*testing_support::ParseAndVerify(text));
}

FloatDomain Positive() { return FloatDomain{true, 1.0}; }
FloatDomain Scaled(double fan_in) { return FloatDomain{false, 1.0 / std::sqrt(fan_in)}; }

// Sample mean and variance of an array's elements.
std::pair<double, double> Moments(const hlo::Literal& literal) {
  double sum = 0, sum_squares = 0;
  const double n = static_cast<double>(literal.element_count());
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    sum += literal.GetAsDouble(i);
    sum_squares += literal.GetAsDouble(i) * literal.GetAsDouble(i);
  }
  return {sum / n, sum_squares / n - (sum / n) * (sum / n)};
}

// Batch norm as JAX writes it: rsqrt(reshape(var) + broadcast(eps)).
constexpr char kBatchNorm[] = R"(HloModule bn
ENTRY main {
  x = f32[4,64] parameter(0)
  var = f32[64] parameter(1)
  mean = f32[64] parameter(2)
  r = f32[1,64] reshape(var)
  eps = f32[] constant(1.001e-05)
  e = f32[1,64] broadcast(eps), dimensions={}
  v = f32[1,64] add(r, e)
  s = f32[1,64] rsqrt(v)
  s2 = f32[64] reshape(s)
  sb = f32[4,64] broadcast(s2), dimensions={1}
  mb = f32[4,64] broadcast(mean), dimensions={1}
  c = f32[4,64] subtract(x, mb)
  ROOT y = f32[4,64] multiply(c, sb)
})";

TEST(ValueDomains, VarianceReachingRsqrtThroughReshapeAndEpsIsPositive) {
  auto domains = DomainsOf(kBatchNorm);
  ASSERT_EQ(domains.size(), 3u);
  EXPECT_EQ(domains[0], FloatDomain{});  // data
  EXPECT_EQ(domains[1], Positive());     // variance
  EXPECT_EQ(domains[2], FloatDomain{});  // mean: subtracted, any sign
}

TEST(ValueDomains, PositiveValuesAreDrawnInHalfToOneAndAHalf) {
  auto module = testing_support::ParseAndVerify(kBatchNorm);
  auto inputs = io::MakeRandomInputs(*module, 3);
  double lowest = 2, highest = 0;
  for (int64_t i = 0; i < inputs[1].element_count(); ++i) {
    lowest = std::min(lowest, inputs[1].GetAsDouble(i));
    highest = std::max(highest, inputs[1].GetAsDouble(i));
  }
  EXPECT_GE(lowest, 0.5);
  EXPECT_LT(highest, 1.5);
  EXPECT_LT(lowest, 0.6);  // spread over the interval (64 uniform draws)
  EXPECT_GT(highest, 1.4);
  // The data keeps its N(0, 1) draws: some negative.
  EXPECT_LT(Moments(inputs[0]).first - 3 * std::sqrt(Moments(inputs[0]).second), 0);
}

TEST(ValueDomains, SqrtLogDivisorAndFractionalPowerNeedPositiveValues) {
  auto domains = DomainsOf(R"(HloModule m
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[8] parameter(2)
  d = f32[8] parameter(3)
  e = f32[8] parameter(4)
  f = f32[8] parameter(5)
  sa = f32[8] sqrt(a)
  lb = f32[8] log(b)
  q = f32[8] divide(c, d)
  half = f32[] constant(0.5)
  h = f32[8] broadcast(half), dimensions={}
  pe = f32[8] power(e, h)
  two = f32[] constant(2)
  t = f32[8] broadcast(two), dimensions={}
  pf = f32[8] power(f, t)
  ROOT r = (f32[8], f32[8], f32[8], f32[8], f32[8]) tuple(sa, lb, q, pe, pf)
})");
  ASSERT_EQ(domains.size(), 6u);
  EXPECT_EQ(domains[0], Positive());     // sqrt
  EXPECT_EQ(domains[1], Positive());     // log
  EXPECT_EQ(domains[2], FloatDomain{});  // numerator
  EXPECT_EQ(domains[3], Positive());     // denominator
  EXPECT_EQ(domains[4], Positive());     // x ** 0.5
  EXPECT_EQ(domains[5], FloatDomain{});  // x ** 2 is defined for every x
}

TEST(ValueDomains, OnlyPositiveConstantsKeepTheSign) {
  // v - eps, v + w (w a parameter) and v + (-1) may turn a positive draw negative: no
  // constraint is inferred through them, so such parameters keep N(0, 1).
  auto domains = DomainsOf(R"(HloModule m
ENTRY main {
  v = f32[8] parameter(0)
  w = f32[8] parameter(1)
  u = f32[8] parameter(2)
  n = f32[8] parameter(3)
  eps = f32[] constant(0.001)
  e = f32[8] broadcast(eps), dimensions={}
  m1 = f32[] constant(-1)
  m = f32[8] broadcast(m1), dimensions={}
  d = f32[8] subtract(v, e)
  s = f32[8] add(w, u)
  k = f32[8] add(n, m)
  rd = f32[8] rsqrt(d)
  rs = f32[8] rsqrt(s)
  rk = f32[8] rsqrt(k)
  ROOT r = (f32[8], f32[8], f32[8]) tuple(rd, rs, rk)
})");
  ASSERT_EQ(domains.size(), 4u);
  for (const FloatDomain& domain : domains) EXPECT_EQ(domain, FloatDomain{});
}

TEST(ValueDomains, DotAndConvolutionKernelsAreScaledByTheirFanIn) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[16,64] parameter(0)
  w = f32[64,32] parameter(1)
  img = f32[1,8,8,16] parameter(2)
  k = f32[3,3,16,8] parameter(3)
  dw = f32[3,3,1,16] parameter(4)
  d = f32[16,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[1,6,6,8] convolution(img, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  g = f32[1,6,6,16] convolution(img, dw), window={size=3x3}, dim_labels=b01f_01io->b01f,
    feature_group_count=16
  ROOT r = (f32[16,32], f32[1,6,6,8], f32[1,6,6,16]) tuple(d, c, g)
})");
  auto domains = io::InferFloatParameterDomains(*module);
  ASSERT_EQ(domains.size(), 5u);
  EXPECT_EQ(domains[0], FloatDomain{});  // the dot's lhs: activations stay N(0, 1)
  EXPECT_EQ(domains[1], Scaled(64));     // contracted over 64
  EXPECT_EQ(domains[2], FloatDomain{});
  EXPECT_EQ(domains[3], Scaled(3 * 3 * 16));  // window x input features
  EXPECT_EQ(domains[4], Scaled(3 * 3 * 1));   // depthwise: one input feature per group

  // The drawn kernel has variance 1/64 (2048 draws: within 10%) and mean near 0.
  auto inputs = io::MakeRandomInputs(*module, 11);
  auto [mean, variance] = Moments(inputs[1]);
  EXPECT_NEAR(variance, 1.0 / 64, 0.1 / 64);
  EXPECT_LT(std::fabs(mean), 4 * std::sqrt(1.0 / 64 / 2048));
  EXPECT_NEAR(Moments(inputs[0]).second, 1.0, 0.15);  // 1024 unscaled draws
}

TEST(ValueDomains, BatchedDotsMultiplyActivationsAndKeepThemUnscaled) {
  // Attention: scores = q.k^T per head, out = p.v per head; no operand is a shared weight.
  auto domains = DomainsOf(R"(HloModule m
ENTRY main {
  q = f32[2,8,16] parameter(0)
  k = f32[2,16,8] parameter(1)
  v = f32[2,8,16] parameter(2)
  s = f32[2,8,8] dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0},
    rhs_contracting_dims={1}
  ROOT o = f32[2,8,16] dot(s, v), lhs_batch_dims={0}, lhs_contracting_dims={2},
    rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  ASSERT_EQ(domains.size(), 3u);
  for (const FloatDomain& domain : domains) EXPECT_EQ(domain, FloatDomain{});
}

TEST(ValueDomains, FollowedIntoCallsAndFusionsAndOutThroughTheirResults) {
  // XLA's CPU dumps put the dot in a fusion; JAX wraps jnp.where in a call whose result then
  // reaches a sqrt.
  auto domains = DomainsOf(R"(HloModule m
fused_dot {
  a = f32[4,128] parameter(0)
  b = f32[128,4] parameter(1)
  ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
where {
  p = pred[4] parameter(0)
  t = f32[4] parameter(1)
  f = f32[4] parameter(2)
  ROOT s = f32[4] select(p, t, f)
}
ENTRY main {
  x = f32[4,128] parameter(0)
  w = f32[128,4] parameter(1)
  c = pred[4] parameter(2)
  y = f32[4] parameter(3)
  z = f32[4] parameter(4)
  fd = f32[4,4] fusion(x, w), kind=kCustom, calls=fused_dot
  chosen = f32[4] call(c, y, z), to_apply=where
  root = f32[4] sqrt(chosen)
  ROOT r = (f32[4,4], f32[4]) tuple(fd, root)
})");
  ASSERT_EQ(domains.size(), 5u);
  EXPECT_EQ(domains[0], FloatDomain{});
  EXPECT_EQ(domains[1], Scaled(128));
  EXPECT_EQ(domains[3], Positive());
  EXPECT_EQ(domains[4], Positive());
}

TEST(ValueDomains, AKernelSeenOnlyThroughAddKeepsItsScaleAndTheSmallestScaleWins) {
  // w is used raw by a dot over 16 and, plus 1, by a dot over 64: only the first use is a
  // kernel of w itself. v is the kernel of two dots: 1/sqrt(256) is the safer of the two.
  auto domains = DomainsOf(R"(HloModule m
ENTRY main {
  x = f32[2,16] parameter(0)
  w = f32[16,16] parameter(1)
  v = f32[16,16] parameter(2)
  y = f32[2,256] parameter(3)
  one = f32[] constant(1)
  o = f32[16,16] broadcast(one), dimensions={}
  w1 = f32[16,16] add(w, o)
  d1 = f32[2,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[2,16] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vr = f32[256] reshape(v)
  vb = f32[256,2] broadcast(vr), dimensions={0}
  d3 = f32[2,16] dot(x, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d4 = f32[2,2] dot(y, vb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[2,16], f32[2,16], f32[2,16], f32[2,2]) tuple(d1, d2, d3, d4)
})");
  ASSERT_EQ(domains.size(), 4u);
  EXPECT_EQ(domains[1], Scaled(16));
  EXPECT_EQ(domains[2], Scaled(256));
}

TEST(ValueDomains, IntegersAndTupleLeavesKeepTheirOwnRules) {
  // An s32 converted to f32 before a sqrt is still drawn from [0, 16); a tuple's f32 leaf that
  // reaches an rsqrt is positive, its sibling is not.
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  i = s32[1000] parameter(0)
  t = (f32[8], f32[8]) parameter(1)
  f = f32[1000] convert(i)
  a = f32[8] get-tuple-element(t), index=0
  b = f32[8] get-tuple-element(t), index=1
  sf = f32[1000] sqrt(f)
  ra = f32[8] rsqrt(a)
  ROOT r = (f32[1000], f32[8], f32[8]) tuple(sf, ra, b)
})");
  auto domains = io::InferFloatParameterDomains(*module);
  ASSERT_EQ(domains.size(), 3u);
  EXPECT_EQ(domains[1], Positive());
  EXPECT_EQ(domains[2], FloatDomain{});
  auto inputs = io::MakeRandomInputs(*module, 5);
  int64_t lowest = 99, highest = -99;
  for (int64_t k = 0; k < 1000; ++k) {
    lowest = std::min(lowest, inputs[0].GetAsInt64(k));
    highest = std::max(highest, inputs[0].GetAsInt64(k));
  }
  EXPECT_EQ(lowest, 0);
  EXPECT_EQ(highest, 15);
  EXPECT_GE(inputs[1].elements()[0].GetAsDouble(0), 0.5);
}

TEST(ValueDomains, ResNet50VariancesArePositiveAndKernelsLeCunScaled) {
  auto module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::CorpusPath("resnet50_keras_jax_f32.hlo")));
  auto domains = io::InferFloatParameterDomains(*module);
  ASSERT_EQ(domains.size(), 321u);
  EXPECT_EQ(domains[0], Scaled(7 * 7 * 3));  // conv1: 7x7 window over RGB
  EXPECT_EQ(domains[1], FloatDomain{});      // conv1 bias
  EXPECT_EQ(domains[8], Scaled(3 * 3 * 64));
  EXPECT_EQ(domains[212], Scaled(2048));     // the classifier, f32[2048,1000]
  EXPECT_EQ(domains[215], Positive());       // state[1][1]: conv1_bn's moving variance
  EXPECT_EQ(domains[214], FloatDomain{});    // state[1][0]: its moving mean
  EXPECT_EQ(domains[320], FloatDomain{});    // the image
  // Batch-norm state alternates (mean, variance): 53 layers, one positive variance each.
  int positive = 0;
  for (const FloatDomain& domain : domains) positive += domain.positive ? 1 : 0;
  EXPECT_EQ(positive, 53);
}

TEST(ValueDomains, DlrmExampleCountDividesAndIsPositive) {
  // test_step divides the metric sums by count + 3616 (state[2][1], state[2][3]).
  auto domains = io::InferFloatParameterDomains(*testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::CorpusPath("dlrm_keras_jax_f32_test_step.hlo"))));
  ASSERT_EQ(domains.size(), 32u);
  EXPECT_EQ(domains[7], Scaled(8));      // dense_1 kernel, f32[8,8]
  EXPECT_EQ(domains[11], Scaled(192));   // dense_3 kernel, f32[192,192]
  EXPECT_EQ(domains[18], Positive());    // state[2][1]
  EXPECT_EQ(domains[20], Positive());    // state[2][3]
  EXPECT_EQ(domains[31], FloatDomain{});  // labels
}

}  // namespace

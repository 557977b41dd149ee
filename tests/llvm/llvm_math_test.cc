// Accuracy of llvm_math.h's f32 functions: a dense sweep of each function's range, JIT-compiled
// through the emitter, against the C library evaluated in double and rounded to f32 (an
// independent and nearly correctly rounded reference). Prints the measured max ulp per function
// and asserts the bounds stated in llvm_math.h.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "tests/llvm/jit_harness.h"
#include "tests/test_support.h"

namespace {

using hlo::PrimitiveType;

struct Sweep {
  int64_t max_ulp = 0;
  float worst_x = 0, worst_y = 0;
};

hlo::Literal F32Literal(const std::vector<float>& values) {
  hlo::Literal literal(
      hlo::Shape::Array(PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.mutable_data<float>()[i] = values[i];
  return literal;
}

// Runs `opcode` over xs (and ys for binary ops) and measures the ulp error against `reference`.
Sweep Measure(const std::string& opcode, const std::vector<float>& xs, const std::vector<float>& ys,
              const std::function<double(double, double)>& reference) {
  const std::string n = std::to_string(xs.size());
  const bool binary = !ys.empty();
  std::string text = "HloModule m\nENTRY e {\n  x = f32[" + n + "] parameter(0)\n";
  if (binary) text += "  y = f32[" + n + "] parameter(1)\n";
  text += "  ROOT r = f32[" + n + "] " + opcode + (binary ? "(x, y)" : "(x)") + "\n}\n";
  auto module = testing_support::ParseAndVerify(text);
  std::vector<hlo::Literal> arguments;
  arguments.push_back(F32Literal(xs));
  if (binary) arguments.push_back(F32Literal(ys));
  hlo::Literal result = llvm_test::RunEntry(*module, arguments);
  Sweep sweep;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double y = binary ? ys[i] : 0.0;
    const float expected = static_cast<float>(reference(xs[i], y));
    const int64_t ulp =
        llvm_test::UlpDistance(PrimitiveType::kF32, expected, result.data<float>()[i]);
    if (ulp > sweep.max_ulp) sweep = {ulp, xs[i], static_cast<float>(y)};
  }
  std::cout << "  " << opcode << ": max " << sweep.max_ulp << " ulp (at x=" << sweep.worst_x
            << (binary ? ", y=" + std::to_string(sweep.worst_y) : std::string()) << ") over "
            << xs.size() << " values\n";
  return sweep;
}

std::vector<float> Linear(double lo, double hi, int count) {
  std::vector<float> values;
  for (int i = 0; i < count; ++i)
    values.push_back(static_cast<float>(lo + (hi - lo) * i / (count - 1)));
  return values;
}

// `per_binade` values in each binade of [2^lo, 2^hi), positive (and negated when `both_signs`).
std::vector<float> Binades(int lo, int hi, int per_binade, bool both_signs) {
  std::vector<float> values;
  for (int e = lo; e < hi; ++e) {
    for (int k = 0; k < per_binade; ++k) {
      const float v = static_cast<float>(std::ldexp(1.0 + static_cast<double>(k) / per_binade, e));
      values.push_back(v);
      if (both_signs) values.push_back(-v);
    }
  }
  return values;
}

std::vector<float> Concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double Logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(LlvmMathTest, MaxUlpErrorOfEachF32Function) {
  const std::vector<float> none;
  const std::vector<float> tiny = Binades(-149, -10, 20, true);
  auto unary = [](double (*f)(double)) { return [f](double x, double) { return f(x); }; };
  EXPECT_LE(
      Measure("exponential", Concat(Linear(-104, 89, 200000), tiny), none, unary(std::exp)).max_ulp,
      1);
  EXPECT_LE(Measure("log", Binades(-149, 128, 1000, false), none, unary(std::log)).max_ulp, 1);
  EXPECT_LE(Measure("log-plus-one",
                    Concat(Concat(Linear(-0.999, 1, 100000), Binades(-30, 100, 500, false)), tiny),
                    none, unary(std::log1p))
                .max_ulp,
            1);
  EXPECT_LE(Measure("exponential-minus-one", Concat(Linear(-20, 89, 200000), tiny), none,
                    unary(std::expm1))
                .max_ulp,
            1);
  EXPECT_LE(Measure("tanh", Concat(Linear(-20, 20, 200000), tiny), none, unary(std::tanh)).max_ulp,
            1);
  // Only where e^-x stays finite in f32 (beyond, XLA's definition gives 0; see
  // llvm_math_fast.h). 1 / (1 + e^-x) in f32 adds the sum's and the division's roundings.
  EXPECT_LE(Measure("logistic", Linear(-88, 100, 200000), none,
                    [](double x, double) { return Logistic(x); })
                .max_ulp,
            2);
  const std::vector<float> trig =
      Concat(Concat(Linear(-1e5, 1e5, 200000), Linear(-10, 10, 100000)), tiny);
  EXPECT_LE(Measure("sine", trig, none, unary(std::sin)).max_ulp, 1);
  EXPECT_LE(Measure("cosine", trig, none, unary(std::cos)).max_ulp, 1);
  EXPECT_LE(Measure("tan", trig, none, unary(std::tan)).max_ulp, 2);
  // Large arguments go through the Payne-Hanek reduction (|x| >= 2^17), up to the f32 maximum.
  const std::vector<float> large = Binades(15, 128, 300, true);
  EXPECT_LE(Measure("sine", large, none, unary(std::sin)).max_ulp, 1);
  EXPECT_LE(Measure("cosine", large, none, unary(std::cos)).max_ulp, 1);
  EXPECT_LE(Measure("tan", large, none, unary(std::tan)).max_ulp, 2);
  // Random finite bit patterns of both signs, every magnitude.
  std::vector<float> random_floats;
  uint32_t state = 12345;
  while (random_floats.size() < 200000) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG
    const float v = std::bit_cast<float>(state);
    if (std::isfinite(v)) random_floats.push_back(v);
  }
  EXPECT_LE(Measure("sine", random_floats, none, unary(std::sin)).max_ulp, 1);
  EXPECT_LE(Measure("cosine", random_floats, none, unary(std::cos)).max_ulp, 1);
  EXPECT_LE(Measure("erf", Concat(Linear(-5, 5, 200000), tiny), none, unary(std::erf)).max_ulp, 1);
  EXPECT_LE(Measure("cbrt", Binades(-149, 128, 500, true), none, unary(std::cbrt)).max_ulp, 1);

  std::vector<float> magnitudes = Binades(-100, 100, 3, true);  // about ±1e-30 .. ±1e30
  std::vector<float> ys, xs;
  for (float y : magnitudes) {
    for (float x : magnitudes) {
      ys.push_back(y);
      xs.push_back(x);
    }
  }
  EXPECT_LE(Measure("atan2", ys, xs, [](double y, double x) { return std::atan2(y, x); }).max_ulp,
            1);
  std::vector<float> bases, exponents;
  for (float x : Binades(-20, 14, 15, false)) {
    for (float y : Linear(-40, 40, 509)) {
      bases.push_back(x);
      exponents.push_back(y);
    }
  }
  EXPECT_LE(
      Measure("power", bases, exponents, [](double x, double y) { return std::pow(x, y); }).max_ulp,
      1);
}

// tanh's special values as C99 Annex F states them: ±0 keep their sign, ±inf give ±1, NaN stays.
TEST(LlvmMathTest, TanhSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                                 1e-30f, -1e-30f, 100.0f, -100.0f};
  auto module = testing_support::ParseAndVerify(
      "HloModule m\nENTRY e {\n  x = f32[9] parameter(0)\n  ROOT r = f32[9] tanh(x)\n}\n");
  std::vector<hlo::Literal> arguments;
  arguments.push_back(F32Literal(xs));
  hlo::Literal result = llvm_test::RunEntry(*module, arguments);
  std::span<const float> y = result.data<float>();
  EXPECT_EQ(std::bit_cast<uint32_t>(y[0]), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(y[1]), 0x80000000u);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], 1e-30f);
  EXPECT_EQ(y[6], -1e-30f);
  EXPECT_EQ(y[7], 1.0f);
  EXPECT_EQ(y[8], -1.0f);
}

// exp, log, logistic and erf at their edges: ±0, ±inf, NaN, denormals and the overflow and
// underflow thresholds, against the C library rounded to f32 (exactly: these are the values where a
// range reduction or a final scaling goes wrong first).
TEST(LlvmMathTest, ExpLogLogisticAndErfAtTheirEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float denormal_min = std::numeric_limits<float>::denorm_min();
  const float normal_min = std::numeric_limits<float>::min();
  auto run = [](const std::string& opcode, const std::vector<float>& xs) {
    const std::string n = std::to_string(xs.size());
    auto module = testing_support::ParseAndVerify("HloModule m\nENTRY e {\n  x = f32[" + n +
                                                  "] parameter(0)\n  ROOT r = f32[" + n + "] " +
                                                  opcode + "(x)\n}\n");
    std::vector<hlo::Literal> arguments;
    arguments.push_back(F32Literal(xs));
    hlo::Literal result = llvm_test::RunEntry(*module, arguments);
    return std::vector<float>(result.data<float>().begin(), result.data<float>().end());
  };
  auto expect_libm = [](const std::vector<float>& xs, const std::vector<float>& ys,
                        double (*f)(double), int64_t max_ulp) {
    for (size_t i = 0; i < xs.size(); ++i) {
      const float expected = static_cast<float>(f(xs[i]));
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(ys[i])) << "x=" << xs[i];
      } else {
        EXPECT_LE(llvm_test::UlpDistance(PrimitiveType::kF32, expected, ys[i]), max_ulp)
            << "x=" << xs[i] << ": " << ys[i] << " vs " << expected;
      }
    }
  };
  // exp: 88.7228317 is the last f32 with a finite exp, the next (88.7228394) overflows; below
  // -87.3365 results are denormal, below -103.97 they round to 0.
  const std::vector<float> exp_xs = {0.0f,     -0.0f,       inf,         -inf,
                                     nan,      88.7228317f, 88.7228394f, 89.0f,
                                     -87.336f, -87.337f,    -100.0f,     -103.97f,
                                     -103.98f, -104.0f,     -200.0f,     denormal_min,
                                     1e-30f,   -1e-30f};
  const std::vector<float> exp_ys = run("exponential", exp_xs);
  expect_libm(exp_xs, exp_ys, std::exp, 1);
  EXPECT_EQ(exp_ys[0], 1.0f);
  EXPECT_EQ(exp_ys[2], inf);
  EXPECT_EQ(std::bit_cast<uint32_t>(exp_ys[3]), 0u);  // +0
  EXPECT_TRUE(std::isfinite(exp_ys[5]));
  EXPECT_EQ(exp_ys[6], inf);
  EXPECT_GT(exp_ys[11], 0.0f);  // a denormal, not flushed

  const std::vector<float> log_xs = {0.0f,       -0.0f,       inf,  -inf, nan, -1.0f,
                                     1.0f,       denormal_min, 1e-40f, normal_min,
                                     0.99999994f, 1.00000012f, 0.70710677f, 1.41421354f,
                                     std::numeric_limits<float>::max()};
  const std::vector<float> log_ys = run("log", log_xs);
  expect_libm(log_xs, log_ys, std::log, 1);
  EXPECT_EQ(log_ys[0], -inf);
  EXPECT_EQ(log_ys[1], -inf);
  EXPECT_EQ(log_ys[2], inf);
  EXPECT_TRUE(std::isnan(log_ys[3]));
  EXPECT_TRUE(std::isnan(log_ys[5]));
  EXPECT_EQ(std::bit_cast<uint32_t>(log_ys[6]), 0u);  // log 1 = +0 exactly

  const std::vector<float> logistic_xs = {0.0f, -0.0f, inf, -inf, nan, 88.0f, -88.0f, -88.7f,
                                          -88.8f, -200.0f, 17.0f, 1e-30f};
  const std::vector<float> logistic_ys = run("logistic", logistic_xs);
  EXPECT_EQ(logistic_ys[0], 0.5f);
  EXPECT_EQ(logistic_ys[1], 0.5f);
  EXPECT_EQ(logistic_ys[2], 1.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(logistic_ys[3]), 0u);
  EXPECT_TRUE(std::isnan(logistic_ys[4]));
  EXPECT_EQ(logistic_ys[5], 1.0f);
  EXPECT_LE(llvm_test::UlpDistance(PrimitiveType::kF32,
                                   static_cast<float>(Logistic(-88.0)), logistic_ys[6]),
            2);
  EXPECT_EQ(std::bit_cast<uint32_t>(logistic_ys[8]), 0u);  // e^88.8 overflows: +0 (XLA's rule)
  EXPECT_EQ(std::bit_cast<uint32_t>(logistic_ys[9]), 0u);
  EXPECT_EQ(logistic_ys[11], 0.5f);

  // erf across its pieces' boundaries (1, 2, 3.92) and beyond, the signed zeros and infinities.
  const std::vector<float> erf_xs = {0.0f,       -0.0f, inf,         -inf,       nan,
                                     0.99999994f, 1.0f, -1.00000012f, 1.99999988f, 2.0f,
                                     3.91999984f, 3.92f, 3.92000008f, -10.0f,     denormal_min};
  const std::vector<float> erf_ys = run("erf", erf_xs);
  expect_libm(erf_xs, erf_ys, std::erf, 1);
  EXPECT_EQ(std::bit_cast<uint32_t>(erf_ys[0]), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(erf_ys[1]), 0x80000000u);
  EXPECT_EQ(erf_ys[2], 1.0f);
  EXPECT_EQ(erf_ys[3], -1.0f);
  EXPECT_TRUE(std::isnan(erf_ys[4]));
  EXPECT_EQ(erf_ys[13], -1.0f);
}

TEST(LlvmMathTest, LoopOverExpVectorizesAndItsSpeedIsReported) {
  // Straight-line math lets LLVM's loop vectorizer work: the optimized loop holds vector
  // arithmetic. The time per element is printed for the record (no bound: shared machines).
  const int64_t n = 1 << 20;
  auto module = testing_support::ParseAndVerify(
      "HloModule m\nENTRY e {\n  x = f32[1048576] parameter(0)\n  ROOT r = f32[1048576] "
      "exponential(x)\n}\n");
  std::vector<float> xs = Linear(-80, 80, static_cast<int>(n));
  std::vector<hlo::Literal> arguments;
  arguments.push_back(F32Literal(xs));
  std::string optimized;
  double seconds = 0;
  llvm_test::JitOptions options;
  options.optimized_ir_out = &optimized;
  options.run_seconds = &seconds;
  llvm_test::RunEntry(*module, arguments, options);
  EXPECT_TRUE(optimized.find(" x double>") != std::string::npos ||
              optimized.find(" x float>") != std::string::npos)
      << "no vector type in the optimized loop";
  std::cout << "  exponential f32: " << seconds * 1e9 / static_cast<double>(n)
            << " ns per element (JIT, one thread)\n";
}

}  // namespace

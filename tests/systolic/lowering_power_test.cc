// power with the constant exponents the vector unit runs (row_program.cc, DefinePower): x^2 as
// one vmul, x^-0.5 (RMS normalization) as vrsqrt with power's values at -0 and -inf, against
// the interpreter on the edge values; other exponents stay on the host.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/systolic/systolic_run_support.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

systolic_testing::Outcome RunPower(const std::string& exponent,
                                   const std::vector<float>& values) {
  const std::string n = std::to_string(values.size());
  const std::string text =
      "HloModule m\nENTRY main {\n  x = f32[" + n + "] parameter(0)\n  e = f32[] constant(" +
      exponent + ")\n  b = f32[" + n + "] broadcast(e), dimensions={}\n  ROOT p = f32[" + n +
      "] power(x, b)\n}\n";
  hlo::Literal input(
      hlo::Shape::Array(hlo::PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  std::memcpy(input.mutable_bytes().data(), values.data(), values.size() * sizeof(float));
  std::vector<hlo::Literal> inputs;
  inputs.push_back(std::move(input));
  return systolic_testing::RunAgainstInterpreter(text, systolic::LoadArchConfig("gemmini", {}),
                                                 0, std::move(inputs));
}

const std::vector<float> kEdges = {-0.0f, 0.0f, -kInf, kInf, std::nanf(""), -1.0f, 4.0f,
                                   1e-30f, 3.0e38f, 0.3f, 2.0f, -7.5f};

TEST(SystolicPower, InverseSquareRootMatchesPowerOnEdgeValues) {
  const systolic_testing::Outcome outcome = RunPower("-0.5", kEdges);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0);
}

TEST(SystolicPower, SquareIsExact) {
  const systolic_testing::Outcome outcome = RunPower("2", kEdges);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0);
}

TEST(SystolicPower, OtherExponentsRunOnTheHost) {
  const systolic_testing::Outcome outcome = RunPower("0.5", kEdges);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 1);
}

// The exponent of a fused power is a fusion parameter when its broadcast is shared with other
// fusions (the systolic pipeline never duplicates it): the lowering reads the constant through
// the fusion's operand, as RMS normalization in gemma4 needs.
TEST(SystolicPower, ExponentBehindAFusionParameterIsReadThroughTheOperand) {
  const systolic_testing::Outcome outcome = systolic_testing::RunAgainstInterpreter(
      R"(HloModule m
norm {
  x = f32[8,32] parameter(0)
  e = f32[8,32] parameter(1)
  s = f32[8,32] multiply(x, x)
  ROOT p = f32[8,32] power(s, e)
}
ENTRY main {
  x = f32[8,32] parameter(0)
  k = f32[] constant(-0.5)
  b = f32[8,32] broadcast(k), dimensions={}
  ROOT f = f32[8,32] fusion(x, b), kind=kLoop, calls=norm
})",
      systolic::LoadArchConfig("gemmini", {}), 3);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0) << outcome.assembly;
}

}  // namespace

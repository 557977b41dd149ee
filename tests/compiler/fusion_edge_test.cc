// Fusion on edge-case values: results must be bit-identical before and after fusion for NaN,
// infinities, signed zero, empty shapes and integer overflow (fusion only clones instructions).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/compiler/fusion_test_util.h"
#include "targets/descriptions.h"

namespace {
using fusion_test::AllFusionPasses;
using fusion_test::CountInBody;
using fusion_test::CountTopLevel;
using fusion_test::FuseAndCheck;
using fusion_test::Fusions;
using fusion_test::KindOf;
using fusion_test::kReducers;
using fusion_test::Softmax;
using hlo::FusionKind;
using hlo::Opcode;

hlo::Literal F32(std::vector<int64_t> dims, const std::vector<float>& values) {
  hlo::Literal literal(hlo::Shape::Array(hlo::PrimitiveType::kF32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) literal.mutable_data<float>()[i] = values[i];
  return literal;
}

// Evaluates before and after fusion on the given arguments; expects bitwise-equal results
// (fusion clones instructions, so even NaN payloads and signed zeros must not change).
void ExpectBitwiseSame(const std::string& text, const std::vector<hlo::Literal>& args) {
  auto before = testing_support::ParseAndVerify(text);
  auto after = before->Clone();
  fusion_test::RunPasses(*after, fusion_test::AllFusionPasses(), targets::GpuDescription());
  EXPECT_FALSE(fusion_test::Fusions(*after).empty());
  const hlo::Literal expected = hlo::Evaluate(*before, args);
  const hlo::Literal actual = hlo::Evaluate(*after, args);
  EXPECT_TRUE(expected.BitwiseEqual(actual)) << expected.ToString() << " vs " << actual.ToString();
}

TEST(InputFusion, SoftmaxKeepsNanInfAndSignedZeroBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0: +inf makes the row NaN (inf - inf); row 1: NaN propagates through max; row 2: all
  // -inf gives NaN (0/0 after exp(-inf - -inf) = exp(NaN)); row 3: ordinary values with -0.
  std::vector<hlo::Literal> args;
  args.push_back(F32({4, 8}, {inf, 1, 2, 3, 4, 5, 6, 7,       1, nan, 0, 0, 0, 0, 0, 0,
                              -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,
                              -0.0f, 0, 1, -1, 2, -2, 3, -3}));
  ExpectBitwiseSame(Softmax(), args);
  // And the values themselves (computed by hand): row 3's entry for -0 is e^0 / sum(e^x).
  auto module = testing_support::ParseAndVerify(Softmax());
  fusion_test::RunPasses(*module, fusion_test::AllFusionPasses(), targets::CpuDescription());
  const hlo::Literal out = hlo::Evaluate(*module, args);
  double sum = 0;
  for (double v : {0.0, 0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0}) sum += std::exp(v - 3.0);
  EXPECT_NEAR(out.GetAsDouble(24), std::exp(-3.0) / sum, 1e-6);
  EXPECT_TRUE(std::isnan(out.GetAsDouble(0)));
  EXPECT_TRUE(std::isnan(out.GetAsDouble(8)));
  EXPECT_TRUE(std::isnan(out.GetAsDouble(16)));
}

TEST(LoopFusion, EmptyShapesFuseAndEvaluate) {
  const std::string text = R"(
HloModule empty
ENTRY e {
  x = f32[0,3] parameter(0)
  n = f32[0,3] negate(x)
  ROOT a = f32[0,3] add(n, x)
}
)";
  std::vector<hlo::Literal> args;
  args.push_back(F32({0, 3}, {}));
  ExpectBitwiseSame(text, args);
}

TEST(LoopFusion, IntegerOverflowWrapsTheSameWayInsideAFusion) {
  const std::string text = R"(
HloModule wrap
ENTRY e {
  x = s32[2] parameter(0)
  big = s32[] constant(2147483647)
  b = s32[2] broadcast(big), dimensions={}
  ROOT a = s32[2] add(x, b)
}
)";
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kS32, {2}));
  x.mutable_data<int32_t>()[0] = 1;
  x.mutable_data<int32_t>()[1] = -1;
  std::vector<hlo::Literal> args;
  args.push_back(std::move(x));
  ExpectBitwiseSame(text, args);
  auto module = testing_support::ParseAndVerify(text);
  fusion_test::RunPasses(*module, fusion_test::AllFusionPasses(), targets::CpuDescription());
  const hlo::Literal out = hlo::Evaluate(*module, args);
  EXPECT_EQ(out.data<int32_t>()[0], std::numeric_limits<int32_t>::min());  // wraps
  EXPECT_EQ(out.data<int32_t>()[1], 2147483646);
}

}  // namespace

// io::CompareArrays on token results (e.g. an after-all or a send/recv chain's token output):
// a token carries no value, so two tokens match; a token against an array does not.
#include <gtest/gtest.h>

#include "hlo/literal.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace {

io::NpyArray Token(const std::string& name) { return {name, hlo::Literal(hlo::Shape::Token())}; }

io::NpyArray Scalar(const std::string& name, float value) {
  hlo::Literal literal(hlo::Shape::Array(hlo::PrimitiveType::kF32, {}));
  literal.SetFromDouble(0, value);
  return {name, std::move(literal)};
}

TEST(CompareTokens, TwoTokensMatchAndCountNoElements) {
  io::CompareResult result = io::CompareArrays({Token("out0")}, {Token("out0")}, nullptr);
  EXPECT_TRUE(result.matched) << result.summary;
  EXPECT_EQ(result.summary, "MATCHED (1 arrays, 0 elements)");
}

TEST(CompareTokens, TokenNextToArraysDoesNotHideAnArrayMismatch) {
  io::CompareResult same = io::CompareArrays({Token("out0"), Scalar("out1", 2)},
                                             {Token("out0"), Scalar("out1", 2)}, nullptr);
  EXPECT_TRUE(same.matched) << same.summary;
  EXPECT_EQ(same.summary, "MATCHED (2 arrays, 1 elements)");
  io::CompareResult differ = io::CompareArrays({Token("out0"), Scalar("out1", 2)},
                                               {Token("out0"), Scalar("out1", 3)}, nullptr);
  EXPECT_FALSE(differ.matched);
  EXPECT_EQ(differ.worst_array, "out1");
}

TEST(CompareTokens, TokenAgainstArrayIsAMismatchNamingBothShapes) {
  io::CompareResult result = io::CompareArrays({Token("out0")}, {Scalar("out0", 0)}, nullptr);
  EXPECT_FALSE(result.matched);
  EXPECT_EQ(result.summary, "MISMATCH out0: expected token[], got f32[]");
  io::CompareResult reverse = io::CompareArrays({Scalar("out0", 0)}, {Token("out0")}, nullptr);
  EXPECT_FALSE(reverse.matched);
  EXPECT_EQ(reverse.summary, "MISMATCH out0: expected f32[], got token[]");
}

TEST(CompareTokens, FlattenedTokenResultsOfTwoRunsMatch) {
  // What `retarget run --compare` does with a token-valued ROOT: flatten both, compare.
  hlo::Literal expected(hlo::Shape::Token()), actual(hlo::Shape::Token());
  io::CompareResult result =
      io::CompareArrays(io::FlattenOutputs(expected), io::FlattenOutputs(actual), nullptr);
  EXPECT_TRUE(result.matched) << result.summary;
}

}  // namespace

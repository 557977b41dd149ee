// Tests of io::CompareArrays and DefaultTolerance: the tolerance formula at its boundary, NaN /
// infinity / signed-zero rules, exact integers, structural mismatches, and the worst element.
#include "tools/io/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using hlo::PrimitiveType;

io::NpyArray Floats(const std::string& name, std::vector<double> values,
                    PrimitiveType type = PrimitiveType::kF64) {
  hlo::Literal literal(hlo::Shape::Array(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i)
    literal.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return {name, std::move(literal)};
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(Compare, ToleranceBoundaryIsInclusive) {
  io::Tolerance tol{0.5, 0.25};  // dyadic values: the arithmetic below is exact
  // expected 2: allowance = 0.25 + 0.5 * 2 = 1.25.
  EXPECT_TRUE(io::CompareArrays({Floats("out0", {2})}, {Floats("out0", {3.25})}, &tol).matched);
  EXPECT_TRUE(io::CompareArrays({Floats("out0", {2})}, {Floats("out0", {0.75})}, &tol).matched);
  EXPECT_FALSE(io::CompareArrays({Floats("out0", {2})}, {Floats("out0", {3.25 + 1.0 / 1024})}, &tol)
                   .matched);
  // The allowance scales with |expected|, not |actual|: expected 0 allows only atol.
  EXPECT_FALSE(io::CompareArrays({Floats("out0", {0})}, {Floats("out0", {0.5})}, &tol).matched);
}

TEST(Compare, NaNInfinityAndSignedZero) {
  io::Tolerance tol{1e-5, 1e-6};
  auto same = [&](double e, double a) {
    return io::CompareArrays({Floats("o", {e})}, {Floats("o", {a})}, &tol).matched;
  };
  EXPECT_TRUE(same(kNaN, kNaN));
  EXPECT_TRUE(same(kNaN, -kNaN));
  EXPECT_FALSE(same(kNaN, 1.0));
  EXPECT_FALSE(same(1.0, kNaN));
  EXPECT_TRUE(same(kInf, kInf));
  EXPECT_FALSE(same(kInf, -kInf));
  EXPECT_FALSE(same(kInf, 1e308));
  EXPECT_FALSE(same(1e308, kInf));
  EXPECT_TRUE(same(0.0, -0.0));
}

TEST(Compare, IntegersAndPredMustBeExact) {
  hlo::Literal e(hlo::Shape::Array(PrimitiveType::kS32, {3})),
      a(hlo::Shape::Array(PrimitiveType::kS32, {3}));
  for (int i = 0; i < 3; ++i) {
    e.SetFromInt64(i, 1000000 + i);
    a.SetFromInt64(i, 1000000 + i);
  }
  EXPECT_TRUE(io::CompareArrays({{"out0", e}}, {{"out0", a}}, nullptr).matched);
  a.SetFromInt64(2, 1000001);  // off by one even though rtol would allow it for floats
  io::Tolerance loose{0.5, 10};
  io::CompareResult r = io::CompareArrays({{"out0", e}}, {{"out0", a}}, &loose);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.worst_index, std::vector<int64_t>{2});
  EXPECT_EQ(r.summary, "MISMATCH out0[2]: expected 1000002, got 1000001; 1 of 3 elements differ");
}

TEST(Compare, WorstElementIsLargestRelativeToItsAllowance) {
  hlo::Literal e(hlo::Shape::Array(PrimitiveType::kF32, {2, 3})),
      a(hlo::Shape::Array(PrimitiveType::kF32, {2, 3}));
  // rtol 0.25, atol 0: element [0,1] is off by 1 of allowance 25 (fine); [1,0] off by 1 of
  // allowance 0.5 (ratio 2); [1,2] off by 3 of allowance 1 (ratio 3, the worst).
  std::vector<double> expected = {0, 100, 0, 2, 0, 4};
  std::vector<double> actual = {0, 101, 0, 3, 0, 7};
  for (int i = 0; i < 6; ++i) {
    e.SetFromDouble(i, expected[i]);
    a.SetFromDouble(i, actual[i]);
  }
  io::Tolerance tol{0.25, 0};
  io::CompareResult r = io::CompareArrays({{"out1", e}}, {{"out1", a}}, &tol);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.worst_array, "out1");
  EXPECT_EQ(r.worst_index, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.worst_expected, 4);
  EXPECT_EQ(r.worst_actual, 7);
  EXPECT_EQ(
      r.summary.rfind(
          "MISMATCH out1[1,2]: expected 4, got 7 (|diff| 3, allowed 1 = atol 0 + rtol 0.25", 0),
      0u)
      << r.summary;
  EXPECT_NE(r.summary.find("2 of 6 elements differ"), std::string::npos);
}

TEST(Compare, StructuralMismatches) {
  auto r = io::CompareArrays({Floats("out0", {1}), Floats("out1", {2})},
                             {Floats("out0", {1}), Floats("extra", {3})}, nullptr);
  EXPECT_FALSE(r.matched);
  EXPECT_EQ(r.summary, "MISMATCH out1 is missing; extra is unexpected");
  r = io::CompareArrays({Floats("out0", {1, 2})}, {Floats("out0", {1})}, nullptr);
  EXPECT_EQ(r.summary, "MISMATCH out0: expected f64[2], got f64[1]");
  r = io::CompareArrays({Floats("out0", {1})}, {Floats("out0", {1}, PrimitiveType::kF32)}, nullptr);
  EXPECT_EQ(r.summary, "MISMATCH out0: expected f64[1], got f32[1]");
}

TEST(Compare, MatchedSummaryAndEmptyArrays) {
  auto r = io::CompareArrays({Floats("out0", {1, 2}), Floats("out1", {})},
                             {Floats("out1", {}), Floats("out0", {1, 2})}, nullptr);
  EXPECT_TRUE(r.matched);
  EXPECT_EQ(r.summary, "MATCHED (2 arrays, 2 elements)");
}

TEST(Compare, DefaultTolerancesPerType) {
  // bf16 has 8 significant bits: 1 vs 1.0078125 (one ulp) must match under the bf16 default,
  // but the same relative error (7.8e-3) must not under the f32 default.
  EXPECT_TRUE(io::CompareArrays({Floats("o", {1}, PrimitiveType::kBF16)},
                                {Floats("o", {1.0078125}, PrimitiveType::kBF16)}, nullptr)
                  .matched);
  EXPECT_FALSE(io::CompareArrays({Floats("o", {1}, PrimitiveType::kF32)},
                                 {Floats("o", {1.0078125}, PrimitiveType::kF32)}, nullptr)
                   .matched);
  EXPECT_EQ(io::DefaultTolerance(PrimitiveType::kF32).rtol, 1e-5);
  EXPECT_EQ(io::DefaultTolerance(PrimitiveType::kF32).atol, 1e-6);
  EXPECT_EQ(io::DefaultTolerance(PrimitiveType::kF16).rtol, 1e-3);
  EXPECT_EQ(io::DefaultTolerance(PrimitiveType::kBF16).atol, 1e-2);
  EXPECT_EQ(io::DefaultTolerance(PrimitiveType::kS32).rtol, 0);
}

}  // namespace

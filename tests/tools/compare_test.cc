// Tests of io::CompareArrays and DefaultTolerance: the tolerance formula at its boundary, NaN /
// infinity / signed-zero rules, exact integers, structural mismatches, and the worst element.
#include "tools/io/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "tests/test_support.h"

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

// A K=1024 f32 dot row computed three ways: the interpreter's order (k ascending, f32), another
// correct order (pairwise halves, f32), and three bugs: a dropped term, operands rounded to bf16,
// a shifted index. With the defaults scaled by sqrt(K) the correct one matches and every bug
// fails; unscaled, the correct one is already flagged on some element.
TEST(CompareReductionScale, CorrectSumsMatchAndBugsStillFail) {
  constexpr int kK = 1024, kN = 256;
  std::vector<float> a(kK), b(static_cast<size_t>(kK) * kN);
  uint64_t state = 12345;
  auto uniform = [&state] {  // [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0);
  };
  for (float& v : a) v = uniform();
  for (float& v : b) v = uniform();
  auto column = [&](int n, int k) { return b[static_cast<size_t>(k) * kN + n]; };
  auto sequential = [&](int n, auto term) {
    float sum = 0;
    for (int k = 0; k < kK; ++k) sum += term(n, k);
    return sum;
  };
  std::function<float(int, int, int)> pairwise = [&](int n, int lo, int hi) -> float {
    if (hi - lo == 1) return a[lo] * column(n, lo);
    return pairwise(n, lo, (lo + hi) / 2) + pairwise(n, (lo + hi) / 2, hi);
  };
  auto row = [&](auto value) {
    std::vector<double> out;
    for (int n = 0; n < kN; ++n) out.push_back(value(n));
    return Floats("out0", out, PrimitiveType::kF32);
  };
  const auto exact = [&](int n, int k) { return a[k] * column(n, k); };
  const io::NpyArray expected = row([&](int n) { return sequential(n, exact); });
  const io::NpyArray reordered = row([&](int n) { return pairwise(n, 0, kK); });
  const io::NpyArray dropped = row([&](int n) { return sequential(n, exact) - exact(n, 7); });
  const io::NpyArray bf16 = row([&](int n) {
    return sequential(n, [&](int m, int k) {
      return hlo::BF16ToFloat(hlo::FloatToBF16(a[k])) *
             hlo::BF16ToFloat(hlo::FloatToBF16(column(m, k)));
    });
  });
  const io::NpyArray shifted = row([&](int n) {
    return sequential(n, [&](int m, int k) { return a[k] * column(m, (k + 1) % kK); });
  });
  const double scale = io::ReductionToleranceScale(kK);
  EXPECT_EQ(scale, 32);
  EXPECT_TRUE(io::CompareArrays({expected}, {reordered}, nullptr, scale).matched)
      << io::CompareArrays({expected}, {reordered}, nullptr, scale).summary;
  EXPECT_FALSE(io::CompareArrays({expected}, {reordered}, nullptr).matched)
      << "the unscaled f32 default no longer flags a reordered sum: the test lost its point";
  for (const io::NpyArray* bug : {&dropped, &bf16, &shifted}) {
    EXPECT_FALSE(io::CompareArrays({expected}, {*bug}, nullptr, scale).matched);
  }
}

TEST(CompareReductionScale, LongestReductionOfAModule) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[8,300] parameter(0)
  b = f32[300,4] parameter(1)
  d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  r = f32[4] reduce(d, z), dimensions={0}, to_apply=add
  img = f32[1,10,10,16] parameter(2)
  k = f32[3,3,16,2] parameter(3)
  c = f32[1,8,8,2] convolution(img, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[4], f32[1,8,8,2]) tuple(r, c)
})");
  EXPECT_EQ(io::LongestReduction(*module), 300);  // the conv sums 3*3*16 = 144, the reduce 8
}

TEST(CompareComplex, ModulusOfTheDifferenceAndBothPartsInTheMessage) {
  auto complex = [](float real, float imag) {
    hlo::Literal literal(hlo::Shape::Array(PrimitiveType::kC64, {1}));
    literal.SetComplex(0, {real, imag});
    return io::NpyArray{"out0", std::move(literal)};
  };
  io::Tolerance tol{0, 0.5};
  // |(3, 4) - (3, 4.4)| = 0.4 <= 0.5; |(3, 4) - (3.4, 4.4)| = 0.566 > 0.5 though each part is 0.4.
  EXPECT_TRUE(io::CompareArrays({complex(3, 4)}, {complex(3, 4.4f)}, &tol).matched);
  const io::CompareResult result =
      io::CompareArrays({complex(3, 4)}, {complex(3.4f, 4.4f)}, &tol);
  EXPECT_FALSE(result.matched);
  EXPECT_NE(result.summary.find("expected (3, 4), got (3.4"), std::string::npos) << result.summary;
}

TEST(CompareNarrowerFloats, OutputsComputedThroughBf16AreNamed) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
add_bf16 {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
cond {
  st = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  st = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[4] get-tuple-element(st), index=1
  h = f16[4] convert(v)
  w = f32[4] convert(h)
  ROOT next = (s32[], f32[4]) tuple(j, w)
}
ENTRY e {
  a = f32[8,16] parameter(0)
  w = bf16[16,4] parameter(1)
  ab = bf16[8,16] convert(a)
  d = f32[8,4] dot(ab, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  plain = f32[8,16] add(a, a)
  widened = f32[16,4] convert(w)
  wt = bf16[4,16] transpose(w), dimensions={1,0}
  zero = bf16[] constant(0)
  rs = bf16[4] reduce(wt, zero), dimensions={1}, to_apply=add_bf16
  rsf = f32[4] convert(rs)
  z = s32[] constant(0)
  v0 = f32[1,4] slice(plain), slice={[0:1], [0:4]}
  v = f32[4] reshape(v0)
  init = (s32[], f32[4]) tuple(z, v)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT t = (f32[8,4], f32[8,16], f32[16,4], bf16[4,16], f32[4], (s32[], f32[4]))
    tuple(d, plain, widened, wt, rsf, loop)
})");
  const auto through = io::OutputsComputedThroughNarrowerFloats(*module);
  // out0: the dot's operand was rounded to bf16. out1: f32 only. out2: a bf16 parameter only
  // widened (both sides read the same values). out3: bf16 itself (its own defaults already).
  // out4: a bf16 reduce, widened. out5: the loop's s32 counter. out6: its f32 value rounded to
  // f16 in the body.
  EXPECT_EQ(through, (std::map<std::string, PrimitiveType>{{"out0", PrimitiveType::kBF16},
                                                           {"out4", PrimitiveType::kBF16},
                                                           {"out6", PrimitiveType::kF16}}));
}

TEST(CompareNarrowerFloats, AnF32ResultComputedThroughBf16GetsBf16Defaults) {
  // 4e-3 relative: one bf16 ulp near 1, far outside f32's 1e-5, within bf16's 1e-2.
  const auto expected = Floats("out0", {1.0, 2.0}, PrimitiveType::kF32);
  const auto actual = Floats("out0", {1.004, 2.0}, PrimitiveType::kF32);
  EXPECT_FALSE(io::CompareArrays({expected}, {actual}, nullptr).matched);
  const std::map<std::string, PrimitiveType> through = {{"out0", PrimitiveType::kBF16}};
  EXPECT_TRUE(io::CompareArrays({expected}, {actual}, nullptr, 1.0, &through).matched);
  // Another array's entry does not apply, and an explicit tolerance is used as given.
  const std::map<std::string, PrimitiveType> other = {{"out1", PrimitiveType::kBF16}};
  EXPECT_FALSE(io::CompareArrays({expected}, {actual}, nullptr, 1.0, &other).matched);
  const io::Tolerance tight{1e-6, 1e-6};
  EXPECT_FALSE(io::CompareArrays({expected}, {actual}, &tight, 1.0, &through).matched);
}

}  // namespace

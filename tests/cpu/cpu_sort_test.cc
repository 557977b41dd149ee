// CPU backend: sort as a runtime merge sort with a generated comparator (targets/cpu/
// sort_thunk.h). Every case must run without the evaluator (thunks.sort, no fallback) and
// equal the interpreter element for element (sorting moves values, it computes none); ties,
// NaNs under an IEEE comparator and a total-order comparator are also checked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>

#include "tests/cpu/cpu_test_util.h"
#include "tests/test_support.h"

namespace {

using cpu_tests::Counter;
using hlo::PrimitiveType;

const io::Tolerance kExact{0.0, 0.0};

void ExpectNativeSort(const cpu_tests::CpuRun& run) {
  EXPECT_EQ(Counter(run, "thunks.sort"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

TEST(CpuSort, RandomShapesAlongEachDimensionMatchInterpreter) {
  // (dims, sort dimension): a single element, odd lengths, the outer and the inner dimension.
  const struct {
    std::string dims;
    int dimension;
  } cases[] = {{"1", 0}, {"300", 0}, {"3,17", 1}, {"17,3", 0}, {"4,5,6", 1}, {"2,1000", 1}};
  uint64_t seed = 1;
  for (const auto& c : cases) {
    const std::string shape = "f32[" + c.dims + "]";
    const std::string text = "HloModule s\n"
                             "lt { a = f32[] parameter(0)  b = f32[] parameter(1)\n"
                             "  ROOT c = pred[] compare(a, b), direction=LT }\n"
                             "ENTRY e {\n  x = " + shape + " parameter(0)\n  ROOT s = " + shape +
                             " sort(x), dimensions={" + std::to_string(c.dimension) +
                             "}, to_apply=lt\n}";
    SCOPED_TRACE(text);
    ExpectNativeSort(cpu_tests::ExpectMatchesInterp(text, seed++, &kExact));
  }
}

TEST(CpuSort, IntegerAndSwappedComparatorsMatchInterpreter) {
  // Native key comparisons (sort_thunk.cc RecognizeComparator) for signed / unsigned integers
  // and a bf16 comparator written as compare(rhs, lhs), GT on u32 keys given as UNSIGNED.
  const char* modules[] = {
      R"(HloModule s32
c { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = pred[] compare(a, b), direction=GT }
ENTRY e { x = s32[5,77] parameter(0)
  ROOT s = s32[5,77] sort(x), dimensions={1}, to_apply=c })",
      R"(HloModule u32
c { a = u32[] parameter(0)  b = u32[] parameter(1)  ROOT r = pred[] compare(a, b), direction=LT, type=UNSIGNED }
ENTRY e { x = u32[300] parameter(0)
  ROOT s = u32[300] sort(x), dimensions={0}, to_apply=c })",
      R"(HloModule bf16
c { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT r = pred[] compare(b, a), direction=LT }
ENTRY e { x = bf16[9,40] parameter(0)
  ROOT s = bf16[9,40] sort(x), dimensions={0}, to_apply=c })",
  };
  uint64_t seed = 11;
  for (const char* text : modules) {
    SCOPED_TRACE(text);
    ExpectNativeSort(cpu_tests::ExpectMatchesInterp(text, seed++, &kExact));
  }
}

TEST(CpuSort, KeyValuePairsDescendingKeepTiesInOrder) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule kv
gt {
  a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  k = f32[6] parameter(0)
  v = s32[6] parameter(1)
  ROOT s = (f32[6], s32[6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=gt
})");
  hlo::Literal keys(hlo::Shape::Array(PrimitiveType::kF32, {6}));
  hlo::Literal values(hlo::Shape::Array(PrimitiveType::kS32, {6}));
  const double key_values[] = {1, 3, 2, 3, 1, 0};
  for (int64_t i = 0; i < 6; ++i) {
    keys.SetFromDouble(i, key_values[i]);
    values.SetFromDouble(i, static_cast<double>(i));
  }
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {keys, values});
  // Descending keys; equal keys (3 at 1 and 3, 1 at 0 and 4) keep their input order.
  const double expected_keys[] = {3, 3, 2, 1, 1, 0};
  const int64_t expected_values[] = {1, 3, 2, 0, 4, 5};
  for (int64_t j = 0; j < 6; ++j) {
    EXPECT_EQ(run.result.elements()[0].GetAsDouble(j), expected_keys[j]) << j;
    EXPECT_EQ(run.result.elements()[1].GetAsInt64(j), expected_values[j]) << j;
  }
  ExpectNativeSort(run);
  ExpectNativeSort(cpu_tests::ExpectMatchesInterp(*module, 7, &kExact));
}

TEST(CpuSort, NaNsFollowTheComparator) {
  const char* comparators[] = {"direction=LT", "direction=LT, type=TOTALORDER"};
  const double input[] = {3, NAN, 1, 1, -0.0, 0.0, NAN, -INFINITY, 2};
  hlo::Literal x(hlo::Shape::Array(PrimitiveType::kF32, {9}));
  for (int64_t i = 0; i < 9; ++i) x.SetFromDouble(i, input[i]);
  for (const char* comparator : comparators) {
    SCOPED_TRACE(comparator);
    auto module = testing_support::ParseAndVerify(
        std::string("HloModule nan\nlt { a = f32[] parameter(0)  b = f32[] parameter(1)\n"
                    "  ROOT c = pred[] compare(a, b), ") +
        comparator + " }\nENTRY e {\n  x = f32[9] parameter(0)\n"
                     "  ROOT s = f32[9] sort(x), dimensions={0}, to_apply=lt\n}");
    cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x});
    ExpectNativeSort(run);
    // The interpreter's merge order, also for the inconsistent IEEE comparator.
    hlo::Literal expected = cpu_tests::Interp().Compile(*module)->Run(std::span<const hlo::Literal>(&x, 1));
    for (int64_t j = 0; j < 9; ++j) {
      const double want = expected.GetAsDouble(j), got = run.result.GetAsDouble(j);
      EXPECT_TRUE((std::isnan(want) && std::isnan(got)) ||
                  (want == got && std::signbit(want) == std::signbit(got)))
          << j << ": " << got << " vs " << want;
    }
  }
  // Total order by hand: -inf, -0, +0, 1, 1, 2, 3, NaN, NaN.
  auto total = testing_support::ParseAndVerify(R"(
HloModule total
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER }
ENTRY e {
  x = f32[9] parameter(0)
  ROOT s = f32[9] sort(x), dimensions={0}, to_apply=lt
})");
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*total, {x});
  const double expected[] = {-INFINITY, -0.0, 0.0, 1, 1, 2, 3};
  for (int64_t j = 0; j < 7; ++j) {
    EXPECT_EQ(run.result.GetAsDouble(j), expected[j]) << j;
    EXPECT_EQ(std::signbit(run.result.GetAsDouble(j)), std::signbit(expected[j])) << j;
  }
  EXPECT_TRUE(std::isnan(run.result.GetAsDouble(7)));
  EXPECT_TRUE(std::isnan(run.result.GetAsDouble(8)));
}

TEST(CpuSort, LexicographicBf16ComparatorAndColumnMajorLayout) {
  // Sort rows of a column-major [7,5] array along dim 0 by (bf16 key, then s32 tie-break).
  cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(R"(
HloModule lex
lex {
  a = bf16[] parameter(0)  b = bf16[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  tie = pred[] compare(i, j), direction=GT
  both = pred[] and(eq, tie)
  ROOT r = pred[] or(lt, both)
}
ENTRY e {
  k = bf16[7,5]{0,1} parameter(0)
  v = s32[7,5]{0,1} parameter(1)
  ROOT s = (bf16[7,5]{0,1}, s32[7,5]{0,1}) sort(k, v), dimensions={0}, to_apply=lex
})", 3, &kExact);
  ExpectNativeSort(run);
}

}  // namespace

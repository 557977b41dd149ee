// CPU backend: scatter as a generated kernel (targets/cpu/thunk_builder_scatter.cc). Hand
// values pin duplicate indices (combined in update order) and skipped out-of-bounds windows;
// random cases over several dimension-number forms and bodies must equal the interpreter and
// run without the evaluator (thunks.scatter, no fallback); an operand that dies at the
// scatter is updated in place (scatter.in-place) and a parameter never is.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/cpu/cpu_test_util.h"
#include "tests/test_support.h"

namespace {

using cpu_tests::Counter;
using hlo::PrimitiveType;

const char kBodies[] = R"(
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
mul_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] multiply(a, b) }
set_f32 { a = f32[] parameter(0)  ROOT b = f32[] parameter(1) }
add_bf16 { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }
pair {
  a = f32[] parameter(0)  i = s32[] parameter(1)  b = f32[] parameter(2)  j = s32[] parameter(3)
  s = f32[] maximum(a, b)
  k = s32[] add(i, j)
  ROOT t = (f32[], s32[]) tuple(s, k)
}
)";

std::string Module(const std::string& name, const std::string& entry) {
  return "HloModule " + name + "\n" + kBodies + "ENTRY e {\n" + entry + "\n}";
}

void ExpectNativeScatter(const cpu_tests::CpuRun& run) {
  EXPECT_EQ(Counter(run, "thunks.scatter"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

TEST(CpuScatter, DuplicatesAddUpAndOutOfBoundsWindowsAreSkipped) {
  auto module = testing_support::ParseAndVerify(Module("grad", R"(
  table = f32[5,2] parameter(0)
  ids = s32[5,1] parameter(1)
  g = f32[5,2] parameter(2)
  ROOT s = f32[5,2] scatter(table, ids, g), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32)"));
  hlo::Literal table(hlo::Shape::Array(PrimitiveType::kF32, {5, 2}));
  hlo::Literal ids(hlo::Shape::Array(PrimitiveType::kS32, {5, 1}));
  hlo::Literal g(hlo::Shape::Array(PrimitiveType::kF32, {5, 2}));
  for (int64_t i = 0; i < 10; ++i) table.SetFromDouble(i, 100.0 * static_cast<double>(i));
  const int64_t rows[] = {3, 1, 3, -1, 5};  // 3 twice; -1 and 5 do not fit: skipped
  for (int64_t u = 0; u < 5; ++u) {
    ids.SetFromDouble(u, static_cast<double>(rows[u]));
    g.SetFromDouble(2 * u, static_cast<double>(u + 1));
    g.SetFromDouble(2 * u + 1, 10.0 * static_cast<double>(u + 1));
  }
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {table, ids, g});
  const double expected[] = {0, 100, 200 + 2, 300 + 20, 400, 500, 600 + 1 + 3, 700 + 10 + 30, 800, 900};
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(run.result.GetAsDouble(i), expected[i]) << i;
  ExpectNativeScatter(run);
  EXPECT_EQ(Counter(run, "scatter.in-place"), 0);  // a parameter is never written
  cpu_tests::CpuRun again = cpu_tests::RunCpu(*module, {table, ids, g});
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(again.result.GetAsDouble(i), expected[i]) << i;
}

TEST(CpuScatter, DimensionNumberFormsAndBodiesMatchInterpreter) {
  const std::string cases[] = {
      // .at[ids].set(rows) with a 2-D index vector into a rank-3 operand.
      R"(
  x = f32[6,5,3] parameter(0)
  ids = s32[4,2] parameter(1)
  u = f32[4,3] parameter(2)
  ROOT s = f32[6,5,3] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=set_f32)",
      // Windows of 2x3 at scalar indices (implicit index vector), multiply.
      R"(
  x = f32[7,9] parameter(0)
  ids = s32[5] parameter(1)
  u = f32[5,2,3] parameter(2)
  ROOT s = f32[7,9] scatter(x, ids, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=mul_f32)",
      // bf16 add, index vector in dim 0 of the indices.
      R"(
  x = bf16[8,4] parameter(0)
  ids = s32[1,6] parameter(1)
  u = bf16[6,4] parameter(2)
  ROOT s = bf16[8,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add_bf16)",
      // Two operands combined by a tuple body.
      R"(
  x = f32[9] parameter(0)
  y = s32[9] parameter(1)
  ids = s32[12,1] parameter(2)
  a = f32[12] parameter(3)
  b = s32[12] parameter(4)
  ROOT s = (f32[9], s32[9]) scatter(x, y, ids, a, b), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair)",
  };
  for (const std::string& entry : cases) {
    for (uint64_t seed : {0, 1}) {
      SCOPED_TRACE(entry);
      ExpectNativeScatter(cpu_tests::ExpectMatchesInterp(Module("forms", entry), seed));
    }
  }
}

TEST(CpuScatter, DyingOperandIsUpdatedInPlace) {
  cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(Module("in_place", R"(
  x = f32[64,8] parameter(0)
  ids = s32[10,1] parameter(1)
  u = f32[10,8] parameter(2)
  twice = f32[64,8] add(x, x)
  s = f32[64,8] scatter(twice, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  ROOT r = f32[64,8] multiply(s, x))"));
  ExpectNativeScatter(run);
  EXPECT_EQ(Counter(run, "scatter.in-place"), 1);
}

const char kSelectAndScatterBodies[] = R"(
ge_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
)";

TEST(CpuSelectAndScatter, MaxPoolGradientByHandAndVsInterpreter) {
  // 1-D: windows of 2 with stride 1 and padding 1 on both sides over x = [1, 3, 3, 2]: the
  // windows are {pad,x0} {x0,x1} {x1,x2} {x2,x3} {x3,pad}; GE keeps the first of equal maxima.
  auto module = testing_support::ParseAndVerify(std::string("HloModule sas\n") +
                                                kSelectAndScatterBodies + R"(
ENTRY e {
  x = f32[4] parameter(0)
  g = f32[5] parameter(1)
  zero = f32[] constant(0)
  ROOT s = f32[4] select-and-scatter(x, g, zero), window={size=2 pad=1_1}, select=ge_f32, scatter=add_f32
})");
  hlo::Literal x(hlo::Shape::Array(PrimitiveType::kF32, {4}));
  hlo::Literal g(hlo::Shape::Array(PrimitiveType::kF32, {5}));
  const double xs[] = {1, 3, 3, 2};
  for (int64_t i = 0; i < 4; ++i) x.SetFromDouble(i, xs[i]);
  for (int64_t i = 0; i < 5; ++i) g.SetFromDouble(i, std::ldexp(1.0, static_cast<int>(i)));
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x, g});
  // g0 -> x0, g1 -> x1, g2 -> x1 (tie: the first), g3 -> x2, g4 -> x3.
  const double expected[] = {1, 2 + 4, 8, 16};
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(run.result.GetAsDouble(i), expected[i]) << i;
  EXPECT_EQ(Counter(run, "thunks.select-and-scatter"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);

  // ResNet's max-pool gradient shape, smaller: NHWC 3x3 stride 2, padding 0_1.
  cpu_tests::CpuRun random = cpu_tests::ExpectMatchesInterp(
      std::string("HloModule sas2\n") + kSelectAndScatterBodies + R"(
ENTRY e {
  x = f32[2,9,9,3] parameter(0)
  g = f32[2,4,4,3] parameter(1)
  zero = f32[] constant(0)
  ROOT s = f32[2,9,9,3] select-and-scatter(x, g, zero), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge_f32, scatter=add_f32
})");
  EXPECT_EQ(Counter(random, "thunks.select-and-scatter"), 1);
  EXPECT_EQ(Counter(random, "thunks.fallback"), 0);
}

}  // namespace

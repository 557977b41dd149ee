// Shared-memory kernels of the GPU code generator: block-per-row reductions (warp butterflies,
// warp partials through shared memory, bar.sync). Values are compared with the interpreter
// under emulation on several emulated block sizes (1, 2 and 3 warps); integer sums are exact
// whatever the summation order, so they catch a lost or doubled warp partial exactly. The
// schedule choice and launch dimensions are checked against numbers worked out by hand, and
// ptxas (when installed) must accept the kernels with no spills and the shared bytes we expect.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "targets/gpu/codegen/nvptx_target.h"
#include "targets/gpu/codegen/row_kernel.h"
#include "tests/gpu/codegen_expect.h"
#include "tests/small_modules.h"

namespace {

using gpu::codegen::DeviceLimits;
using gpu::codegen::RowKernelPlan;
using gpu_codegen_test::ExpectMatchesInterpreter;
using gpu_codegen_test::Tolerance;
using testing::HasSubstr;

const char* kLongRowSum = R"(
HloModule long_row_sum
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[4,50000] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4] reduce(a, zero), dimensions={1}, to_apply=add
})";

const std::string kLongRowSoftmax = small_modules::SoftmaxRows(4, 50000);

RowKernelPlan Plan(int64_t rows, int64_t row_length) {
  RowKernelPlan plan;
  plan.rows = rows;
  plan.row_length = row_length;
  return plan;
}

TEST(GpuCodegenShared, RowScheduleFollowsRowLengthAndRowCount) {
  const DeviceLimits h200;  // 132 SMs
  struct Case {
    int64_t rows, row_length;
    bool block_per_row;
  } cases[] = {
      {4, 50000, true},     // long rows
      {4096, 1025, true},   // just past kLongRow
      {4096, 1024, false},  // many rows of 1024: a warp each
      {131, 768, true},     // fewer rows than SMs, each worth more than 4 warps' lanes
      {132, 768, false},    // as many rows as SMs
      {5, 128, false},      // few rows, but one warp's work
      {5, 129, true},
  };
  for (const Case& c : cases) {
    RowKernelPlan plan = Plan(c.rows, c.row_length);
    gpu::codegen::ChooseRowSchedule(plan, h200);
    EXPECT_EQ(plan.block_per_row, c.block_per_row) << c.rows << "x" << c.row_length;
  }
}

TEST(GpuCodegenShared, BlockPerRowLaunchDimensions) {
  const DeviceLimits h200;
  RowKernelPlan plan = Plan(4, 50000);
  plan.block_per_row = true;
  // 50000 / 8 = 6250 threads wanted: capped at 1024; one block per row.
  auto dims = gpu::codegen::ChooseRowKernelLaunch(plan, h200);
  EXPECT_EQ(dims.block, 1024u);
  EXPECT_EQ(dims.grid, 4u);
  plan = Plan(100, 768);  // 96 threads wanted: at least 128
  plan.block_per_row = true;
  dims = gpu::codegen::ChooseRowKernelLaunch(plan, h200);
  EXPECT_EQ(dims.block, 128u);
  EXPECT_EQ(dims.grid, 100u);
  plan = Plan(100000, 2050);  // ceil(2050 / 8) = 257 -> 288 threads; 132 * (2048 / 288 = 7)
  plan.block_per_row = true;
  dims = gpu::codegen::ChooseRowKernelLaunch(plan, h200);
  EXPECT_EQ(dims.block, 288u);
  EXPECT_EQ(dims.grid, 924u);
  plan.block_per_row = false;  // warp per row: 256-thread blocks, one wave of 1056
  dims = gpu::codegen::ChooseRowKernelLaunch(plan, h200);
  EXPECT_EQ(dims.block, 256u);
  EXPECT_EQ(dims.grid, 1056u);
}

TEST(GpuCodegenShared, LongRowSumIsOneBlockPerRowThroughSharedMemory) {
  // 50000 terms: the interpreter's sequential f32 sum and the block's tree differ by rounding of
  // order n * eps * sum|x| (~1e-3 here); a lost warp partial would be off by units.
  gpu::codegen::GpuCompileResult compiled =
      ExpectMatchesInterpreter(kLongRowSum, 3, Tolerance{1e-5, 1e-2});
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "row-reduction-block");
  EXPECT_EQ(compiled.kernels[0].grid, 4u);
  EXPECT_EQ(compiled.kernels[0].block, 1024u);
  EXPECT_THAT(compiled.ptx, HasSubstr("st.shared.f32"));
  EXPECT_THAT(compiled.ptx, HasSubstr("ld.shared.f32"));
  EXPECT_THAT(compiled.ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(compiled.ptx, HasSubstr("shfl.sync.bfly.b32"));
  EXPECT_EQ(compiled.ptx.find(".local"), std::string::npos);
  // Other emulated block sizes: a single warp, and three warps (a partial slot count that is
  // not a power of two).
  ExpectMatchesInterpreter(kLongRowSum, 3, Tolerance{1e-5, 1e-2}, {1, 32});
  ExpectMatchesInterpreter(kLongRowSum, 3, Tolerance{1e-5, 1e-2}, {3, 96});
}

TEST(GpuCodegenShared, LongRowSoftmaxReadsRowValuesFromSharedMemory) {
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(kLongRowSoftmax, 5);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "row-reduction-block");
  ExpectMatchesInterpreter(kLongRowSoftmax, 5, {}, {2, 96});
}

TEST(GpuCodegenShared, IntegerBlockRowSumsAreExact) {
  // s32 sums and maxima do not depend on the order: any lost, doubled or stale partial shows.
  // Rows = 3 with 2 emulated blocks: the block-stride row loop reuses the shared arrays.
  const char* text = R"(
HloModule int_rows
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
max {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT m = s32[] maximum(x, y)
}
ENTRY main {
  a = s32[3,5000] parameter(0)
  zero = s32[] constant(0)
  s = s32[3] reduce(a, zero), dimensions={1}, to_apply=add
  lowest = s32[] constant(-2147483648)
  m = s32[3] reduce(a, lowest), dimensions={1}, to_apply=max
  ROOT r = s32[3] subtract(s, m)
})";
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(text, 7, Tolerance{0, 0});
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "row-reduction-block");
  ExpectMatchesInterpreter(text, 7, Tolerance{0, 0}, {2, 32});
  ExpectMatchesInterpreter(text, 7, Tolerance{0, 0}, {2, 160});
}

TEST(GpuCodegenShared, ShortRowsKeepTheWarpKernel) {
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule short_rows
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[300,200] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[300] reduce(a, zero), dimensions={1}, to_apply=add
})");
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "row-reduction");
  EXPECT_EQ(compiled.ptx.find(".shared"), std::string::npos);
  EXPECT_EQ(compiled.ptx.find("bar.sync"), std::string::npos);
}

TEST(GpuCodegenShared, PtxasAcceptsBlockRowKernelsWithSharedBytes) {
  ASSERT_TRUE(gpu::codegen::FindPtxas()) << "ptxas (CUDA toolkit) is missing";
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kLongRowSoftmax);
  gpu::codegen::GpuCompileOptions options;
  options.assemble = true;
  gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*module, options);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  const gpu::codegen::KernelRecord& kernel = compiled.kernels[0];
  ASSERT_TRUE(kernel.assembled);
  EXPECT_EQ(kernel.spill_store_bytes, 0);
  EXPECT_EQ(kernel.spill_load_bytes, 0);
  EXPECT_EQ(kernel.stack_bytes, 0);
  // Two [33 x f32] arrays, 8-byte aligned: 132 bytes, padding to 136, then 132.
  EXPECT_EQ(kernel.shared_bytes, 136 + 132);
}

}  // namespace

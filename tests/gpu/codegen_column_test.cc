// Column reductions through shared memory (column_kernel.h): values against the interpreter
// under emulation on several block sizes (1, 2, 3 and 32 warps: the transpose must not depend
// on the warp count), exact s32 sums, bf16 in and out, ragged last tiles, several outer
// slices, a mean epilogue; which fusions take the kernel (and which stay loop kernels); the
// launch worked out by hand; ptxas with no spills and the tile's shared bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "targets/gpu/codegen/column_kernel.h"
#include "targets/gpu/codegen/nvptx_target.h"
#include "tests/gpu/codegen_expect.h"

namespace {

using gpu::codegen::ColumnKernelPlan;
using gpu_codegen_test::ExpectMatchesInterpreter;
using gpu_codegen_test::Tolerance;
using testing::HasSubstr;

std::string SumModule(const std::string& in, const std::string& out, const std::string& dims) {
  return R"(
HloModule column_sum
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[)" +
         in + R"(] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[)" +
         out + R"(] reduce(a, zero), dimensions={)" + dims + R"(}, to_apply=add
})";
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(GpuCodegenColumn, SumOverDim0IsTiledThroughSharedMemory) {
  // 100 columns: 3 full tiles and a ragged one of 4. Each column sums 300 random terms in warp
  // lanes and a butterfly, not in the interpreter's order: partial sums of ~17 in magnitude
  // round differently by ~1e-5 absolute.
  const std::string text = SumModule("300,100", "100", "0");
  const Tolerance reassociated{1e-5, 1e-4};
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(text, 2, reassociated);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "column-reduction");
  EXPECT_EQ(compiled.kernels[0].grid, 4u);      // tiles: ceil(100 / 32)
  EXPECT_EQ(compiled.kernels[0].block, 1024u);  // fewer tiles than SMs: 32 warps a tile
  EXPECT_THAT(compiled.ptx, HasSubstr("st.shared.f32"));
  EXPECT_THAT(compiled.ptx, HasSubstr("ld.shared.f32"));
  EXPECT_EQ(Count(compiled.ptx, "bar.sync"), 2u);
  EXPECT_EQ(Count(compiled.ptx, "shfl.sync.bfly.b32"), 5u);
  EXPECT_EQ(compiled.ptx.find(".local"), std::string::npos);
  for (gpu::emulator::EmulatedGrid grid :
       {gpu::emulator::EmulatedGrid{1, 32}, gpu::emulator::EmulatedGrid{3, 96},
        gpu::emulator::EmulatedGrid{2, 1024}})
    ExpectMatchesInterpreter(text, 2, reassociated, grid);
}

TEST(GpuCodegenColumn, IntegerSumsAreExactAcrossOuterSlicesAndReducedRuns) {
  // [3, 7, 37, 40] reducing dims {1, 2}: OUTER 3, R 259, C 40 (two tiles each, one ragged).
  const char* text = R"(
HloModule int_columns
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY main {
  a = s32[3,7,37,40] parameter(0)
  zero = s32[] constant(0)
  ROOT r = s32[3,40] reduce(a, zero), dimensions={1,2}, to_apply=add
})";
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(text, 4, Tolerance{0, 0});
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "column-reduction");
  EXPECT_EQ(compiled.kernels[0].grid, 6u);
  ExpectMatchesInterpreter(text, 4, Tolerance{0, 0}, {5, 64});
  ExpectMatchesInterpreter(text, 4, Tolerance{0, 0}, {1, 96});
}

TEST(GpuCodegenColumn, Bf16InAndOutWithF32Accumulation) {
  const char* text = R"(
HloModule bf16_columns
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = bf16[512,96] parameter(0)
  af = f32[512,96] convert(a)
  zero = f32[] constant(0)
  r = f32[96] reduce(af, zero), dimensions={0}, to_apply=add
  ROOT c = bf16[96] convert(r)
})";
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(text, 6);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "column-reduction");
  EXPECT_THAT(compiled.ptx, HasSubstr("st.global.u16"));
  ExpectMatchesInterpreter(text, 6, {}, {2, 96});
}

TEST(GpuCodegenColumn, Bf16ReducerAndMaxWithMeanEpilogue) {
  // A bf16 reducer (16-bit shuffles) and a mean: divide by a broadcast constant after the reduce.
  const char* text = R"(
HloModule bf16_max_mean
mx {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT m = bf16[] maximum(x, y)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = bf16[70,33] parameter(0)
  ninf = bf16[] constant(-inf)
  m = bf16[33] reduce(a, ninf), dimensions={0}, to_apply=mx
  b = f32[70,33] parameter(1)
  zero = f32[] constant(0)
  s = f32[33] reduce(b, zero), dimensions={0}, to_apply=add
  n = f32[] constant(70)
  nb = f32[33] broadcast(n), dimensions={}
  mean = f32[33] divide(s, nb)
  ROOT t = (bf16[33], f32[33]) tuple(m, mean)
})";
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(text, 8);
  size_t column_kernels = 0;
  for (const gpu::codegen::KernelRecord& kernel : compiled.kernels)
    column_kernels += kernel.kind == "column-reduction";
  EXPECT_EQ(column_kernels, 2u);
  ExpectMatchesInterpreter(text, 8, {}, {3, 64});
}

TEST(GpuCodegenColumn, NonContiguousOrMinorReductionsAreNotColumnKernels) {
  // dims {0, 2} of [4, 5, 6]: not one contiguous run -> a loop kernel, values still right.
  gpu::codegen::GpuCompileResult compiled =
      ExpectMatchesInterpreter(SumModule("4,5,6", "5", "0,2"), 9);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "loop");
  // The minor dim is a row reduction.
  compiled = ExpectMatchesInterpreter(SumModule("6,40", "6", "1"), 9);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "row-reduction");
  // A single column (C = 1) is a row reduction of the transposed view: not tiled.
  compiled = ExpectMatchesInterpreter(SumModule("50,1", "1", "0"), 9);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_NE(compiled.kernels[0].kind, "column-reduction");
}

TEST(GpuCodegenColumn, LaunchDimensionsByHand) {
  const gpu::codegen::DeviceLimits h200;  // 132 SMs, 2048 threads each
  ColumnKernelPlan plan;
  plan.outer = 1;
  plan.reduced = 4096;
  plan.columns = 1024;  // 32 tiles < 132 SMs: 1024-thread blocks
  auto dims = gpu::codegen::ChooseColumnLaunchDimensions(plan, h200);
  EXPECT_EQ(dims.grid, 32u);
  EXPECT_EQ(dims.block, 1024u);
  plan.outer = 64;  // 2048 tiles: 256-thread blocks, one wave of 132 * 8
  dims = gpu::codegen::ChooseColumnLaunchDimensions(plan, h200);
  EXPECT_EQ(dims.grid, 1056u);
  EXPECT_EQ(dims.block, 256u);
}

TEST(GpuCodegenColumn, PtxasAcceptsTheTiledKernel) {
  ASSERT_TRUE(gpu::codegen::FindPtxas()) << "ptxas (CUDA toolkit) is missing";
  std::unique_ptr<hlo::Module> module =
      testing_support::ParseAndVerify(SumModule("4096,1024", "1024", "0"));
  gpu::codegen::GpuCompileOptions options;
  options.assemble = true;
  gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*module, options);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  const gpu::codegen::KernelRecord& kernel = compiled.kernels[0];
  ASSERT_TRUE(kernel.assembled);
  EXPECT_EQ(kernel.spill_store_bytes, 0);
  EXPECT_EQ(kernel.stack_bytes, 0);
  EXPECT_EQ(kernel.shared_bytes, 32 * 33 * 4);  // the padded f32 tile
}

}  // namespace

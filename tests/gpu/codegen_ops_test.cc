// The GPU code generator's kernels for gather, reduce-window and topk, and its library steps
// inside fusions (convolution kOutput fusions: cuDNN + epilogue kernel; kCustom fusions around a
// dot: cuBLASLt), each compared element by element with the reference interpreter through the
// host emulator; plus the corpus modules that needed them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "targets/gpu/codegen/gpu_compiler.h"
#include "tests/gpu/codegen_expect.h"
#include "tests/test_support.h"

namespace {

using gpu::codegen::GpuCompileResult;
using gpu_codegen_test::ExpectMatchesInterpreter;
using testing::HasSubstr;

template <typename Call>
int CountSteps(const GpuCompileResult& compiled) {
  int count = 0;
  for (const gpu::Step& step : compiled.artifact.manifest.steps)
    count += std::holds_alternative<Call>(step.call);
  return count;
}

std::string OwnerOf(const GpuCompileResult& compiled, const std::string& instruction) {
  for (const auto& owner : compiled.owners)
    if (owner.instruction == instruction) return owner.owner;
  return "";
}

std::string CompileError(const std::string& text) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  try {
    gpu::codegen::CompileModule(*module);
  } catch (const hlo::Error& error) {
    return error.message();
  }
  return "(compiled)";
}

TEST(GpuCodegenOps, EmbeddingGatherClampsOutOfRangeRows) {
  // dlrm's lookup: one row of 8 per index; -2 clamps to row 0, 11 and 99 to the last row (9).
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule embedding
ENTRY main {
  table = f32[10,8] parameter(0)
  ids = s32[6,1] constant({{0}, {9}, {3}, {-2}, {11}, {99}})
  ROOT g = f32[6,8] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
})");
  EXPECT_EQ(OwnerOf(compiled, "g"), "generated-kernel");
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].elements_per_thread, 4);  // 8 columns: the 4-wide form
}

TEST(GpuCodegenOps, MaxPoolReduceWindowWithPaddingAndStride) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule maxpool
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[1,9,9,4] parameter(0)
  init = f32[] constant(-inf)
  ROOT p = f32[1,5,5,4] reduce-window(x, init), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})");
  EXPECT_EQ(OwnerOf(compiled, "p"), "generated-kernel");
}

TEST(GpuCodegenOps, TopKOrdersTiesNaNsAndSignedZerosLikeTheInterpreter) {
  // Total order: NaN is largest, -0 < +0, equal values keep the lower index first. Both the
  // values and the s32 indices are results and compared.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule topk
ENTRY main {
  x = f32[3,9] constant({{1, 3, 3, nan, -0, 0, -inf, 2, 3}, {-1, -1, -1, -1, -1, -1, -1, -1, -1}, {5, -0, 0, -0, 7, 7, 1, 6, 0}})
  ROOT t = (f32[3,9], s32[3,9]) topk(x), k=9, largest=true
})");
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "topk");
}

TEST(GpuCodegenOps, ConvolutionOutputFusionIsCudnnPlusEpilogueKernel) {
  // resnet50's conv + bias + batch-norm scale + ReLU, NHWC / OHWI as the gpu pipeline leaves it.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule conv_bias_relu
ENTRY main {
  x = f32[1,10,10,3] parameter(0)
  w = f32[8,3,3,3] parameter(1)
  bias = f32[8] parameter(2)
  scale = f32[8] parameter(3)
  c = f32[1,5,5,8] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f
  bb = f32[1,5,5,8] broadcast(bias), dimensions={3}
  sb = f32[1,5,5,8] broadcast(scale), dimensions={3}
  added = f32[1,5,5,8] add(c, bb)
  scaled = f32[1,5,5,8] multiply(added, sb)
  z = f32[] constant(0)
  zb = f32[1,5,5,8] broadcast(z), dimensions={}
  ROOT r = f32[1,5,5,8] maximum(scaled, zb)
})");
  EXPECT_EQ(CountSteps<gpu::ConvCall>(compiled), 1);
  // to_nchw, to_kcrs, from_nkpq and the epilogue.
  EXPECT_EQ(compiled.kernels.size(), 4u);
  bool cudnn_owner = false;
  for (const auto& owner : compiled.owners) cudnn_owner |= owner.owner == "cuDNN";
  EXPECT_TRUE(cudnn_owner);
}

TEST(GpuCodegenOps, CustomFusionAroundADotIsACublasLtMatmul) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule custom_dot
inner {
  a = f32[16,8] parameter(0)
  b = f32[8,12] parameter(1)
  ROOT d = f32[16,12] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY main {
  p0 = f32[16,8] parameter(0)
  p1 = f32[8,12] parameter(1)
  ROOT f = f32[16,12] fusion(p0, p1), kind=kCustom, calls=inner
})");
  ASSERT_EQ(compiled.artifact.manifest.steps.size(), 1u);
  EXPECT_EQ(CountSteps<gpu::MatmulCall>(compiled), 1);
  EXPECT_EQ(OwnerOf(compiled, "f"), "cuBLASLt");
}

TEST(GpuCodegenOps, CustomFusionWithoutALibraryOpIsRefused) {
  EXPECT_THAT(CompileError(R"(
HloModule custom_add
inner {
  a = f32[16] parameter(0)
  ROOT n = f32[16] negate(a)
}
ENTRY main {
  p0 = f32[16] parameter(0)
  ROOT f = f32[16] fusion(p0), kind=kCustom, calls=inner
})"),
              HasSubstr("instruction f (fusion): an output fusion without a dot or convolution"));
}

TEST(GpuCodegenOps, TopKOfU64IsRefusedByName) {
  EXPECT_THAT(CompileError(R"(
HloModule topk_u64
ENTRY main {
  x = u64[2,8] parameter(0)
  ROOT t = (u64[2,2], s32[2,2]) topk(x), k=2, largest=true
})"),
              HasSubstr("instruction t (topk): element type u64 is not ordered"));
}

TEST(GpuCodegenOps, DynamicUpdateSliceClampsItsStart) {
  // Start (6, 1) clamps to (5, 1): rows 5..7, columns 1..4 take the update.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule dus
ENTRY main {
  x = f32[8,16] parameter(0)
  u = f32[3,4] parameter(1)
  i = s32[] constant(6)
  j = s32[] constant(1)
  ROOT d = f32[8,16] dynamic-update-slice(x, u, i, j)
})");
  EXPECT_EQ(OwnerOf(compiled, "d"), "generated-kernel");
}

TEST(GpuCodegenOps, ScatterAddWithDuplicateAndOutOfRangeRows) {
  // Embedding-gradient shape: rows 1 and 3 get updates (row 1 twice, added in update order);
  // -1 and 6 do not fit and are skipped. Window offsets never collide: the parallel form.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule scatter_add
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[6,4] parameter(0)
  ids = s32[5,1] constant({{1}, {3}, {1}, {-1}, {6}})
  u = f32[5,4] parameter(1)
  ROOT s = f32[6,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "scatter");
}

TEST(GpuCodegenOps, ScatterSetWithOverlappingWindowsRunsSerially) {
  // Windows of 4 at 0 and 2 overlap (the later update wins on 2..3); 7 + 4 > 10 is skipped.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule scatter_set
take_update {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  x = f32[10] parameter(0)
  ids = s32[3,1] constant({{0}, {2}, {7}})
  u = f32[3,4] parameter(1)
  ROOT s = f32[10] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=take_update
})");
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "scatter-serial");
}

TEST(GpuCodegenOps, StableSortOfKeysAndValuesWithTies) {
  // Keys with many ties (random bf16 in a narrow range would also do): the stable result keeps
  // equal keys in index order, which the values (iota) make visible.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule sort_kv
less {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT lt = pred[] compare(x, y), direction=LT
}
ENTRY main {
  k = f32[3,37] parameter(0)
  f = f32[3,37] floor(k)
  v = s32[3,37] iota(), iota_dimension=1
  ROOT s = (f32[3,37], s32[3,37]) sort(f, v), dimensions={1}, is_stable=true, to_apply=less
})");
  ASSERT_EQ(compiled.kernels.size(), 3u);  // floor, iota: loop kernels; then the sort
  EXPECT_EQ(compiled.kernels.back().kind, "sort");
}

TEST(GpuCodegenOps, InPlaceDynamicUpdateSliceWritesOnlyTheUpdate) {
  // y is dead after the update, so buffer assignment gives d y's buffer: the kernel runs over
  // the 3x40 update only (start (5, -3) clamps to (5, 0)), the rest of y stays as it is.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule dus_in_place
ENTRY main {
  x = f32[64,256] parameter(0)
  u = f32[3,40] parameter(1)
  i = s32[] constant(5)
  j = s32[] constant(-3)
  y = f32[64,256] negate(x)
  d = f32[64,256] dynamic-update-slice(y, u, i, j)
  ROOT e = f32[64,256] exponential(d)
})");
  ASSERT_EQ(compiled.kernels.size(), 3u);
  EXPECT_EQ(compiled.kernels[1].kind, "update-slice-in-place");
  EXPECT_EQ(compiled.kernels[1].grid, 1u);  // 120 elements: one block of 256 threads
}

TEST(GpuCodegenOps, TopKCustomCallUsesTheTopKKernel) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule topk_custom_call
ENTRY main {
  x = f32[4,100] parameter(0)
  ROOT t = (f32[4,7], s32[4,7]) custom-call(x), custom_call_target="TopK"
})");
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "topk");
}

TEST(GpuCodegenOps, VariadicScatterIsRefusedByName) {
  EXPECT_THAT(CompileError(R"(
HloModule scatter2
add2 {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  t = s32[] add(b, d)
  ROOT r = (f32[], s32[]) tuple(s, t)
}
ENTRY main {
  x = f32[6,4] parameter(0)
  y = s32[6,4] parameter(1)
  ids = s32[2,1] parameter(2)
  u = f32[2,4] parameter(3)
  v = s32[2,4] parameter(4)
  ROOT s = (f32[6,4], s32[6,4]) scatter(x, y, ids, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
})"),
              HasSubstr("instruction s (scatter): variadic scatter"));
}

class GpuCodegenCorpusOps : public testing::TestWithParam<std::string> {};

TEST_P(GpuCodegenCorpusOps, MatchesInterpreter) {
  const std::string path = testing_support::CorpusPath(GetParam() + ".hlo");
  ExpectMatchesInterpreter(testing_support::ReadFile(path));
}

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCodegenCorpusOps,
                         testing::Values("topk_logits_k10_1x50000_bf16",
                                         "dlrm_keras_jax_f32_test_step"));

TEST(GpuCodegenCorpusOpsXnn, ParallelDotsMatchWithinReassociationError) {
  // Four 512x512x512 matmuls (cuBLASLt steps), each row summed (512 terms) and added: ~2.6e5
  // products of magnitude ~0.3 cancel to results of ~0.1, so summing rows in warp lanes
  // instead of sequentially moves results by ~1e-5 absolute (the CPU backend's vectorized
  // reduction differs from the interpreter by as much). 1e-4 still catches any wrong term.
  ExpectMatchesInterpreter(
      testing_support::ReadFile(testing_support::CorpusPath("xnn.parallel_dots.optimized.hlo")),
      /*seed=*/1, gpu_codegen_test::Tolerance{1e-4, 1e-4});
}

TEST(GpuCodegenCorpusOpsResnet, Resnet50MatchesInterpreter) {
  // 53 convolution output fusions (cuDNN + epilogue kernel), max pooling (reduce-window), the
  // classifier matmul: ~25 s, most of it emulating the convolutions on the host.
  ExpectMatchesInterpreter(
      testing_support::ReadFile(testing_support::CorpusPath("resnet50_keras_jax_f32.hlo")));
}

}  // namespace

// Values computed by the GPU code generator's artifacts, checked element by element against the
// reference interpreter through the host emulator (targets/gpu/emulator/host_emulator.h): loop kernels (4-wide
// and scalar), row kernels (reductions, softmax, layer norm), kOutput fusions (matmul then the
// epilogue kernel), multi-output fusions, constants, and corpus modules.
#include <gtest/gtest.h>

#include <cmath>

#include "targets/gpu/codegen/gpu_compiler.h"
#include "tests/gpu/codegen_expect.h"
#include "tests/small_modules.h"
#include "tests/test_support.h"

namespace {

using gpu::codegen::GpuCompileResult;
using gpu_codegen_test::ExpectMatchesInterpreter;

std::vector<std::string> KernelKinds(const GpuCompileResult& compiled) {
  std::vector<std::string> kinds;
  for (const auto& kernel : compiled.kernels)
    kinds.push_back(kernel.kind + "/" + std::to_string(kernel.elements_per_thread));
  return kinds;
}

TEST(GpuCodegenValues, WideElementwiseLoopKernel) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule add_relu
ENTRY main {
  a = f32[64,128] parameter(0)
  b = f32[64,128] parameter(1)
  s = f32[64,128] add(a, b)
  z = f32[] constant(0)
  zb = f32[64,128] broadcast(z), dimensions={}
  ROOT r = f32[64,128] maximum(s, zb)
})");
  EXPECT_EQ(KernelKinds(compiled), std::vector<std::string>{"loop/4"});
}

TEST(GpuCodegenValues, NarrowRowsUseOneElementPerThread) {
  // 6 is not a multiple of 4: one element per iteration; the row broadcast reads scalars.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule narrow
ENTRY main {
  a = f32[3,6] parameter(0)
  v = f32[6] parameter(1)
  vb = f32[3,6] broadcast(v), dimensions={1}
  m = f32[3,6] multiply(a, vb)
  ROOT e = f32[3,6] exponential(m)
})");
  EXPECT_EQ(KernelKinds(compiled), std::vector<std::string>{"loop/1"});
}

TEST(GpuCodegenValues, RowSumAndMeanBf16) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule row_mean
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = bf16[4,7,100] parameter(0)
  f = f32[4,7,100] convert(a)
  zero = f32[] constant(0)
  r = f32[4,7] reduce(f, zero), dimensions={2}, to_apply=add
  n = f32[] constant(100)
  nb = f32[4,7] broadcast(n), dimensions={}
  m = f32[4,7] divide(r, nb)
  ROOT o = bf16[4,7] convert(m)
})");
  EXPECT_EQ(KernelKinds(compiled), std::vector<std::string>{"row-reduction/1"});
}

TEST(GpuCodegenValues, SoftmaxRowsInOneKernel) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(small_modules::SoftmaxRows(5, 37));
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "row-reduction");
}

TEST(GpuCodegenValues, SmallColumnReductionIsTiled) {
  // 8 columns: one ragged tile (codegen_column_test.cc has the rest of column reductions).
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule column_sum
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[33,8] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[8] reduce(a, zero), dimensions={0}, to_apply=add
})");
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "column-reduction");
}

TEST(GpuCodegenValues, DotWithBiasAndReluEpilogue) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule mlp
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,12] parameter(1)
  bias = f32[12] parameter(2)
  d = f32[8,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,12] broadcast(bias), dimensions={1}
  s = f32[8,12] add(d, bb)
  z = f32[] constant(0)
  zb = f32[8,12] broadcast(z), dimensions={}
  ROOT r = f32[8,12] maximum(s, zb)
})");
  // One matmul with the relu_bias epilogue, no kernel.
  ASSERT_EQ(compiled.artifact.manifest.steps.size(), 1u);
  const auto* matmul = std::get_if<gpu::MatmulCall>(&compiled.artifact.manifest.steps[0].call);
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->epilogue, gpu::Epilogue::kReluBias);
  EXPECT_EQ(matmul->bias.bytes, 12u * 4);
  EXPECT_TRUE(compiled.kernels.empty());
}

// jax.nn.gelu(approximate=True) after a dense layer, as JAX writes it (x**3 as x*(x*x)).
std::string DenseGelu(bool bias, double cubic) {
  const std::string x = bias ? "s" : "d";
  return std::string(R"(
HloModule dense_gelu
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,12] parameter(1)
  bias = f32[12] parameter(2)
  d = f32[8,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,12] broadcast(bias), dimensions={1}
  s = f32[8,12] add(d, bb)
  sq = f32[8,12] multiply()") + x + ", " + x + R"()
  cube = f32[8,12] multiply()" + x + R"(, sq)
  c = f32[] constant()" + std::to_string(cubic) + R"()
  cb = f32[8,12] broadcast(c), dimensions={}
  a = f32[8,12] multiply(cb, cube)
  inner = f32[8,12] add()" + x + R"(, a)
  k = f32[] constant(0.7978845608028654)
  kb = f32[8,12] broadcast(k), dimensions={}
  t = f32[8,12] multiply(inner, kb)
  th = f32[8,12] tanh(t)
  one = f32[] constant(1)
  ob = f32[8,12] broadcast(one), dimensions={}
  p = f32[8,12] add(ob, th)
  half = f32[] constant(0.5)
  hb = f32[8,12] broadcast(half), dimensions={}
  cdf = f32[8,12] multiply(hb, p)
  ROOT r = f32[8,12] multiply()" + x + R"(, cdf)
})";
}

TEST(GpuCodegenValues, TanhGeluIsTheCublasLtGeluEpilogue) {
  for (bool bias : {false, true}) {
    SCOPED_TRACE(bias ? "gelu_bias" : "gelu");
    GpuCompileResult compiled = ExpectMatchesInterpreter(DenseGelu(bias, 0.044715));
    ASSERT_EQ(compiled.artifact.manifest.steps.size(), 1u);
    const auto* matmul = std::get_if<gpu::MatmulCall>(&compiled.artifact.manifest.steps[0].call);
    ASSERT_NE(matmul, nullptr);
    EXPECT_EQ(matmul->epilogue, bias ? gpu::Epilogue::kGeluBias : gpu::Epilogue::kGelu);
    EXPECT_TRUE(compiled.kernels.empty());
  }
}

TEST(GpuCodegenValues, AnotherCubicCoefficientIsNotGelu) {
  // 0.05 instead of 0.044715: not cuBLASLt's GELU, so the matmul plus an epilogue kernel.
  GpuCompileResult compiled = ExpectMatchesInterpreter(DenseGelu(false, 0.05));
  const auto* matmul = std::get_if<gpu::MatmulCall>(&compiled.artifact.manifest.steps.at(0).call);
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->epilogue, gpu::Epilogue::kNone);
  EXPECT_EQ(compiled.kernels.size(), 1u);
}

TEST(GpuCodegenValues, NonLibraryEpilogueRunsAsAKernel) {
  // tanh is not a cuBLASLt epilogue: matmul into scratch, then the epilogue kernel.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule dense_tanh
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,12] parameter(1)
  d = f32[8,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[8,12] tanh(d)
})");
  ASSERT_EQ(compiled.artifact.manifest.steps.size(), 2u);
  const auto* matmul = std::get_if<gpu::MatmulCall>(&compiled.artifact.manifest.steps[0].call);
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->epilogue, gpu::Epilogue::kNone);
  EXPECT_EQ(compiled.kernels.size(), 1u);
}

TEST(GpuCodegenValues, ConvolutionThroughCudnnWithPermutingCopies) {
  // NHWC input, HWIO filter, stride 2, asymmetric padding, dilation 2 on one axis.
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule conv
ENTRY main {
  x = f32[2,9,7,6] parameter(0)
  w = f32[3,2,6,5] parameter(1)
  ROOT c = f32[2,5,3,5] convolution(x, w), window={size=3x2 stride=2x2 pad=1_1x1_0 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f
})");
  int convs = 0;
  for (const gpu::Step& step : compiled.artifact.manifest.steps)
    convs += std::holds_alternative<gpu::ConvCall>(step.call);
  EXPECT_EQ(convs, 1);
}

TEST(GpuCodegenValues, DepthwiseConvolutionUsesGroups) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule depthwise
ENTRY main {
  x = f32[1,8,6,6] parameter(0)
  w = f32[8,1,3,3] parameter(1)
  ROOT c = f32[1,8,6,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=8
})");
  bool found = false;
  for (const gpu::Step& step : compiled.artifact.manifest.steps)
    if (const auto* conv = std::get_if<gpu::ConvCall>(&step.call)) {
      found = true;
      EXPECT_EQ(conv->groups, 8);
      EXPECT_EQ(conv->filter_dims, (std::vector<int64_t>{8, 1, 3, 3}));
    }
  EXPECT_TRUE(found);
}

TEST(GpuCodegenValues, MultiOutputAndTupleResults) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule two_outputs
ENTRY main {
  a = f32[16,8] parameter(0)
  b = f32[16,8] parameter(1)
  s = f32[16,8] add(a, b)
  p = f32[16,8] multiply(a, b)
  ROOT t = (f32[16,8], f32[16,8]) tuple(s, p)
})");
  EXPECT_EQ(compiled.artifact.manifest.results.size(), 2u);
  EXPECT_EQ(compiled.artifact.manifest.results[1].name, "out1");
}

TEST(GpuCodegenValues, EdgeShapes) {
  // Zero elements: no launch at all.
  GpuCompileResult empty = ExpectMatchesInterpreter(R"(
HloModule zero
ENTRY main {
  a = f32[0,4] parameter(0)
  ROOT s = f32[0,4] add(a, a)
})");
  EXPECT_TRUE(empty.artifact.manifest.steps.empty());
  // A scalar pred result (one byte), computed by a one-element loop.
  ExpectMatchesInterpreter(R"(
HloModule scalar_pred
ENTRY main {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
})");
  // Results that are the parameter itself, twice: no steps, slots alias the parameter.
  GpuCompileResult passthrough = ExpectMatchesInterpreter(R"(
HloModule passthrough
ENTRY main {
  a = f32[4] parameter(0)
  ROOT t = (f32[4], f32[4]) tuple(a, a)
})");
  EXPECT_EQ(passthrough.artifact.manifest.results[1].slice,
            passthrough.artifact.manifest.parameters[0].slice);
}

TEST(GpuCodegenValues, RowMajorReshapeIsADeviceCopy) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule reshape
ENTRY main {
  a = f32[2,3,4] parameter(0)
  ROOT r = f32[6,4] reshape(a)
})");
  ASSERT_EQ(compiled.artifact.manifest.steps.size(), 1u);
  EXPECT_STREQ(gpu::StepKindName(compiled.artifact.manifest.steps[0]), "copy");
  EXPECT_TRUE(compiled.kernels.empty());
}

TEST(GpuCodegenValues, Bf16WideKernelWithIota) {
  GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule bf16wide
ENTRY main {
  a = bf16[8,64] parameter(0)
  i = s32[8,64] iota(), iota_dimension=1
  f = bf16[8,64] convert(i)
  ROOT s = bf16[8,64] add(a, f)
})");
  EXPECT_NE(compiled.ptx.find("ld.global.v4.u16"), std::string::npos);
  EXPECT_NE(compiled.ptx.find("st.global.v4.u16"), std::string::npos);
}

class GpuCodegenCorpusValues : public testing::TestWithParam<std::string> {};

TEST_P(GpuCodegenCorpusValues, MatchesInterpreter) {
  const std::string path = testing_support::CorpusPath(GetParam() + ".hlo");
  ExpectMatchesInterpreter(testing_support::ReadFile(path));
}

// The same kernels at each launch's own block size (the grid above uses 64 threads for all):
// row kernels whose shared memory and warp count follow the block size, reductions, the
// attention block's softmax.
class GpuCodegenCorpusAtArtifactBlockSize : public testing::TestWithParam<std::string> {};

TEST_P(GpuCodegenCorpusAtArtifactBlockSize, MatchesInterpreter) {
  const std::string path = testing_support::CorpusPath(GetParam() + ".hlo");
  gpu::emulator::EmulatedGrid grid;
  grid.artifact_block_size = true;
  const GpuCompileResult compiled =
      ExpectMatchesInterpreter(testing_support::ReadFile(path), 1, std::nullopt, grid);
  // Not the default grid in disguise: some launch has a block size other than 64 threads.
  bool other = false;
  gpu::ForEachStep(compiled.artifact.manifest, [&](const gpu::Step& step) {
    if (const auto* launch = std::get_if<gpu::KernelLaunch>(&step.call))
      other = other || launch->block[0] != 64;
  });
  EXPECT_TRUE(other);
}

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCodegenCorpusAtArtifactBlockSize,
                         testing::Values("mean_axis_1x4096x1024_bf16", "sum_axis_1x4096x1024_bf16",
                                         "layer_norm_1x4096x768_bf16", "mha_block_1x12x128x64_bf16",
                                         "topk_logits_k10_1x50000_bf16"));

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCodegenCorpusValues,
                         testing::Values("depthwise_conv_3x3_1x256x56x56_bf16",
                                         "mean_axis_1x4096x1024_bf16", "sum_axis_1x4096x1024_bf16",
                                         "layer_norm_1x4096x768_bf16", "mha_block_1x12x128x64_bf16",
                                         "dynamic_slice_loop_1x2048x768_bf16",
                                         // a scan: a while loop whose body writes one row of
                                         // the output per trip, and its annotations
                                         "offload_scan_output",
                                         // f64 physics in 74 loops and conditionals: libdevice,
                                         // f64 cuBLASLt, batched gather/scatter (~35 s)
                                         "hlo_torax_iterhybrid_predictor_corrector_f64"));

}  // namespace

// The GPU code generator's PTX, artifact structure and errors: vectorized loads in wide kernels,
// warp shuffles in row kernels, no local memory, ptxas -arch=sm_90 acceptance with zero spills on
// the corpus modules it compiles, the matmul parameters of dots (worked out by hand), launch
// dimensions, and the "not supported" errors naming the instruction.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/diagnostic.h"
#include "targets/gpu/artifact.h"
#include "targets/gpu/codegen/gpu_compiler.h"
#include "targets/gpu/codegen/matmul_lowering.h"
#include "targets/gpu/codegen/nvptx_target.h"
#include "targets/gpu/codegen/row_kernel.h"
#include "tests/gpu/codegen_expect.h"
#include "tests/test_support.h"

namespace {

using gpu::codegen::CompileModule;
using gpu::codegen::GpuCompileOptions;
using gpu::codegen::GpuCompileResult;
using testing::HasSubstr;

GpuCompileResult Compile(const std::string& text, bool assemble = false) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  GpuCompileOptions options;
  options.assemble = assemble;
  return CompileModule(*module, options);
}

std::string CompileError(const std::string& text, const std::string& arch = "sm_90") {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  GpuCompileOptions options;
  options.arch = arch;
  options.assemble = false;
  try {
    CompileModule(*module, options);
  } catch (const hlo::Error& error) {
    return error.message();
  }
  return "(no error)";
}

const char* kWideAdd = R"(
HloModule wide
ENTRY main {
  a = f32[256,64] parameter(0)
  b = f32[256,64] parameter(1)
  ROOT s = f32[256,64] add(a, b)
})";

TEST(GpuCodegenPtx, WideElementwiseKernelUsesVectorLoadsAndStores) {
  GpuCompileResult compiled = Compile(kWideAdd);
  EXPECT_THAT(compiled.ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(compiled.ptx, HasSubstr(".visible .entry k_"));
  EXPECT_THAT(compiled.ptx, HasSubstr("ld.global.v4.f32"));
  EXPECT_THAT(compiled.ptx, HasSubstr("st.global.v4.f32"));
  EXPECT_EQ(compiled.ptx.find(".local"), std::string::npos);
  EXPECT_THAT(compiled.llvm_ir, HasSubstr("target triple = \"nvptx64-nvidia-cuda\""));
  EXPECT_THAT(compiled.llvm_ir, HasSubstr("llvm.nvvm.read.ptx.sreg.tid.x"));
  EXPECT_THAT(compiled.llvm_ir, HasSubstr("!nvvm.annotations"));
  ASSERT_EQ(compiled.kernels.size(), 1u);
  // 256*64/4 = 4096 iterations / 256 threads = 16 blocks.
  EXPECT_EQ(compiled.kernels[0].grid, 16u);
  EXPECT_EQ(compiled.kernels[0].block, 256u);
}

TEST(GpuCodegenPtx, RowReductionUsesWarpShuffles) {
  GpuCompileResult compiled = Compile(R"(
HloModule rows
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[1000,512] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[1000] reduce(a, zero), dimensions={1}, to_apply=add
})");
  EXPECT_THAT(compiled.ptx, HasSubstr("shfl.sync.bfly.b32"));
  EXPECT_EQ(compiled.ptx.find(".local"), std::string::npos);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, "row-reduction");
  // One warp per row: 1000 rows * 32 lanes / 256 threads = 125 blocks.
  EXPECT_EQ(compiled.kernels[0].grid, 125u);
}

TEST(GpuCodegenPtx, LaunchDimensionsCapAtOneWaveAndNeverZero) {
  gpu::codegen::DeviceLimits h200;  // 132 SMs x 2048 threads / 256 = 1056 blocks per wave
  EXPECT_EQ(gpu::codegen::ChooseLaunchDimensions(0, h200).grid, 1u);
  EXPECT_EQ(gpu::codegen::ChooseLaunchDimensions(1, h200).grid, 1u);
  EXPECT_EQ(gpu::codegen::ChooseLaunchDimensions(257, h200).grid, 2u);
  EXPECT_EQ(gpu::codegen::ChooseLaunchDimensions(int64_t{1} << 40, h200).grid, 1056u);
  gpu::codegen::DeviceLimits small{4, 1024, 128};
  EXPECT_EQ(gpu::codegen::ChooseLaunchDimensions(int64_t{1} << 20, small).grid, 32u);
}

TEST(GpuCodegenPtx, PtxasAcceptsTheKernelsWithoutSpills) {
  ASSERT_TRUE(gpu::codegen::FindPtxas()) << "ptxas (CUDA toolkit) is missing";
  GpuCompileResult compiled = Compile(kWideAdd, /*assemble=*/true);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_TRUE(compiled.kernels[0].assembled);
  EXPECT_GT(compiled.kernels[0].registers, 0);
  EXPECT_EQ(compiled.kernels[0].spill_store_bytes, 0);
  const gpu::Manifest& manifest = compiled.artifact.manifest;
  ASSERT_EQ(manifest.modules.size(), 1u);
  EXPECT_EQ(manifest.modules[0].cubin_arch, "sm_90");
  const std::string& cubin = compiled.artifact.sections.at(manifest.modules[0].cubin_section);
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(GpuCodegenPtx, ParsesPtxasVerboseOutput) {
  auto kernels = gpu::codegen::ParsePtxasLog(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k_fusion' for 'sm_90'\n"
      "ptxas info    : Function properties for k_fusion\n"
      "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem\n");
  ASSERT_EQ(kernels.count("k_fusion"), 1u);
  EXPECT_EQ(kernels["k_fusion"].registers, 40);
  EXPECT_EQ(kernels["k_fusion"].shared_bytes, 1024);
  EXPECT_EQ(kernels["k_fusion"].stack_bytes, 8);
  EXPECT_EQ(kernels["k_fusion"].spill_store_bytes, 4);
  EXPECT_EQ(kernels["k_fusion"].spill_load_bytes, 12);
}

TEST(GpuCodegenArtifact, LayoutSlotsAndRoundTrip) {
  GpuCompileResult compiled = Compile(R"(
HloModule slots
ENTRY main {
  a = f32[10,4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  cb = f32[10,4] broadcast(c), dimensions={1}
  s = f32[10,4] add(a, cb)
  ROOT t = (f32[10,4], f32[4]) tuple(s, c)
})");
  const gpu::Manifest& manifest = compiled.artifact.manifest;
  ASSERT_EQ(manifest.parameters.size(), 1u);
  EXPECT_EQ(manifest.parameters[0].name, "arg0");
  EXPECT_EQ(manifest.parameters[0].shape, (std::vector<int64_t>{10, 4}));
  EXPECT_EQ(manifest.parameters[0].slice.bytes, 160u);
  ASSERT_EQ(manifest.results.size(), 2u);
  EXPECT_EQ(manifest.results[1].name, "out1");
  EXPECT_EQ(manifest.results[0].name, "out0");
  for (const gpu::TensorSlot& slot : manifest.results) EXPECT_EQ(slot.slice.offset % 256, 0u);
  EXPECT_EQ(manifest.parameters[0].slice.offset % 256, 0u);
  // The constant travels as its 16 bytes (1.0f = 0x3f800000, little-endian).
  ASSERT_EQ(manifest.constants.size(), 1u);
  const std::string& data = compiled.artifact.sections.at(manifest.constants[0].section);
  ASSERT_EQ(data.size(), 16u);
  EXPECT_EQ(data.substr(0, 4), std::string("\x00\x00\x80\x3f", 4));
  gpu::Artifact parsed = gpu::ParseArtifact(gpu::SerializeArtifact(compiled.artifact));
  EXPECT_EQ(parsed.manifest.steps.size(), manifest.steps.size());
  EXPECT_EQ(parsed.sections.at("ptx.kernels"), compiled.ptx);
}

TEST(GpuCodegenArtifact, DotLoweringMatchesHandWorkedParameters) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(R"(
HloModule dots
ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[2,5,4] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
})");
  const hlo::Instruction* dot = module->entry()->root();
  auto lowered = gpu::codegen::LowerDotToMatmul(*dot, {0, 96}, {256, 160}, {512, 120});
  ASSERT_TRUE(std::holds_alternative<gpu::MatmulCall>(lowered));
  const gpu::MatmulCall& call = std::get<gpu::MatmulCall>(lowered);
  // A[b] is 3x4 (m x k, not transposed), B[b] is stored 5x4 (n x k: transposed), D[b] 3x5.
  EXPECT_EQ(call.m, 3);
  EXPECT_EQ(call.n, 5);
  EXPECT_EQ(call.k, 4);
  EXPECT_EQ(call.batch, 2);
  EXPECT_FALSE(call.transpose_a);
  EXPECT_TRUE(call.transpose_b);
  EXPECT_EQ(call.lda, 4);
  EXPECT_EQ(call.ldb, 4);
  EXPECT_EQ(call.ldd, 5);
  EXPECT_EQ(call.stride_a, 12);
  EXPECT_EQ(call.stride_b, 20);
  EXPECT_EQ(call.stride_d, 15);
}

TEST(GpuCodegenArtifact, DotWithTwoContractingDimsIsRefused) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(R"(
HloModule dot2
ENTRY main {
  a = f32[3,4,2] parameter(0)
  b = f32[4,2,5] parameter(1)
  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
})");
  auto lowered = gpu::codegen::LowerDotToMatmul(*module->entry()->root(), {}, {}, {});
  ASSERT_TRUE(std::holds_alternative<std::string>(lowered));
  EXPECT_THAT(std::get<std::string>(lowered), HasSubstr("2 contracting dimensions"));
}

TEST(GpuCodegenErrors, UnsupportedInstructionIsNamed) {
  EXPECT_THAT(CompileError(R"(
HloModule opaque
ENTRY main {
  a = f32[16] parameter(0)
  ROOT c = f32[16] custom-call(a), custom_call_target="vendor_kernel"
})"),
              HasSubstr("not supported by the GPU backend yet: instruction c (custom-call)"));
}

// f64 transcendentals call CUDA's libdevice, linked into the module and inlined before PTX:
// ptxas accepts it, no call to an __nv_ function remains, and the values (the emulator runs the C
// library's functions) match the interpreter's. Without libdevice the error names what is missing.
TEST(GpuCodegenLibdevice, F64TranscendentalsAreLinkedAndInlined) {
  ASSERT_TRUE(gpu::codegen::FindLibdevice()) << "CUDA's libdevice.10.bc is missing";
  const std::string text = R"(
HloModule f64math
ENTRY main {
  a = f64[64] parameter(0)
  b = f64[64] parameter(1)
  e = f64[64] exponential(a)
  l = f64[64] log(e)
  t = f64[64] tanh(b)
  p = f64[64] power(e, t)
  y = f64[64] atan2(a, b)
  s = f64[64] add(l, p)
  ROOT r = f64[64] add(s, y)
})";
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  const GpuCompileResult compiled = CompileModule(*module);
  EXPECT_THAT(compiled.llvm_ir, HasSubstr("@__nv_pow"));  // before linking: the calls
  EXPECT_EQ(compiled.ptx.find("__nv_"), std::string::npos);  // after: inlined
  for (const gpu::codegen::KernelRecord& kernel : compiled.kernels) EXPECT_TRUE(kernel.assembled);
  gpu_codegen_test::ExpectMatchesInterpreter(text);
}

TEST(GpuCodegenLibdevice, MissingLibdeviceIsNamed) {
  const char* saved = std::getenv("RETARGET_LIBDEVICE");
  const std::string restore = saved ? saved : "";
  setenv("RETARGET_LIBDEVICE", "/nonexistent/libdevice.10.bc", 1);
  const std::string error = CompileError(R"(
HloModule f64exp
ENTRY main {
  a = f64[8] parameter(0)
  ROOT e = f64[8] exponential(a)
})");
  if (saved) {
    setenv("RETARGET_LIBDEVICE", restore.c_str(), 1);
  } else {
    unsetenv("RETARGET_LIBDEVICE");
  }
  EXPECT_THAT(error, HasSubstr("exp on f64 needs CUDA's libdevice (__nv_exp), which is not installed"));
}

TEST(GpuCodegenErrors, UnknownArchitecture) {
  EXPECT_THAT(CompileError(kWideAdd, "sm_9x"), HasSubstr("unknown GPU architecture 'sm_9x'"));
  EXPECT_THAT(CompileError(kWideAdd, "sm_999"), HasSubstr("does not know 'sm_999'"));
}

// Every corpus module the backend compiles today assembles with ptxas -arch=sm_90, zero spills,
// no local memory; the others fail with an error naming the first instruction it cannot handle.
class GpuCodegenCorpus : public testing::TestWithParam<std::string> {};

TEST_P(GpuCodegenCorpus, AssemblesWithoutSpills) {
  ASSERT_TRUE(gpu::codegen::FindPtxas()) << "ptxas (CUDA toolkit) is missing";
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::CorpusPath(GetParam() + ".hlo")));
  GpuCompileResult compiled = CompileModule(*module);
  ASSERT_FALSE(compiled.kernels.empty());
  for (const gpu::codegen::KernelRecord& kernel : compiled.kernels) {
    EXPECT_TRUE(kernel.assembled) << kernel.entry;
    EXPECT_GT(kernel.registers, 0) << kernel.entry;
    EXPECT_EQ(kernel.spill_store_bytes + kernel.spill_load_bytes, 0) << kernel.entry;
    EXPECT_EQ(kernel.stack_bytes, 0) << kernel.entry;
  }
  EXPECT_EQ(compiled.ptx.find(".local"), std::string::npos);
  gpu::ValidateArtifact(compiled.artifact);
}

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCodegenCorpus,
                         testing::Values("depthwise_conv_3x3_1x256x56x56_bf16",
                                         "mean_axis_1x4096x1024_bf16", "sum_axis_1x4096x1024_bf16",
                                         "layer_norm_1x4096x768_bf16", "mha_block_1x12x128x64_bf16",
                                         "dynamic_slice_loop_1x2048x768_bf16",
                                         "xnn.parallel_dots.optimized",
                                         "topk_logits_k10_1x50000_bf16",
                                         "dlrm_keras_jax_f32_test_step", "resnet50_keras_jax_f32",
                                         // 22 conditionals, each branch a program (~45 s)
                                         "gemma3_1b_flax_call"));

struct CorpusRefusal {
  std::string module, message;
};
class GpuCodegenCorpusRefusals : public testing::TestWithParam<CorpusRefusal> {};

TEST_P(GpuCodegenCorpusRefusals, NamesTheInstruction) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::CorpusPath(GetParam().module + ".hlo")));
  try {
    CompileModule(*module);
    FAIL() << "compiled, but this slice of the backend should refuse it";
  } catch (const hlo::Error& error) {
    EXPECT_THAT(error.message(), HasSubstr(GetParam().message));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, GpuCodegenCorpusRefusals,
    testing::Values(CorpusRefusal{"mobilenet_v2", "(convolution): batch_group_count > 1"},
                    CorpusRefusal{"hlo_llama3_8b_cp_bf16_1x4",
                                   "instruction te_fused_attn_forward_ffi.35 (custom-call)"}));

}  // namespace

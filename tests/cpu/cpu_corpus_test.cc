// CPU backend on the real XLA corpus: every model the interpreter runs in tests/models/ must
// give the interpreter's results (f32 rtol 1e-4, bf16 2e-2, integers exact) through the Backend
// API, and `retarget run --target cpu --compare interp` must print MATCHED.
// CpuCorpusSlow.* (ResNet-50, DLRM: the interpreter alone takes tens of seconds) are labelled
// "slow" by cpu_slow_tests.cmake.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "hlo/module_io.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/test_support.h"

namespace {

using cpu_tests::Counter;

cpu_tests::CpuRun ExpectCorpusModelMatches(const std::string& stem, double rtol) {
  hlo::LoadedModule loaded = hlo::LoadModule(testing_support::CorpusPath(stem + ".hlo"));
  const io::Tolerance tolerance{rtol, rtol};
  cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(*loaded.module, 0, &tolerance);
  std::printf("%s: kernels %.0f, gemm %.0f, conv %.0f, fallback %.0f\n", stem.c_str(),
              Counter(run, "thunks.kernel"), Counter(run, "thunks.gemm"),
              Counter(run, "thunks.conv"), Counter(run, "thunks.fallback"));
  std::printf("%s", run.artifacts["fallbacks.txt"].c_str());
  return run;
}

constexpr double kBf16 = 2e-2;
constexpr double kF32 = 1e-4;

TEST(CpuCorpus, LayerNorm) {
  auto run = ExpectCorpusModelMatches("layer_norm_1x4096x768_bf16", kBf16);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0) << run.artifacts["fallbacks.txt"];
}
TEST(CpuCorpus, MeanAxis) { ExpectCorpusModelMatches("mean_axis_1x4096x1024_bf16", kBf16); }
TEST(CpuCorpus, SumAxis) { ExpectCorpusModelMatches("sum_axis_1x4096x1024_bf16", kBf16); }
TEST(CpuCorpus, MhaBlock) {
  auto run = ExpectCorpusModelMatches("mha_block_1x12x128x64_bf16", kBf16);
  EXPECT_GE(Counter(run, "thunks.gemm"), 2);
}
TEST(CpuCorpus, DepthwiseConv) {
  ExpectCorpusModelMatches("depthwise_conv_3x3_1x256x56x56_bf16", kBf16);
}
// Row sums of 512x512 dot results: 512 terms of magnitude ~20 cancel to results of ~5, so the
// GEMM's different summation order shows as absolute error ~sqrt(512) * 20 * 2^-24 * sqrt(512)
// ~ 6e-4: checked with atol 2e-3 instead of a relative bound.
TEST(CpuCorpus, ParallelDots) {
  hlo::LoadedModule loaded = hlo::LoadModule(testing_support::CorpusPath("xnn.parallel_dots.optimized.hlo"));
  const io::Tolerance tolerance{kF32, 2e-3};
  cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(*loaded.module, 0, &tolerance);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 4);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0) << run.artifacts["fallbacks.txt"];
}
TEST(CpuCorpus, TopK) {
  auto run = ExpectCorpusModelMatches("topk_logits_k10_1x50000_bf16", kBf16);
  EXPECT_EQ(Counter(run, "thunks.topk"), 1);
}
TEST(CpuCorpus, DynamicSliceLoop) {
  ExpectCorpusModelMatches("dynamic_slice_loop_1x2048x768_bf16", kBf16);
}

// The hot paths are generated or library code: no instruction of these models falls back.
TEST(CpuCorpusSlow, ResNet50) {
  auto run = ExpectCorpusModelMatches("resnet50_keras_jax_f32", kF32);
  EXPECT_GE(Counter(run, "thunks.conv"), 50);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}
TEST(CpuCorpusSlow, DlrmTestStep) {
  auto run = ExpectCorpusModelMatches("dlrm_keras_jax_f32_test_step", kF32);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

// The command line: run --target cpu --compare interp prints MATCHED and the timing line.
TEST(CpuCli, RunCompareInterpMatches) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("retarget_cpu_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string log = (dir / "log.txt").string();
  std::string command = "'";  // built by appending: GCC 12 warns falsely on "'" + string
  command += testing_support::BinDir() + "/retarget' run '" +
                              testing_support::CorpusPath("layer_norm_1x4096x768_bf16.hlo") +
                              "' --target cpu --compare interp --rtol 2e-2 --atol 2e-2 "
                              "--repeat 3 --stats-json '" + (dir / "stats.json").string() +
                              "' > '" + log + "' 2>&1";
  int status = std::system(command.c_str());
  std::string output = testing_support::ReadFile(log);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("MATCHED"), std::string::npos) << output;
  EXPECT_NE(output.find("over 3 runs"), std::string::npos) << output;
  std::string stats = testing_support::ReadFile((dir / "stats.json").string());
  EXPECT_NE(stats.find("kernel_ms."), std::string::npos) << stats;
  std::filesystem::remove_all(dir);
}

}  // namespace

// Fusion on real models from ../shared/corpus/xla: results are preserved (evaluated before and
// after, same seeded inputs) for the cpu and gpu targets, fusion coverage is printed for the
// models docs/perf.md tracks, and all fusion passes together stay fast on gemma3 (~10k
// instructions).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "compiler/fusion/fusion_builder.h"
#include "hlo/module_io.h"
#include "tests/compiler/fusion_test_util.h"
#include "targets/descriptions.h"

namespace {

using fusion_test::AllFusionPasses;
using hlo::Opcode;

std::unique_ptr<hlo::Module> LoadCorpus(const std::string& file) {
  return hlo::LoadModule(testing_support::CorpusPath(file)).module;
}

// Passes that normally run before fusion, when they are registered (others may not be yet).
void RunPreFusionPasses(hlo::Module& module, const compiler::TargetDescription& target) {
  for (const char* name : {"call-inliner", "algebraic-simplifier", "cse", "dce"}) {
    for (const compiler::PassEntry& entry : compiler::AllPasses()) {
      if (entry.name == name) entry.make(target)->Run(module);
    }
  }
  hlo::Verify(module);
}

bool IsTrivial(const hlo::Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement: case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

struct Coverage {
  int64_t work = 0;        // non-trivial instructions, fused ones counted inside their fusion
  int64_t fused = 0;       // ... of which inside a fusion of two or more of them
  int64_t kernels = 0;     // top-level non-trivial instructions (a fusion is one kernel)
  int64_t fusions[4] = {0, 0, 0, 0};
};

// Counted over the entry and control-flow bodies (not reducers).
Coverage Measure(const hlo::Module& module) {
  Coverage c;
  for (const hlo::Computation* computation : compiler::fusion::FusibleComputations(module)) {
    for (const auto& inst : computation->instructions()) {
      if (IsTrivial(*inst)) continue;
      ++c.kernels;
      if (inst->opcode() != Opcode::kFusion) {
        ++c.work;
        continue;
      }
      ++c.fusions[static_cast<int>(inst->attr<hlo::FusionAttrs>().kind)];
      int64_t inside = 0;
      for (const auto& body : inst->called_computations()[0]->instructions()) {
        if (!IsTrivial(*body)) ++inside;
      }
      c.work += inside;
      if (inside >= 2) c.fused += inside;
    }
  }
  return c;
}

class FusionPreservesResults
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(FusionPreservesResults, OnCorpusModule) {
  const auto& [file, target_name] = GetParam();
  const compiler::TargetDescription& target = *targets::FindDescription(target_name);
  auto before = LoadCorpus(file);
  auto after = before->Clone();
  EXPECT_TRUE(fusion_test::RunPasses(*after, AllFusionPasses(), target));
  fusion_test::ExpectSameResults(*before, *after);
  // The printed module is what `retarget compile --emit hlo` writes: it must parse and verify.
  hlo::Verify(*hlo::ParseHloText(hlo::PrintModule(*after), "fused.hlo"));
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, FusionPreservesResults,
    ::testing::Combine(::testing::Values("mha_block_1x12x128x64_bf16.hlo",
                                         "layer_norm_1x4096x768_bf16.hlo",
                                         "depthwise_conv_3x3_1x256x56x56_bf16.hlo",
                                         "mean_axis_1x4096x1024_bf16.hlo",
                                         "sum_axis_1x4096x1024_bf16.hlo",
                                         "xnn.parallel_dots.optimized.hlo",
                                         "dlrm_keras_jax_f32_test_step.hlo"),
                       ::testing::Values("cpu", "gpu")),
    [](const auto& info) {
      std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
      for (char& ch : name) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

TEST(FusionCorpus, LayerNormAndMhaHaveTheExpectedKernels) {
  // layer norm: one kInput fusion for the whole row group.
  auto ln = LoadCorpus("layer_norm_1x4096x768_bf16.hlo");
  fusion_test::RunPasses(*ln, AllFusionPasses(), targets::CpuDescription());
  const auto ln_fusions = fusion_test::Fusions(*ln);
  ASSERT_EQ(ln_fusions.size(), 1u);
  EXPECT_EQ(fusion_test::KindOf(*ln_fusions[0]), hlo::FusionKind::kInput);
  EXPECT_EQ(fusion_test::CountInBody(*ln_fusions[0], Opcode::kReduce), 2);
  // mha: kOutput (QK^T + scale), kInput (softmax), kLoop (K transpose), and the PV dot.
  auto mha = LoadCorpus("mha_block_1x12x128x64_bf16.hlo");
  fusion_test::RunPasses(*mha, AllFusionPasses(), targets::GpuDescription());
  int kinds[4] = {0, 0, 0, 0};
  for (const hlo::Instruction* f : fusion_test::Fusions(*mha)) {
    ++kinds[static_cast<int>(fusion_test::KindOf(*f))];
  }
  EXPECT_EQ(kinds[static_cast<int>(hlo::FusionKind::kOutput)], 1);
  EXPECT_EQ(kinds[static_cast<int>(hlo::FusionKind::kInput)], 1);
  EXPECT_EQ(kinds[static_cast<int>(hlo::FusionKind::kLoop)], 1);
  EXPECT_EQ(fusion_test::CountTopLevel(*mha, Opcode::kDot), 1);
}

TEST(FusionCorpus, PrintsCoverage) {
  std::printf("%-36s %-8s %6s %6s %8s %6s %6s %6s %9s\n", "model", "target", "work", "fused",
              "coverage", "kLoop", "kInput", "kOutput", "kernels");
  for (const char* file : {"resnet50_keras_jax_f32.hlo", "mha_block_1x12x128x64_bf16.hlo",
                           "layer_norm_1x4096x768_bf16.hlo",
                           "dlrm_keras_jax_f32_test_step.hlo"}) {
    for (const char* target_name : {"cpu", "gpu", "systolic", "interp"}) {
      const compiler::TargetDescription& target = *targets::FindDescription(target_name);
      auto module = LoadCorpus(file);
      RunPreFusionPasses(*module, target);
      fusion_test::RunPasses(*module, AllFusionPasses(), target);
      const Coverage c = Measure(*module);
      const double coverage = c.work ? static_cast<double>(c.fused) / c.work : 0.0;
      std::printf("%-36s %-8s %6lld %6lld %7.1f%% %6lld %6lld %6lld %9lld\n", file, target_name,
                  static_cast<long long>(c.work), static_cast<long long>(c.fused),
                  100.0 * coverage, static_cast<long long>(c.fusions[0]),
                  static_cast<long long>(c.fusions[1]), static_cast<long long>(c.fusions[2]),
                  static_cast<long long>(c.kernels));
      if (std::string(target_name) == "interp") {
        EXPECT_EQ(c.fused, 0);
      }
      if (std::string(target_name) == "cpu") {
        EXPECT_GT(coverage, 0.5) << file;
      }
    }
  }
}

// The passes' times are printed for the record only: pass times are benchmark numbers
// (bench/optimizer_numbers.sh, docs/perf.md); a limit here would fail on a loaded machine.
TEST(FusionCorpus, AllFusionPassesRunOnGemma) {
  auto module = LoadCorpus("gemma3_1b_flax_call.hlo");
  RunPreFusionPasses(*module, targets::CpuDescription());
  const int64_t instructions = module->instruction_count();
  double total_ms = 0;
  for (const std::string& name : AllFusionPasses()) {
    auto pass = compiler::MakePass(name, targets::GpuDescription());  // gpu: all four passes work
    const auto start = std::chrono::steady_clock::now();
    pass->Run(*module);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    std::printf("%-22s %8.1f ms\n", name.c_str(), ms);
    total_ms += ms;
  }
  std::printf("all fusion passes on gemma3 (%lld instructions): %.1f ms\n",
              static_cast<long long>(instructions), total_ms);
  hlo::Verify(*module);
  EXPECT_FALSE(fusion_test::Fusions(*module).empty());
}

}  // namespace

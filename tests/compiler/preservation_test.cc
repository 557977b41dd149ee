// Semantic preservation of the whole optimizer: for every target in targets::DescriptionNames() and
// every corpus module the interpreter runs quickly, the module after MakeTargetPipeline(target)
// (verified after every pass, "no change" checked honest) evaluates to the same results as the
// original on the same seeded random inputs. Tolerance is io::CompareArrays' per-type default
// (f32 rtol 1e-5 / atol 1e-6, bf16 1e-2 / 1e-2): passes may reassociate, but the evaluator rounds
// every bf16 intermediate, so a fusion that keeps the same ops keeps the same bits.
//
// Also: the full cpu pipeline on gemma3_1b_flax_call (~9.7k instructions) leaves a valid module,
// with the per-pass table printed (its speed: bench/compiler_bench.cc).
#include <gtest/gtest.h>

#include <iostream>

#include "compiler/target_pipelines.h"
#include "hlo/evaluator.h"
#include "hlo/module_io.h"
#include "hlo/verifier.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"
#include "targets/descriptions.h"

namespace {

constexpr uint64_t kSeed = 7;

class PreservationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PreservationTest, EveryTargetPipelineKeepsTheResults) {
  const std::string path = testing_support::CorpusPath(GetParam() + ".hlo");
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};  // elided constants are expected in the corpus
  hlo::LoadedModule loaded = hlo::LoadModule(path, /*verify=*/true, quiet);
  const hlo::Module& original = *loaded.module;
  std::vector<hlo::Literal> inputs = io::MakeRandomInputs(original, kSeed);
  std::vector<io::NpyArray> expected = io::FlattenOutputs(hlo::Evaluate(original, inputs));

  for (const std::string& target_name : targets::DescriptionNames()) {
    SCOPED_TRACE("target " + target_name);
    std::unique_ptr<hlo::Module> optimized = original.Clone();
    compiler::Pipeline pipeline = compiler::MakeTargetPipeline(*targets::FindDescription(target_name));
    compiler::PipelineOptions options;
    options.verify_each = true;
    options.check_honest_change = true;
    compiler::PipelineReport report;
    try {
      report = pipeline.Run(*optimized, options);
    } catch (const hlo::Error& e) {
      ADD_FAILURE() << GetParam() << " on " << target_name << ": " << e.message();
      continue;
    }
    std::vector<io::NpyArray> actual = io::FlattenOutputs(hlo::Evaluate(*optimized, inputs));
    io::CompareResult comparison = io::CompareArrays(expected, actual, nullptr);
    EXPECT_TRUE(comparison.matched)
        << GetParam() << " on " << target_name << ": " << comparison.summary;
    std::cout << "[ preserve ] " << GetParam() << " on " << target_name << ": "
              << original.instruction_count() << " -> " << optimized->instruction_count()
              << " instructions, " << report.passes.size() << " passes in "
              << report.total_milliseconds << " ms, " << comparison.summary << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, PreservationTest,
    ::testing::Values("mha_block_1x12x128x64_bf16", "layer_norm_1x4096x768_bf16",
                      "depthwise_conv_3x3_1x256x56x56_bf16", "mean_axis_1x4096x1024_bf16",
                      "sum_axis_1x4096x1024_bf16", "xnn.parallel_dots.optimized",
                      "dlrm_keras_jax_f32_test_step", "topk_logits_k10_1x50000_bf16",
                      "dynamic_slice_loop_1x2048x768_bf16", "resnet50_keras_jax_f32"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string name = info.param;
      for (char& c : name) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// The whole CPU pipeline on the largest corpus module leaves a valid module whose entry is
// mostly fusions. (How long it takes is measured in bench/compiler_bench.cc.)
TEST(CpuPipeline, Gemma3StaysValid) {
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  hlo::LoadedModule loaded =
      hlo::LoadModule(testing_support::CorpusPath("gemma3_1b_flax_call.hlo"), true, quiet);
  hlo::Module& module = *loaded.module;
  const int64_t before = module.instruction_count();
  compiler::Pipeline pipeline = compiler::MakeTargetPipeline(targets::CpuDescription());
  compiler::PipelineReport report = pipeline.Run(module, {});
  std::cout << "gemma3_1b_flax_call, cpu pipeline: " << before << " -> "
            << module.instruction_count() << " instructions\n"
            << report.ToTable();
  EXPECT_NO_THROW(hlo::Verify(module));
  int64_t fusions = 0;
  for (const auto& inst : module.entry()->instructions())
    fusions += inst->opcode() == hlo::Opcode::kFusion ? 1 : 0;
  EXPECT_GT(fusions, 500);
  EXPECT_LT(static_cast<int64_t>(module.entry()->instructions().size()), before / 2);
}

}  // namespace

// The basic passes over every corpus module: each pass leaves a module that verifies, reports
// "changed" honestly, and — for the modules small enough to interpret quickly (under 64 kB of
// text whose evaluation stays within kEvaluationBudget result elements) — evaluates to the
// same results. (How long each pass takes on gemma3: bench/compiler_bench.cc.)
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "compiler/pass_registry.h"
#include "compiler/target_description.h"
#include "hlo/evaluator.h"
#include "hlo/parser.h"
#include "tests/compiler/passes_test_util.h"
#include "targets/descriptions.h"

namespace {

const char* const kBasicPasses[] = {"call-inliner",
                                    "tuple-simplifier",
                                    "constant-folding",
                                    "cse",
                                    "dce",
                                    "while-loop-invariant-hoisting"};

std::unique_ptr<hlo::Module> ParseCorpus(const std::string& file) {
  const std::string path = testing_support::CorpusPath(file);
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  auto module = hlo::ParseHloText(testing_support::ReadFile(path), file, quiet);
  hlo::Verify(*module);
  return module;
}

class BasicPassesOnCorpus : public ::testing::TestWithParam<std::string> {};

// Work the interpreter may do per evaluation, counted in result elements (not timed): about a
// second. jax.b380442861's loop of 10^6 trips over 10^6-element bodies (10^12 elements) is far
// beyond it; the passes are then checked without the comparison, which says so.
constexpr int64_t kEvaluationBudget = 200'000'000;

hlo::Literal EvaluateWithinBudget(const hlo::Module& module,
                                  const std::vector<hlo::Literal>& inputs) {
  hlo::EvaluatorOptions options;
  options.max_result_elements = kEvaluationBudget;
  return hlo::Evaluate(module, inputs, options);
}

io::CompareResult CompareWith(const hlo::Literal& expected, const hlo::Module& module,
                              const std::vector<hlo::Literal>& inputs) {
  return io::CompareArrays(io::FlattenOutputs(expected),
                           io::FlattenOutputs(EvaluateWithinBudget(module, inputs)), nullptr);
}

TEST_P(BasicPassesOnCorpus, VerifyHonestAndSameResults) {
  const std::string file = GetParam();
  auto module = ParseCorpus(file);
  // Small modules also run through the interpreter: once before, then after every pass.
  bool evaluate = std::filesystem::file_size(testing_support::CorpusPath(file)) < 64 * 1024;
  std::vector<hlo::Literal> inputs;
  hlo::Literal expected;
  if (evaluate) {
    inputs = io::MakeRandomInputs(*module, 3);
    try {
      expected = EvaluateWithinBudget(*module, inputs);
    } catch (const hlo::Error& e) {
      // Only the budget may stop it; any other error fails the test.
      ASSERT_NE(std::string(e.what()).find("EvaluatorOptions::max_result_elements"),
                std::string::npos)
          << e.what();
      std::printf("  results not compared: %s\n", e.what());
      evaluate = false;
    }
  }
  const compiler::TargetDescription& cpu = targets::CpuDescription();
  // Each pass alone on the original (verify + honest "changed" + idempotence) ...
  for (const char* name : kBasicPasses) {
    SCOPED_TRACE(name);
    std::unique_ptr<compiler::Pass> pass = compiler::MakePass(name, cpu);
    std::unique_ptr<hlo::Module> copy = module->Clone();
    const bool changed = pass->Run(*copy);
    std::printf("  %-32s changed=%d instructions %lld -> %lld\n", name, changed ? 1 : 0,
                static_cast<long long>(module->instruction_count()),
                static_cast<long long>(copy->instruction_count()));
    std::unique_ptr<hlo::Module> result =
        passes_test::RunAndCheck(*pass, *module, changed, /*evaluate=*/false);
    if (evaluate) {
      io::CompareResult cmp = CompareWith(expected, *result, inputs);
      EXPECT_TRUE(cmp.matched) << cmp.summary;
    }
  }
  // ... then all of them in sequence, as a pipeline runs them.
  std::unique_ptr<hlo::Module> sequenced = module->Clone();
  for (const char* name : kBasicPasses) {
    compiler::MakePass(name, cpu)->Run(*sequenced);
    ASSERT_NO_THROW(hlo::Verify(*sequenced)) << "after " << name;
  }
  if (evaluate) {
    io::CompareResult cmp = CompareWith(expected, *sequenced, inputs);
    EXPECT_TRUE(cmp.matched) << cmp.summary;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, BasicPassesOnCorpus,
                         ::testing::ValuesIn(testing_support::CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace

// Every corpus module through each of this work item's passes: the result verifies, "changed"
// is honest (a second run changes nothing), the small models evaluate to the same results, and
// each pass stays far below the 1 s budget of the whole cpu pipeline on gemma3 (~9.7k
// instructions).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/conv_canonicalizer.h"
#include "compiler/passes/dot_canonicalizer.h"
#include "hlo/parser.h"
#include "tests/compiler/simplify_test_util.h"

namespace {

using simplify_test::Compare;

// Models small enough for the interpreter in a unit test (mobilenet and the LLMs are not).
bool IsSmall(const std::string& file) {
  for (const char* prefix : {"mha_block", "layer_norm", "depthwise_conv", "mean_axis", "sum_axis",
                             "xnn.parallel_dots"}) {
    if (file.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::unique_ptr<hlo::Module> LoadCorpus(const std::string& file) {
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};  // elided constants are expected here
  auto module = hlo::ParseHloText(testing_support::ReadFile(testing_support::CorpusPath(file)),
                                  file, quiet);
  hlo::Verify(*module);
  return module;
}

std::vector<std::unique_ptr<compiler::Pass>> ThisWorkItemsPasses() {
  std::vector<std::unique_ptr<compiler::Pass>> passes;
  passes.push_back(std::make_unique<compiler::BatchNormExpander>());
  passes.push_back(std::make_unique<compiler::AlgebraicSimplifier>());
  passes.push_back(std::make_unique<compiler::DotCanonicalizer>());
  passes.push_back(std::make_unique<compiler::ConvCanonicalizer>("b01f_01io->b01f"));
  return passes;
}

class CorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTest, EachPassKeepsTheContract) {
  const std::string file = GetParam();
  auto module = LoadCorpus(file);
  for (auto& pass : ThisWorkItemsPasses()) {
    SCOPED_TRACE(std::string(pass->name()) + " on " + file);
    auto result = module->Clone();
    const std::string before = hlo::PrintModule(*result);
    const auto start = std::chrono::steady_clock::now();
    const bool changed = pass->Run(*result);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASSERT_NO_THROW(hlo::Verify(*result));
    const std::string after = hlo::PrintModule(*result);
    EXPECT_EQ(changed, before != after);
    EXPECT_FALSE(pass->Run(*result)) << "second run found more to do";
    EXPECT_EQ(after, hlo::PrintModule(*result));
#ifdef NDEBUG  // the budget is for optimized builds; sanitizer/debug builds only check results
    if (file.rfind("gemma3", 0) == 0) {
      // The machine is shared: a slow first run is retried on fresh clones, keeping the best.
      double best = ms;
      for (int retry = 0; retry < 3 && best >= 100.0; ++retry) {
        auto again = module->Clone();
        const auto t0 = std::chrono::steady_clock::now();
        pass->Run(*again);
        best = std::min(best, std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - t0).count());
      }
      RecordProperty(std::string(pass->name()) + "_ms", std::to_string(best));
      EXPECT_LT(best, 100.0) << pass->name() << " took " << best << " ms on " << file;
    }
#endif
    if (changed && IsSmall(file)) simplify_test::ExpectSameResults(*module, *result, Compare::kTolerance);
  }
}

TEST_P(CorpusTest, CanonicalFormsSurviveTheSimplifier) {
  // simplifier -> canonicalizers -> simplifier (the order of the target pipelines): the second
  // simplifier must not fold the canonicalizers' transposes back into the dots.
  auto module = LoadCorpus(GetParam());
  compiler::AlgebraicSimplifier simplifier;
  compiler::DotCanonicalizer dots;
  compiler::ConvCanonicalizer convs("b01f_01io->b01f");
  simplifier.Run(*module);
  dots.Run(*module);
  convs.Run(*module);
  simplifier.Run(*module);
  hlo::Verify(*module);
  for (const auto& c : module->computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == hlo::Opcode::kDot) {
        EXPECT_TRUE(compiler::IsCanonicalDot(*inst)) << hlo::PrintInstruction(*inst);
      }
    }
  }
  EXPECT_FALSE(dots.Run(*module));
  EXPECT_FALSE(convs.Run(*module));
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(testing_support::CorpusFiles()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

}  // namespace

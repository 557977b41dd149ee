// The basic passes' tests live in passes_*_test.cc (one file per pair of passes) and
// passes_corpus_test.cc (every corpus module, semantics and timing); this file holds the
// cross-pass test: the basic passes composed as the target pipelines compose them.
#include <gtest/gtest.h>

#include "compiler/pass_registry.h"
#include "compiler/target_description.h"
#include "tests/compiler/passes_test_util.h"
#include "targets/descriptions.h"

namespace {

TEST(BasicPasses, ComposeToAFixedPoint) {
  auto module = passes_test::Parse(R"(
HloModule composed
twice {
  x = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  ROOT m = f32[4] multiply(x, b)
}
ENTRY main {
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  two = f32[] constant(1)
  three = f32[] add(one, two)
  b = f32[4] broadcast(three), dimensions={}
  q = f32[4] add(p, b)
  c1 = f32[4] call(q), to_apply=twice
  c2 = f32[4] call(q), to_apply=twice
  t = (f32[4], f32[4]) tuple(c1, c2)
  g0 = f32[4] get-tuple-element(t), index=0
  g1 = f32[4] get-tuple-element(t), index=1
  ROOT s = f32[4] add(g0, g1)
}
)");
  std::unique_ptr<hlo::Module> original = module->Clone();
  const compiler::TargetDescription& cpu = targets::CpuDescription();
  for (const char* name : {"call-inliner", "tuple-simplifier", "constant-folding", "cse", "dce"}) {
    std::unique_ptr<compiler::Pass> pass = compiler::MakePass(name, cpu);
    pass->Run(*module);
    hlo::Verify(*module);
  }
  // 1 + 1 folds to the constant 2, which CSE then shares with the inlined `twice`'s constant
  // 2, so one broadcast serves both, and the two inlined multiplies become one:
  // p, three = 2, b = broadcast(three), q = p + b, m = q * b, s = m + m.
  EXPECT_EQ(module->entry()->instructions().size(), 6u) << hlo::PrintModule(*module);
  const hlo::Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(module->computations().size(), 1u);
  std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*original, 7);
  io::CompareResult cmp =
      io::CompareArrays(io::FlattenOutputs(hlo::Evaluate(*original, inputs)),
                        io::FlattenOutputs(hlo::Evaluate(*module, inputs)), nullptr);
  EXPECT_TRUE(cmp.matched) << cmp.summary;
}

}  // namespace

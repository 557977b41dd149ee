// Helpers for the fusion tests: run fusion passes, compare evaluation before/after, and
// inspect the fusions a module ended up with.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/fusion/fusion.h"
#include "compiler/pass_registry.h"
#include "compiler/target_description.h"
#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace fusion_test {

// Scalar max and add reducers, shared by the reduction test modules.
inline constexpr char kReducers[] = R"(
max_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// A softmax over the rows of f32[4,8] (max-reduce, subtract, exp, sum-reduce, divide).
inline std::string Softmax() {
  return std::string("HloModule softmax\n") + kReducers + R"(
ENTRY e {
  x = f32[4,8] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max_r
  mxb = f32[4,8] broadcast(mx), dimensions={0}
  sub = f32[4,8] subtract(x, mxb)
  ex = f32[4,8] exponential(sub)
  zero = f32[] constant(0)
  sum = f32[4] reduce(ex, zero), dimensions={1}, to_apply=add_r
  sumb = f32[4,8] broadcast(sum), dimensions={0}
  ROOT div = f32[4,8] divide(ex, sumb)
}
)";
}

inline const std::vector<std::string>& AllFusionPasses() {
  static const std::vector<std::string> names = {"output-fusion", "input-fusion", "loop-fusion",
                                                 "multi-output-fusion"};
  return names;
}

// Runs the named passes in order, verifying after each; returns whether any changed the module.
inline bool RunPasses(hlo::Module& module, const std::vector<std::string>& passes,
                      const compiler::TargetDescription& target) {
  bool changed = false;
  for (const std::string& name : passes) {
    changed = compiler::MakePass(name, target)->Run(module) || changed;
    hlo::Verify(module);
  }
  return changed;
}

// Evaluates `before` and `after` on the same seeded inputs; expects the same results.
inline void ExpectSameResults(const hlo::Module& before, const hlo::Module& after,
                              uint64_t seed = 7) {
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(before, seed);
  const hlo::Literal expected = hlo::Evaluate(before, inputs);
  const hlo::Literal actual = hlo::Evaluate(after, inputs);
  const io::CompareResult result =
      io::CompareArrays(io::FlattenOutputs(expected), io::FlattenOutputs(actual), nullptr);
  EXPECT_TRUE(result.matched) << result.summary;
}

// Fusion instructions of the entry computation (top level), optionally of one kind.
inline std::vector<const hlo::Instruction*> Fusions(const hlo::Module& module) {
  std::vector<const hlo::Instruction*> out;
  for (const auto& inst : module.entry()->instructions()) {
    if (inst->opcode() == hlo::Opcode::kFusion) out.push_back(inst.get());
  }
  return out;
}

inline hlo::FusionKind KindOf(const hlo::Instruction& fusion) {
  return fusion.attr<hlo::FusionAttrs>().kind;
}

// How many instructions with `op` a fusion's body holds.
inline int CountInBody(const hlo::Instruction& fusion, hlo::Opcode op) {
  int n = 0;
  for (const auto& inst : fusion.called_computations()[0]->instructions()) {
    if (inst->opcode() == op) ++n;
  }
  return n;
}

inline int CountTopLevel(const hlo::Module& module, hlo::Opcode op) {
  int n = 0;
  for (const auto& inst : module.entry()->instructions()) {
    if (inst->opcode() == op) ++n;
  }
  return n;
}

// Parses, fuses with `passes` for `target`, checks verification, evaluation and that the
// printed module parses back; returns the fused module.
inline std::unique_ptr<hlo::Module> FuseAndCheck(const std::string& text,
                                                 const std::vector<std::string>& passes,
                                                 const compiler::TargetDescription& target) {
  auto before = testing_support::ParseAndVerify(text);
  auto after = before->Clone();
  RunPasses(*after, passes, target);
  ExpectSameResults(*before, *after);
  auto reparsed = hlo::ParseHloText(hlo::PrintModule(*after), "fused.hlo");
  hlo::Verify(*reparsed);
  return after;
}

}  // namespace fusion_test

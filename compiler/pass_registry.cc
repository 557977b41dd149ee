#include "compiler/pass_registry.h"

#include "compiler/fusion/fusion.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/async_wrapper_expander.h"
#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/conv_canonicalizer.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/dot_canonicalizer.h"
#include "compiler/passes/dot_expander.h"
#include "compiler/passes/layout_assignment.h"
#include "compiler/passes/tuple_simplifier.h"
#include "compiler/passes/while_loop_invariant_hoisting.h"
#include "hlo/diagnostic.h"

namespace compiler {

const std::vector<PassEntry>& AllPasses() {
  // One row per pass, in the order --list-passes shows them.
  static const std::vector<PassEntry> passes = {
      {"async-wrapper-expander", [](const TargetDescription& t) { return std::make_unique<AsyncWrapperExpander>(t); }},
      {"call-inliner", [](const TargetDescription& t) { return std::make_unique<CallInliner>(t); }},
      {"dce", [](const TargetDescription& t) { return std::make_unique<DeadCodeElimination>(t); }},
      {"cse", [](const TargetDescription& t) { return std::make_unique<CommonSubexpressionElimination>(t); }},
      {"constant-folding", [](const TargetDescription& t) { return std::make_unique<ConstantFolding>(t); }},
      {"tuple-simplifier", [](const TargetDescription& t) { return std::make_unique<TupleSimplifier>(t); }},
      {"while-loop-invariant-hoisting", [](const TargetDescription& t) { return std::make_unique<WhileLoopInvariantHoisting>(t); }},
      {"algebraic-simplifier", [](const TargetDescription& t) { return std::make_unique<AlgebraicSimplifier>(t); }},
      {"dot-canonicalizer", [](const TargetDescription& t) { return std::make_unique<DotCanonicalizer>(t); }},
      {"dot-expander", [](const TargetDescription& t) { return std::make_unique<DotExpander>(t); }},
      {"conv-canonicalizer", [](const TargetDescription& t) { return std::make_unique<ConvCanonicalizer>(t); }},
      {"batch-norm-expander", [](const TargetDescription& t) { return std::make_unique<BatchNormExpander>(t); }},
      {"output-fusion", [](const TargetDescription& t) { return std::make_unique<OutputFusion>(t); }},
      {"input-fusion", [](const TargetDescription& t) { return std::make_unique<InputFusion>(t); }},
      {"loop-fusion", [](const TargetDescription& t) { return std::make_unique<LoopFusion>(t); }},
      {"multi-output-fusion", [](const TargetDescription& t) { return std::make_unique<MultiOutputFusion>(t); }},
      {"layout-assignment", [](const TargetDescription& t) { return std::make_unique<LayoutAssignment>(t); }},
  };
  return passes;
}

std::unique_ptr<Pass> MakePass(const std::string& name, const TargetDescription& target) {
  std::string valid;
  for (const PassEntry& entry : AllPasses()) {
    if (entry.name == name) return entry.make(target);
    valid += (valid.empty() ? "" : ", ") + entry.name;
  }
  throw hlo::Error("unknown pass '" + name + "'; valid passes: " + valid);
}

}  // namespace compiler

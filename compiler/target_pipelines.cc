// The pipeline of each target (target_pipelines.h), assembled by pass NAME from the registry in
// the order of pipeline.h's diagram. Guarantees: the same passes in the same order for every
// target except where the TargetDescription says otherwise (fusion passes only for the fusion
// kinds the target accepts; multi-output fusion only where multi_output_fusion is set).
//
// Every name must be a row of pass_registry.cc: an unknown one is an hlo::Error from MakePass
// (a renamed or removed pass cannot silently drop out of a pipeline). The passes themselves read
// everything else they need from the TargetDescription.
#include "compiler/target_pipelines.h"

#include <string>
#include <vector>

#include "compiler/pass_registry.h"

namespace compiler {
namespace {

std::vector<std::string> PassNamesFor(const TargetDescription& target) {
  std::vector<std::string> names = {
      // Clean-up and canonicalization: one flat computation graph in canonical form.
      "async-wrapper-expander", "call-inliner", "tuple-simplifier", "batch-norm-expander",
      "algebraic-simplifier", "constant-folding", "cse", "dce", "dot-canonicalizer",
      "dot-expander", "conv-canonicalizer",
      "while-loop-invariant-hoisting",
      // A second round: canonicalization and hoisting expose new identities and duplicates.
      "algebraic-simplifier", "cse", "dce"};
  // Fusion, in the order each kind claims its hero: contractions with their epilogues first,
  // then reductions with their producers, then the remaining elementwise chains, then siblings.
  auto accepts = [&](hlo::FusionKind kind) { return target.fusion_kinds.count(kind) != 0; };
  if (accepts(hlo::FusionKind::kOutput)) names.push_back("output-fusion");
  if (accepts(hlo::FusionKind::kInput)) names.push_back("input-fusion");
  if (accepts(hlo::FusionKind::kLoop)) names.push_back("loop-fusion");
  if (!target.fusion_kinds.empty() && target.multi_output_fusion) {
    names.push_back("multi-output-fusion");
  }
  names.insert(names.end(), {"layout-assignment", "dce"});
  return names;
}

}  // namespace

Pipeline MakeTargetPipeline(const TargetDescription& target) {
  Pipeline pipeline(target.name);
  for (const std::string& name : PassNamesFor(target)) pipeline.Add(MakePass(name, target));
  return pipeline;
}

}  // namespace compiler

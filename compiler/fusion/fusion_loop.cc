// LoopFusion (fusion.h): producer–consumer fusion of elementwise and data-movement ops into kLoop
// fusions, consumers first, so each fusion grows as far up as the rules allow.
//
// Rules (all from fusion_cost.h): both ends loop-fusible; an expensive producer is never fused
// where its elements would be recomputed (a broadcast, or a fusion whose result is larger than
// the producer); a producer with users outside the fusion is duplicated only when free or paid
// for by the duplication budget; a fusion holds at most target.max_fusion_instructions.
// Loop fusion never enters kInput/kOutput fusions (their producers were chosen by their own
// passes) and never creates a fusion of a single instruction.
#include <algorithm>

#include "compiler/fusion/fusion.h"
#include "compiler/fusion/fusion_builder.h"

namespace compiler {

namespace {

int64_t Elements(const hlo::Shape& shape) {
  return shape.IsArray() ? std::max<int64_t>(shape.ElementCount(), 0) : 0;
}

}  // namespace

bool LoopFusion::Run(hlo::Module& module) {
  if (!target_.fusion_kinds.count(hlo::FusionKind::kLoop)) return false;
  bool changed = false;
  fusion::FusionBuilder builder(module);
  for (hlo::Computation* computation : fusion::FusibleComputations(module)) {
    builder.BeginComputation(*computation);
    fusion::DuplicationBudget budget(*computation, target_);
    std::vector<hlo::Instruction*> snapshot;
    for (const auto& inst : computation->instructions()) snapshot.push_back(inst.get());
    for (auto it = snapshot.rbegin(); it != snapshot.rend(); ++it) {
      hlo::Instruction* root = *it;
      if (builder.IsDead(root) || !fusion::IsLoopFusible(*root)) continue;
      if (root->opcode() == hlo::Opcode::kConstant) continue;
      const int64_t root_elements = Elements(root->shape());
      fusion::ExpansionPolicy policy;
      policy.max_size = target_.max_fusion_instructions;
      policy.placement_target = &target_;
      policy.can_join = [&](const hlo::Instruction& p) {
        if (!fusion::IsLoopFusible(p)) return false;
        // An expensive producer read by a larger result would be recomputed per element.
        return !(fusion::IsExpensive(p) && Elements(p.shape()) < root_elements);
      };
      policy.edge_ok = [](const hlo::Instruction& p, const hlo::Instruction& c, int64_t index) {
        return !(fusion::IsExpensive(p) && fusion::ReusesOperandElements(c, index));
      };
      fusion::FusionGroup group = fusion::ExpandUpward(root, policy, builder, budget);
      if (group.members.size() < 2) continue;
      builder.Fuse(group.members, root, hlo::FusionKind::kLoop);
      changed = true;
    }
    builder.EndComputation();
  }
  return changed;
}

}  // namespace compiler

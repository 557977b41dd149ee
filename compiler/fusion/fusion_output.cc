// OutputFusion (fusion.h): a dot or convolution and the chain of epilogues that consume its
// result become one kOutput fusion, when the target's contraction accepts every epilogue in it.
//
// The chain follows the result downward while the running value has exactly one user (a value
// needed elsewhere cannot disappear into the library call) — or while its users form a GELU
// subgraph that ends in one instruction (fusion_activation.h) — through degenerate reshapes, and
// stops at the first consumer that is not an accepted epilogue (fusion_epilogue.h) or that
// would exceed the size limit. Trailing reshapes after the last epilogue stay outside. Bias and
// scale broadcasts (and their small constants) are fused; being free, they are duplicated when
// shared. No order is imposed among epilogues: a target that needs one lists fewer epilogues.
// The contraction's operands are never fused (libraries read them from memory).
#include "compiler/fusion/fusion.h"
#include "compiler/fusion/fusion_activation.h"
#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_epilogue.h"
#include "compiler/fusion/fusion_placement.h"

namespace compiler {

bool OutputFusion::Run(hlo::Module& module) {
  if (!target_.fusion_kinds.count(hlo::FusionKind::kOutput) ||
      target_.contraction_epilogues.empty()) {
    return false;
  }
  bool changed = false;
  fusion::FusionBuilder builder(module);
  for (hlo::Computation* computation : fusion::FusibleComputations(module)) {
    builder.BeginComputation(*computation);
    std::vector<hlo::Instruction*> snapshot;
    for (const auto& inst : computation->instructions()) snapshot.push_back(inst.get());
    for (hlo::Instruction* contraction : snapshot) {
      const hlo::Opcode op = contraction->opcode();
      if (op != hlo::Opcode::kDot && op != hlo::Opcode::kConvolution) continue;
      std::vector<hlo::Instruction*> members{contraction};
      size_t members_at_last_epilogue = 0;
      hlo::Instruction* last_epilogue = nullptr;
      hlo::Instruction* value = contraction;
      int64_t feature_dim = fusion::ContractionFeatureDim(*contraction);
      auto position = [&](const hlo::Instruction* inst) { return builder.Position(inst); };
      // An epilogue that runs on the host never joins a contraction the device runs (it would
      // drag the MXU work onto the host). The converse is allowed: a contraction that already
      // runs on the host keeps its (cheap) epilogues, so its result crosses the host link once
      // instead of going back to the device for one elementwise pass.
      const bool contraction_on_host =
          fusion::PlacementOf(*contraction, target_) == fusion::Placement::kHost;
      auto epilogue_may_join = [&](const std::vector<hlo::Instruction*>& candidates) {
        if (contraction_on_host) return true;
        for (const hlo::Instruction* candidate : candidates) {
          if (fusion::PlacementOf(*candidate, target_) == fusion::Placement::kHost) return false;
        }
        return true;
      };
      while (value != computation->root() && !value->users().empty()) {
        if (value->users().size() > 1) {
          // Several uses: only a whole activation subgraph (GELU) can follow.
          auto gelu = fusion::MatchGelu(*value, position);
          if (!gelu || !target_.contraction_epilogues.count(Epilogue::kGelu)) break;
          const int64_t size = static_cast<int64_t>(members.size() + gelu->members.size());
          if (size > target_.max_fusion_instructions || !epilogue_may_join(gelu->members)) break;
          members.insert(members.end(), gelu->members.begin(), gelu->members.end());
          value = gelu->exit;
          last_epilogue = value;
          members_at_last_epilogue = members.size();
          continue;
        }
        hlo::Instruction* consumer = value->users()[0];
        int64_t index = 0;
        while (consumer->operand(index) != value) ++index;
        std::string why;
        auto step = fusion::ClassifyEpilogueStep(*value, *consumer, index, feature_dim, &why);
        if (!step) break;
        if (step->epilogue && !target_.contraction_epilogues.count(*step->epilogue)) break;
        const int64_t size = static_cast<int64_t>(members.size() + 1 + step->side_members.size());
        if (size > target_.max_fusion_instructions) break;
        if (!epilogue_may_join({consumer}) || !epilogue_may_join(step->side_members)) break;
        members.push_back(consumer);
        for (hlo::Instruction* side : step->side_members) members.push_back(side);
        value = consumer;
        feature_dim = step->feature_dim;
        if (step->epilogue) {
          last_epilogue = consumer;
          members_at_last_epilogue = members.size();
        }
      }
      if (last_epilogue == nullptr) continue;
      members.resize(members_at_last_epilogue);
      builder.Fuse(members, last_epilogue, hlo::FusionKind::kOutput);
      changed = true;
    }
    builder.EndComputation();
  }
  return changed;
}

}  // namespace compiler

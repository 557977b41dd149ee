// ExplainFusion (fusion.h): the reason each remaining producer–consumer edge is not fused,
// re-derived from the rules the passes apply (fusion_cost.h, fusion_rows.h, fusion_epilogue.h),
// checked in the order the pipeline runs them: never-fusible ends, ends on different sides of
// the host/device boundary (fusion_placement.h), contractions (output
// fusion), reductions (input fusion), then loop fusion's size and duplication bounds.
#include <functional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "compiler/fusion/fusion.h"
#include "compiler/fusion/fusion_activation.h"
#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_cost.h"
#include "compiler/fusion/fusion_epilogue.h"
#include "compiler/fusion/fusion_placement.h"

namespace compiler {
namespace {

using hlo::FusionKind;
using hlo::Instruction;
using hlo::Opcode;
using Positions = std::function<int64_t(const Instruction*)>;

// "exponential", or "fusion (kLoop)" for a fusion, so a reason names what kind of kernel it is.
std::string Op(const Instruction& inst) {
  std::string op(hlo::OpcodeName(inst.opcode()));
  if (inst.opcode() == Opcode::kFusion && inst.has_attr<hlo::FusionAttrs>()) {
    op += " (" + std::string(hlo::FusionKindName(inst.attr<hlo::FusionAttrs>().kind)) + ")";
  }
  return op;
}

bool IsFusionOfKind(const Instruction& inst, FusionKind kind) {
  return inst.opcode() == Opcode::kFusion && inst.has_attr<hlo::FusionAttrs>() &&
         inst.attr<hlo::FusionAttrs>().kind == kind;
}

bool IsContraction(const Instruction& inst) {
  return inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution ||
         IsFusionOfKind(inst, FusionKind::kOutput);
}

bool IsReduction(const Instruction& inst) {
  return inst.opcode() == Opcode::kReduce || IsFusionOfKind(inst, FusionKind::kInput);
}

// Output fusion's view of a contraction (or kOutput fusion) feeding `consumer`.
std::string WhyNotEpilogue(const Instruction& producer, const Instruction& consumer, int64_t index,
                           const TargetDescription& target, const Positions& position) {
  if (!target.fusion_kinds.count(FusionKind::kOutput)) return "target has no kOutput fusion";
  if (producer.users().size() > 1 && fusion::MatchGelu(producer, position)) {
    return target.contraction_epilogues.count(compiler::Epilogue::kGelu)
               ? "fusion size limit " + std::to_string(target.max_fusion_instructions)
               : "target has no kOutput epilogue for gelu";
  }
  if (producer.users().size() > 1) {
    return "contraction result has " + std::to_string(producer.users().size()) +
           " uses; an epilogue must be its only use";
  }
  const Instruction* contraction = &producer;
  if (producer.opcode() == Opcode::kFusion) {
    for (const auto& inner : producer.called_computations()[0]->instructions()) {
      if (inner->opcode() == Opcode::kDot || inner->opcode() == Opcode::kConvolution) {
        contraction = inner.get();
      }
    }
  }
  int64_t feature = fusion::ContractionFeatureDim(*contraction);
  if (contraction->shape().rank() != producer.shape().rank()) feature = -1;
  // A consumer that loop fusion already fused: judge the instruction inside it that reads the
  // contraction's result.
  const Instruction* value = &producer;
  const Instruction* reader = &consumer;
  if (consumer.opcode() == Opcode::kFusion) {
    const Instruction* param = consumer.called_computations()[0]->parameter(index);
    if (param == nullptr) return "consumer fusion does not read the contraction result";
    if (param->users().size() != 1) {
      std::unordered_map<const Instruction*, int64_t> body_index;
      for (const auto& inner : param->parent()->instructions()) {
        body_index.emplace(inner.get(), static_cast<int64_t>(body_index.size()));
      }
      const Positions body_position = [&](const Instruction* i) { return body_index.at(i); };
      if (!fusion::MatchGelu(*param, body_position)) {
        return "consumer fusion reads the contraction result more than once";
      }
      return target.contraction_epilogues.count(compiler::Epilogue::kGelu)
                 ? "fusion size limit " + std::to_string(target.max_fusion_instructions)
                 : "target has no kOutput epilogue for gelu";
    }
    value = param;
    reader = param->users()[0];
    index = 0;
    while (reader->operand(index) != param) ++index;
  }
  std::string why;
  auto step = fusion::ClassifyEpilogueStep(*value, *reader, index, feature, &why);
  if (!step) return why;
  if (!step->epilogue) return "a reshape after the contraction ends the epilogue chain";
  if (!target.contraction_epilogues.count(*step->epilogue)) {
    return "target has no kOutput epilogue for " + std::string(fusion::EpilogueName(*step->epilogue));
  }
  return "fusion size limit " + std::to_string(target.max_fusion_instructions);
}

std::string WhyUnfused(const Instruction& p, const Instruction& c, int64_t index,
                       const TargetDescription& target, const Positions& position) {
  if (target.fusion_kinds.empty()) return "target forms no fusions";
  if (std::string r = fusion::NeverFusibleReason(c); !r.empty()) return "consumer is a " + r;
  if (std::string r = fusion::NeverFusibleReason(p); !r.empty()) return "producer is a " + r;
  // Every pass keeps host-fallback and device ops apart (fusion_placement.h), except that a
  // contraction running on the host keeps its epilogues (fusion_output.cc).
  const bool host_contraction =
      IsContraction(p) && fusion::PlacementOf(p, target) == fusion::Placement::kHost;
  if (std::string r = fusion::PlacementConflict(p, c, target); !r.empty() && !host_contraction) {
    return r;
  }
  if (IsContraction(c)) {
    return "consumer " + Op(c) + " is a contraction; it reads its operands from memory";
  }
  if (IsContraction(p)) return WhyNotEpilogue(p, c, index, target, position);
  const std::string limit = "fusion size limit " + std::to_string(target.max_fusion_instructions);
  const bool too_big =
      fusion::FusedSize(p) + fusion::FusedSize(c) > target.max_fusion_instructions;
  if (IsReduction(p) || IsReduction(c)) {
    if (!target.fusion_kinds.count(FusionKind::kInput)) return "target has no kInput fusion";
    if (too_big) return limit;
    if (IsReduction(c) && p.users().size() > 1 && fusion::Work(p) > 0) {
      return fusion::DuplicationRefusal(p, target);
    }
    return IsReduction(p) ? "consumer " + Op(c) + " is not row-local for the reduction's rows"
                          : "producer " + Op(p) + " is not row-local for the reduction's rows";
  }
  if (!fusion::IsLoopFusible(p)) return "producer " + Op(p) + " is not loop-fusible";
  if (!fusion::IsLoopFusible(c)) return "consumer " + Op(c) + " is not loop-fusible";
  if (!target.fusion_kinds.count(FusionKind::kLoop)) return "target has no kLoop fusion";
  if (too_big) return limit;
  if (fusion::IsExpensive(p) && fusion::ReusesOperandElements(c, index)) {
    return "expensive producer (" + Op(p) + ") would be recomputed for each element of " + Op(c);
  }
  if (p.users().size() > 1) return fusion::DuplicationRefusal(p, target);
  return "not fused by the loop-fusion order";
}

bool IsNoCode(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement: case Opcode::kAfterAll:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<FusionDecision> ExplainFusion(const hlo::Module& module,
                                          const TargetDescription& target) {
  std::vector<FusionDecision> decisions;
  for (const hlo::Computation* computation : fusion::FusibleComputations(module)) {
    std::unordered_map<const Instruction*, int64_t> index_of;
    for (const auto& owned : computation->instructions()) {
      index_of.emplace(owned.get(), static_cast<int64_t>(index_of.size()));
    }
    const Positions position = [&](const Instruction* inst) { return index_of.at(inst); };
    for (const auto& owned : computation->instructions()) {
      const Instruction& consumer = *owned;
      if (IsNoCode(consumer)) continue;
      std::unordered_set<const Instruction*> seen;
      for (int64_t i = 0; i < consumer.operand_count(); ++i) {
        const Instruction& producer = *consumer.operand(i);
        if (IsNoCode(producer) || !seen.insert(&producer).second) continue;
        decisions.push_back({computation->name(), producer.name(), consumer.name(),
                             WhyUnfused(producer, consumer, i, target, position)});
      }
    }
  }
  return decisions;
}

std::string FormatFusionDecisions(const std::vector<FusionDecision>& decisions) {
  std::ostringstream out;
  for (const FusionDecision& d : decisions) {
    out << d.computation << ": " << d.producer << " -> " << d.consumer << ": " << d.reason << "\n";
  }
  return out.str();
}

}  // namespace compiler

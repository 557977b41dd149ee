// The ownership analysis (contract in ownership.h, rules explained in docs/ownership.md).
//
// Guarantees: every instruction of every analyzed computation (the entry and the bodies reached
// through while/conditional/call, each once) yields exactly one OwnershipEntry; the non-trivial
// instructions inside a fusion are counted toward the fusion's owner and nowhere else; the
// analysis reads the target only through TargetDescription and runs in time linear in the
// module (costs of shared computations are memoized by the CostModel).
#include "compiler/ownership.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/cost_model.h"
#include "compiler/memory/buffer_assignment.h"
#include "hlo/custom_call_targets.h"

namespace compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

// Every owner except kNoCode: the keys of instructions_by_owner (all present, zero or not, so
// reports of different targets line up).
constexpr std::array<Owner, 6> kCodeOwners = {
    Owner::kGeneratedKernel, Owner::kLibrary,     Owner::kAcceleratorNative,
    Owner::kHostFallback,    Owner::kUnsupportedCustomCall, Owner::kCollective};

PrimitiveType FirstArrayType(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes) {
      PrimitiveType type = FirstArrayType(element);
      if (type != PrimitiveType::kTuple && type != PrimitiveType::kToken) return type;
    }
  }
  return shape.type;
}

// The element type a target rule is keyed on: the type the op computes in. A dot of bf16
// operands accumulating into f32 is a bf16 dot; a compare computes in its operands' type; a
// select in the type of its data operands (operand 0 is the pred).
PrimitiveType RuleType(const Instruction& inst) {
  if (inst.opcode() == Opcode::kSelect && inst.operand_count() > 1) {
    return FirstArrayType(inst.operand(1)->shape());
  }
  const hlo::OpClass op_class = hlo::OpcodeClass(inst.opcode());
  const PrimitiveType result = FirstArrayType(inst.shape());
  const bool operand_typed = op_class == hlo::OpClass::kContraction ||
                             op_class == hlo::OpClass::kReduction ||
                             inst.opcode() == Opcode::kConvert ||
                             inst.opcode() == Opcode::kBitcastConvert ||
                             result == PrimitiveType::kPred || !inst.shape().IsArray();
  if (operand_typed && inst.operand_count() > 0) return FirstArrayType(inst.operand(0)->shape());
  return result;
}

std::string TypeList(const std::set<PrimitiveType>& types) {
  std::string list;
  for (PrimitiveType type : types) {
    list += (list.empty() ? "" : ", ") + std::string(hlo::PrimitiveTypeName(type));
  }
  return list;
}

// Why an op runs on the host: either the target has no code for the opcode at all, or it has a
// rule that does not cover this element type.
std::string HostFallbackReason(const Instruction& inst, PrimitiveType type,
                               const TargetDescription& target) {
  const std::string op(hlo::OpcodeName(inst.opcode()));
  auto rule = target.op_rules.find(inst.opcode());
  if (rule != target.op_rules.end() && rule->second.handling != OpHandling::kHostFallback &&
      !rule->second.types.empty() && !rule->second.types.count(type)) {
    return target.name + " runs " + op + " only on " + TypeList(rule->second.types) + ", not " +
           std::string(hlo::PrimitiveTypeName(type));
  }
  // The description's reason (host_fallback_details), when it gives one.
  if (auto why = target.host_fallback_details.find(inst.opcode());
      why != target.host_fallback_details.end() && !why->second.empty()) {
    return target.name + " cannot execute " + op + ": " + why->second;
  }
  return target.name + " cannot execute " + op;
}

OwnerInfo FromHandling(OpHandling handling, const std::string& library, const Instruction& inst,
                       PrimitiveType type, const TargetDescription& target) {
  switch (handling) {
    case OpHandling::kGenerated: return {Owner::kGeneratedKernel, "", ""};
    case OpHandling::kLibrary: return {Owner::kLibrary, library, ""};
    case OpHandling::kNative: return {Owner::kAcceleratorNative, "", ""};
    case OpHandling::kHostFallback:
      return {Owner::kHostFallback, "", HostFallbackReason(inst, type, target)};
  }
  return {};  // unreachable: the switch is exhaustive
}

OwnerInfo CustomCallOwner(const Instruction& inst, const TargetDescription& target) {
  const std::string name =
      inst.has_attr<hlo::CustomCallAttrs>() ? inst.attr<hlo::CustomCallAttrs>().target : "";
  // An annotation for a later XLA pass computes nothing: no kernel on any target.
  if (hlo::IsAnnotationCustomCall(name)) return {Owner::kNoCode, "", "annotation " + name};
  auto known = target.custom_calls.find(name);
  if (known == target.custom_calls.end()) return {Owner::kUnsupportedCustomCall, "", name};
  const OpRule& rule = known->second;
  const PrimitiveType type = RuleType(inst);
  const OpHandling handling =
      rule.types.empty() || rule.types.count(type) ? rule.handling : rule.otherwise;
  OwnerInfo info = FromHandling(handling, rule.library, inst, type, target);
  if (info.owner == Owner::kHostFallback) {
    info.detail = "custom-call " + name + " runs on the host of " + target.name;
  }
  return info;
}

// Bytes of a shape's leaves that live in host memory (memory space S(5)).
double HostResidentBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double bytes = 0;
    for (const hlo::Shape& element : shape.tuple_shapes) bytes += HostResidentBytes(element);
    return bytes;
  }
  if (!shape.IsArray() || shape.layout_details.memory_space != hlo::kHostMemorySpace) return 0;
  return ShapeBytes(shape);
}

// Whether JAX placed `inst`'s value in host memory before XLA's offloading passes gave it an
// S(5) layout: annotate_device_placement with _xla_buffer_placement="pinned_host", MoveToHost.
bool PlacedOnHost(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCustomCall || !inst.has_attr<hlo::CustomCallAttrs>()) return false;
  const std::string& target = inst.attr<hlo::CustomCallAttrs>().target;
  if (target == "MoveToHost") return true;
  if (target != "annotate_device_placement") return false;
  const hlo::OpaqueAttribute* frontend = inst.FindOpaqueAttribute("frontend_attributes");
  return frontend != nullptr && frontend->value.find("pinned_host") != std::string::npos;
}

// Host-memory traffic of one instruction: the host-resident value it writes (an S(5) layout, or
// a value placed on the host by annotation), and the S(5) operands it reads. Tuple plumbing
// moves nothing.
double HostMemoryBytes(const Instruction& inst) {
  if (inst.opcode() == Opcode::kTuple || inst.opcode() == Opcode::kGetTupleElement ||
      inst.opcode() == Opcode::kParameter) {
    return 0;
  }
  double bytes = PlacedOnHost(inst) ? ShapeBytes(inst.shape()) : HostResidentBytes(inst.shape());
  for (const Instruction* operand : inst.operands()) bytes += HostResidentBytes(operand->shape());
  return bytes;
}

// The owner of one unfused instruction.
OwnerInfo OpOwner(const Instruction& inst, const TargetDescription& target) {
  if (GeneratesNoCode(inst.opcode())) return {Owner::kNoCode, "", ""};
  if (inst.opcode() == Opcode::kCustomCall) return CustomCallOwner(inst, target);
  if (hlo::OpcodeClass(inst.opcode()) == hlo::OpClass::kCollective &&
      !target.supports_collectives) {
    const bool id = inst.opcode() == Opcode::kPartitionId || inst.opcode() == Opcode::kReplicaId;
    return {Owner::kCollective, "",
            std::string(hlo::OpcodeName(inst.opcode())) +
                (id ? " reads this device's place in the device grid"
                    : " exchanges values between devices (costed over the interconnect)")};
  }
  if (std::optional<PrimitiveType> held = HostElementType(inst, target)) {
    return {Owner::kHostFallback, "",
            std::string(hlo::OpcodeName(inst.opcode())) + " on " +
                std::string(hlo::PrimitiveTypeName(*held)) + ": " +
                target.host_element_types_detail};
  }
  if (target.instruction_in_native_idiom && target.instruction_in_native_idiom(inst)) {
    return {Owner::kAcceleratorNative, "", ""};
  }
  const PrimitiveType type = RuleType(inst);
  std::string library;
  const OpHandling handling = target.HandlingFor(inst.opcode(), type, &library);
  if (handling != OpHandling::kHostFallback && target.instruction_host_reason) {
    if (std::optional<std::string> why = target.instruction_host_reason(inst)) {
      return {Owner::kHostFallback, "",
              target.name + " cannot execute " + std::string(hlo::OpcodeName(inst.opcode())) +
                  ": " + *why};
    }
  }
  return FromHandling(handling, library, inst, type, target);
}

// What a fusion holds: its non-trivial instructions (through nested fusions), each with the
// owner it would have unfused.
struct FusedOp {
  const Instruction* inst;
  OwnerInfo owner;
};

std::vector<FusedOp> FusedOps(const Instruction& fusion, const TargetDescription& target) {
  std::vector<FusedOp> ops;
  std::vector<const hlo::Computation*> pending;
  std::unordered_set<const hlo::Computation*> seen;  // a malformed module may share or loop
  for (const hlo::Computation* c : fusion.called_computations()) {
    if (c != nullptr && seen.insert(c).second) pending.push_back(c);
  }
  while (!pending.empty()) {
    const hlo::Computation* computation = pending.back();
    pending.pop_back();
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kFusion) {
        for (const hlo::Computation* c : inst->called_computations()) {
          if (c != nullptr && seen.insert(c).second) pending.push_back(c);
        }
        continue;  // the nested fusion is a container; its contents are counted
      }
      if (GeneratesNoCode(inst->opcode())) continue;
      ops.push_back({inst.get(), OpOwner(*inst, target)});
    }
  }
  return ops;
}

// The hero: the instruction whose owner runs the whole fused kernel. A contraction (a kOutput
// fusion's dot or convolution) beats a custom-call, which beats a reduction (a kInput fusion's
// reduce), which beats the fusion's root; otherwise the last fused op.
const FusedOp* Hero(const std::vector<FusedOp>& ops, const Instruction& fusion) {
  auto rank = [](const Instruction& inst) {
    if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) return 3;
    if (inst.opcode() == Opcode::kCustomCall) return 2;
    if (hlo::OpcodeClass(inst.opcode()) == hlo::OpClass::kReduction) return 1;
    return 0;
  };
  const FusedOp* hero = nullptr;
  int best = -1;
  for (const FusedOp& op : ops) {
    const int r = rank(*op.inst);
    if (r > best || (r == 0 && best == 0)) {  // among plain ops, the last one
      best = r;
      hero = &op;
    }
  }
  if (best == 0 && !fusion.called_computations().empty() &&
      fusion.called_computations()[0] != nullptr) {
    const Instruction* root = fusion.called_computations()[0]->root();
    for (const FusedOp& op : ops) {
      if (op.inst == root) hero = &op;
    }
  }
  return hero;
}

struct FusionOwnership {
  OwnerInfo info;
  int64_t fused_instructions = 0;
};

FusionOwnership OwnFusion(const Instruction& fusion, const TargetDescription& target) {
  const std::vector<FusedOp> ops = FusedOps(fusion, target);
  FusionOwnership result;
  result.fused_instructions = static_cast<int64_t>(ops.size());
  // A fused kernel cannot run on the device if any part of it cannot: these owners dominate,
  // in this order, and name the fused instruction responsible.
  for (Owner blocking : {Owner::kUnsupportedCustomCall, Owner::kCollective, Owner::kHostFallback}) {
    for (const FusedOp& op : ops) {
      if (op.owner.owner != blocking) continue;
      result.info = op.owner;
      if (blocking == Owner::kHostFallback) {
        result.info.detail = "fused " + op.inst->name() + ": " + op.owner.detail;
      }
      return result;
    }
  }
  // An op the target runs only as a program of its own (unfused_opcodes: the fusion passes
  // never fuse it) cannot run inside a fusion someone else formed: the host runs that fusion.
  for (const FusedOp& op : ops) {
    if (!target.unfused_opcodes.count(op.inst->opcode()) ||
        op.owner.owner != Owner::kAcceleratorNative) {
      continue;
    }
    result.info = {Owner::kHostFallback, "", ""};
    result.info.detail = "fused " + op.inst->name() + ": " + target.name + " runs " +
                         std::string(hlo::OpcodeName(op.inst->opcode())) +
                         " only unfused, as a program of its own";
    return result;
  }
  const std::string kind =
      fusion.has_attr<hlo::FusionAttrs>()
          ? std::string(hlo::FusionKindName(fusion.attr<hlo::FusionAttrs>().kind)) : "fusion";
  const FusedOp* hero = Hero(ops, fusion);
  if (hero == nullptr) {
    // Nothing but parameters, constants and bitcasts inside: a copy kernel of the target's
    // default kind.
    result.info = FromHandling(target.default_handling, "", fusion, RuleType(fusion), target);
    result.info.detail = kind + " fusion without computation";
    return result;
  }
  result.info = hero->owner;
  result.info.detail = kind + " fusion of " + std::to_string(ops.size()) + " around " +
                       hero->inst->name();
  return result;
}

// The entry and every computation reachable from it through control flow, each once, callers
// before callees. Fusion computations and to_apply reducers belong to their caller and are
// not listed.
std::vector<const hlo::Computation*> AnalyzedComputations(const hlo::Module& module) {
  std::vector<const hlo::Computation*> order;
  if (module.entry() == nullptr) return order;
  std::unordered_set<const hlo::Computation*> seen = {module.entry()};
  order.push_back(module.entry());
  for (size_t next = 0; next < order.size(); ++next) {
    for (const auto& inst : order[next]->instructions()) {
      const Opcode op = inst->opcode();
      if (op != Opcode::kWhile && op != Opcode::kConditional && op != Opcode::kCall) continue;
      for (const hlo::Computation* callee : inst->called_computations()) {
        if (callee != nullptr && seen.insert(callee).second) order.push_back(callee);
      }
    }
  }
  return order;
}

bool LaunchesKernel(Owner owner) {
  switch (owner) {
    case Owner::kGeneratedKernel:
    case Owner::kLibrary:
    case Owner::kAcceleratorNative:
      return true;
    case Owner::kNoCode:
    case Owner::kHostFallback:
    case Owner::kUnsupportedCustomCall:
    case Owner::kCollective:
      return false;
  }
  return false;
}

}  // namespace

OwnerInfo InstructionOwner(const hlo::Instruction& inst, const TargetDescription& target) {
  if (inst.opcode() == Opcode::kFusion) return OwnFusion(inst, target).info;
  return OpOwner(inst, target);
}

ModuleStats AnalyzeOwnership(const hlo::Module& module, const TargetDescription& target,
                             const std::map<std::string, std::string>* lowered_on_host) {
  ModuleStats stats;
  stats.target = target.name;
  for (Owner owner : kCodeOwners) {
    stats.instructions_by_owner[std::string(OwnerName(owner))] = 0;
    stats.flops_by_owner[std::string(OwnerName(owner))] = 0;
  }
  CostModel costs;
  int64_t non_trivial = 0, in_multi_op_fusions = 0;
  for (const hlo::Computation* computation : AnalyzedComputations(module)) {
    for (const auto& inst : computation->instructions()) {
      OwnershipEntry entry;
      entry.instruction = inst.get();
      if (inst->opcode() == Opcode::kFusion) {
        FusionOwnership fusion = OwnFusion(*inst, target);
        entry.info = std::move(fusion.info);
        // A fusion of only trivial instructions is still one (copy) kernel.
        entry.fused_instructions = std::max<int64_t>(1, fusion.fused_instructions);
      } else {
        entry.info = OpOwner(*inst, target);
        entry.fused_instructions = entry.info.owner == Owner::kNoCode ? 0 : 1;
      }
      if (lowered_on_host != nullptr && entry.info.owner != Owner::kHostFallback) {
        auto host = lowered_on_host->find(inst->name());
        if (host != lowered_on_host->end()) {
          entry.info = {Owner::kHostFallback, "",
                        "the " + target.name + " lowering runs it on the host: " + host->second};
          entry.fused_instructions = std::max<int64_t>(1, entry.fused_instructions);
        }
      }
      entry.cost = costs.Cost(*inst);
      if (entry.info.owner != Owner::kNoCode) {
        const std::string owner(OwnerName(entry.info.owner));
        stats.instructions_by_owner[owner] += entry.fused_instructions;
        stats.flops_by_owner[owner] += entry.cost.flops;
        non_trivial += entry.fused_instructions;
        if (inst->opcode() == Opcode::kFusion && entry.fused_instructions >= 2) {
          in_multi_op_fusions += entry.fused_instructions;
        }
      }
      if (LaunchesKernel(entry.info.owner)) ++stats.kernel_count;
      stats.total_flops += entry.cost.flops;
      stats.total_transcendentals += entry.cost.transcendentals;
      stats.total_bytes += entry.cost.bytes_read + entry.cost.bytes_written;
      stats.host_memory_bytes += HostMemoryBytes(*inst);
      stats.entries.push_back(std::move(entry));
    }
  }
  if (non_trivial > 0) {
    stats.fusion_coverage =
        static_cast<double>(in_multi_op_fusions) / static_cast<double>(non_trivial);
  }
  // Peak memory of the entry's schedule, from buffer assignment (which needs an entry).
  if (module.entry() != nullptr) {
    stats.peak_buffer_bytes = AssignBuffers(module, target).peak_bytes();
  }
  return stats;
}

}  // namespace compiler

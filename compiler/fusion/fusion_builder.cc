// Fusion groups and their materialization (fusion_builder.h).
//
// Why upward growth cannot create a cycle: a member is added only as an operand of a member, so
// every member is an ancestor of the root. After fusion the group exports only the root's value.
// A cycle would need an outside value that both feeds the fusion and depends on it, i.e. on the
// root — but everything the fusion reads is an operand of an ancestor of the root, which would
// make the root its own ancestor in the original (acyclic) computation. Duplicated members keep
// their original outside the fusion, computed from the original operands, so they add no edge
// into the fusion either.
#include "compiler/fusion/fusion_builder.h"

#include <algorithm>
#include <queue>

#include "compiler/fusion/fusion_placement.h"

namespace compiler::fusion {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

std::vector<Computation*> FusibleComputations(const hlo::Module& module) {
  std::vector<Computation*> order;
  if (module.entry() == nullptr) return order;
  std::unordered_set<const Computation*> seen{module.entry()};
  std::vector<Computation*> stack{module.entry()};
  while (!stack.empty()) {
    Computation* c = stack.back();
    stack.pop_back();
    order.push_back(c);
    for (const auto& inst : c->instructions()) {
      const Opcode op = inst->opcode();
      if (op != Opcode::kWhile && op != Opcode::kConditional && op != Opcode::kCall) continue;
      for (Computation* callee : inst->called_computations()) {
        if (seen.insert(callee).second) stack.push_back(callee);
      }
    }
  }
  std::reverse(order.begin(), order.end());  // callees first
  return order;
}

bool IsMergeableFusion(const Instruction& inst, hlo::FusionKind kind) {
  return inst.opcode() == Opcode::kFusion && inst.has_attr<hlo::FusionAttrs>() &&
         inst.attr<hlo::FusionAttrs>().kind == kind && inst.called_computations().size() == 1;
}

FusionBuilder::FusionBuilder(hlo::Module& module) : module_(module) {
  for (const auto& c : module.computations()) {
    computation_names_.insert(c->name());
    for (const auto& inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) ++callers_[callee];
    }
  }
}

void FusionBuilder::BeginComputation(Computation& computation) {
  computation_ = &computation;
  position_.clear();
  instruction_names_.clear();
  next_instruction_suffix_.clear();
  int64_t i = 0;
  for (const auto& inst : computation.instructions()) {
    position_[inst.get()] = i++;
    instruction_names_.insert(inst->name());
  }
}

int64_t FusionBuilder::Position(const Instruction* inst) const {
  auto it = position_.find(inst);
  return it == position_.end() ? -1 : it->second;
}

namespace {

// `base`, or `base.N` with the smallest free N (per-base counters keep this linear).
std::string UniqueName(const std::string& base, std::unordered_set<std::string>& used,
                       std::unordered_map<std::string, int64_t>& next_suffix) {
  if (used.insert(base).second) return base;
  int64_t& n = next_suffix[base];
  for (;;) {
    std::string candidate = base + "." + std::to_string(++n);
    if (used.insert(candidate).second) return candidate;
  }
}

std::unique_ptr<Instruction> CloneShell(const Instruction& original, std::string name) {
  auto clone = std::make_unique<Instruction>(std::move(name), original.opcode(), original.shape());
  clone->set_attrs(original.attrs());
  clone->mutable_opaque_attributes() = original.opaque_attributes();
  clone->mutable_called_computations() = original.called_computations();
  clone->set_location(original.location());
  return clone;
}

}  // namespace

FusedBodyBuilder::FusedBodyBuilder(const std::unordered_set<const Instruction*>& members)
    : members_(members) {}

void FusedBodyBuilder::AddMember(const Instruction& member) {
  if (member.opcode() == Opcode::kFusion) {
    // Inline: the nested body's parameters stand for the member's (mapped) operands.
    const Computation& body = *member.called_computations()[0];
    std::unordered_map<const Instruction*, Instruction*> local;
    for (const auto& inner : body.instructions()) {
      if (inner->opcode() == Opcode::kParameter) {
        local[inner.get()] = Map(member.operand(inner->attr<hlo::ParameterAttrs>().number));
        continue;
      }
      Instruction* clone = AddClone(*inner);
      for (const Instruction* op : inner->operands()) clone->AppendOperand(local.at(op));
      local[inner.get()] = clone;
    }
    clone_of_[&member] = local.at(body.root());
    return;
  }
  Instruction* clone = AddClone(member);
  for (const Instruction* op : member.operands()) clone->AppendOperand(Map(op));
  clone_of_[&member] = clone;
}

Instruction* FusedBodyBuilder::AddTuple(const std::vector<Instruction*>& elements) {
  std::vector<hlo::Shape> shapes;
  for (const Instruction* e : elements) shapes.push_back(e->shape());
  body_.push_back(std::make_unique<Instruction>(Unique("tuple"), Opcode::kTuple,
                                                hlo::Shape::Tuple(std::move(shapes))));
  Instruction* tuple = body_.back().get();
  for (Instruction* e : elements) tuple->AppendOperand(e);
  return tuple;
}

std::unique_ptr<Computation> FusedBodyBuilder::Finish(std::string name, Instruction* root) {
  auto computation = std::make_unique<Computation>(std::move(name));
  for (auto& p : params_) computation->AddInstruction(std::move(p));
  for (auto& b : body_) {
    // The tuple root of an inlined multi-output fusion is replaced by the merged tuple.
    if (b->opcode() == Opcode::kTuple && b->users().empty() && b.get() != root) {
      b->ClearOperands();
      continue;
    }
    computation->AddInstruction(std::move(b));
  }
  computation->set_root(root);
  return computation;
}

Instruction* FusedBodyBuilder::Map(const Instruction* operand) {
  if (members_.count(operand)) return clone_of_.at(operand);
  auto it = param_of_.find(operand);
  if (it != param_of_.end()) return it->second;
  const int64_t number = static_cast<int64_t>(params_.size());
  auto param = std::make_unique<Instruction>(Unique("param_" + std::to_string(number)),
                                             Opcode::kParameter, operand->shape());
  param->set_attrs(hlo::ParameterAttrs{number});
  Instruction* raw = param.get();
  params_.push_back(std::move(param));
  outside_.push_back(const_cast<Instruction*>(operand));
  param_of_[operand] = raw;
  return raw;
}

Instruction* FusedBodyBuilder::AddClone(const Instruction& original) {
  body_.push_back(CloneShell(original, Unique(original.name())));
  return body_.back().get();
}

std::string FusedBodyBuilder::Unique(const std::string& base) {
  return UniqueName(base, names_, suffixes_);
}

std::string FusionBuilder::UniqueInstructionName(const std::string& base) {
  return UniqueName(base, instruction_names_, next_instruction_suffix_);
}

std::string FusionBuilder::UniqueComputationName(const std::string& base) {
  return UniqueName(base, computation_names_, next_computation_suffix_);
}

void FusionBuilder::ReleaseFusionComputation(const Instruction& fusion) {
  for (const Computation* callee : fusion.called_computations()) {
    if (--callers_[callee] == 0) dead_computations_.push_back(const_cast<Computation*>(callee));
  }
}

Instruction* FusionBuilder::Fuse(const std::vector<Instruction*>& members, Instruction* root,
                                 hlo::FusionKind kind) {
  const std::unordered_set<const Instruction*> member_set(members.begin(), members.end());
  std::vector<Instruction*> ordered;
  for (const Instruction* m : member_set) ordered.push_back(const_cast<Instruction*>(m));
  std::sort(ordered.begin(), ordered.end(), [&](const Instruction* a, const Instruction* b) {
    return Position(a) < Position(b);
  });
  FusedBodyBuilder body(member_set);
  for (const Instruction* m : ordered) body.AddMember(*m);

  Computation* callee =
      AddFusedComputation(
      body.Finish(UniqueComputationName("fused_computation"), body.CloneOf(root)));

  auto fusion = std::make_unique<Instruction>(UniqueInstructionName("fusion"), Opcode::kFusion,
                                              root->shape());
  fusion->set_attrs(hlo::FusionAttrs{kind});
  fusion->mutable_called_computations().push_back(callee);
  fusion->set_location(root->location());
  for (Instruction* operand : body.outside_operands()) fusion->AppendOperand(operand);
  Instruction* raw = computation_->AddInstruction(std::move(fusion));
  position_[raw] = Position(root);

  root->ReplaceAllUsesWith(raw);
  if (computation_->root() == root) computation_->set_root(raw);
  // Detach members that nothing outside uses any more, users first so that a member used only
  // by other dead members is seen without users.
  for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
    Instruction* m = *it;
    // Still used (duplicated into the fusion) or the computation's result: the original stays.
    if (!m->users().empty() || m == computation_->root()) continue;
    Discard(m);
  }
  return raw;
}

Computation* FusionBuilder::AddFusedComputation(std::unique_ptr<Computation> computation) {
  Computation* callee = module_.AddComputationBefore(std::move(computation), computation_);
  callers_[callee] = 1;
  edited_ = true;
  return callee;
}

void FusionBuilder::SetPosition(const Instruction* instruction, int64_t position) {
  position_[instruction] = position;
}

void FusionBuilder::Discard(Instruction* instruction) {
  if (!dead_set_.insert(instruction).second) return;
  instruction->ClearOperands();
  dead_.push_back(instruction);
  edited_ = true;
  if (instruction->opcode() == Opcode::kFusion) ReleaseFusionComputation(*instruction);
}

void FusionBuilder::EndComputation() {
  for (Instruction* dead : dead_) computation_->RemoveInstruction(dead);
  dead_.clear();
  dead_set_.clear();
  for (Computation* c : dead_computations_) module_.RemoveComputation(c);
  dead_computations_.clear();
  if (edited_) computation_->SortTopologically();
  edited_ = false;
  computation_ = nullptr;
}

FusionGroup ExpandUpward(Instruction* root, const ExpansionPolicy& policy,
                         const FusionBuilder& builder, DuplicationBudget& budget) {
  FusionGroup group;
  group.members.push_back(root);
  group.member_set.insert(root);
  group.size = FusedSize(*root);
  // Members whose original disappears with the fusion (the root is replaced by it).
  std::unordered_set<const Instruction*> exclusive{root};
  auto by_position = [&](const Instruction* a, const Instruction* b) {
    return builder.Position(a) < builder.Position(b);
  };
  std::priority_queue<Instruction*, std::vector<Instruction*>, decltype(by_position)> frontier(
      by_position);
  std::unordered_set<const Instruction*> queued;
  auto push_operands = [&](const Instruction* member) {
    for (Instruction* op : member->operands()) {
      if (queued.insert(op).second) frontier.push(op);
    }
  };
  push_operands(root);
  const TargetDescription* placement_target = policy.placement_target;
  Placement side =
      placement_target != nullptr ? PlacementOf(*root, *placement_target) : Placement::kEither;
  while (!frontier.empty()) {
    Instruction* p = frontier.top();
    frontier.pop();
    if (!policy.can_join(*p)) continue;
    const Placement p_side =
        placement_target != nullptr ? PlacementOf(*p, *placement_target) : Placement::kEither;
    if (!Compatible(side, p_side)) continue;
    if (group.size + FusedSize(*p) > policy.max_size) continue;
    // The computation's root must survive even when all its users end up in the group.
    bool only_exclusive_users = p->parent() == nullptr || p->parent()->root() != p;
    bool edges_ok = true;
    for (const Instruction* user : p->users()) {
      if (!group.member_set.count(user)) {
        only_exclusive_users = false;
        continue;
      }
      if (!exclusive.count(user)) only_exclusive_users = false;
      for (int64_t i = 0; i < user->operand_count() && edges_ok; ++i) {
        if (user->operand(i) == p) edges_ok = policy.edge_ok(*p, *user, i);
      }
    }
    if (!edges_ok) continue;
    if (!only_exclusive_users) {
      const double cost = Work(*p);
      if (!budget.TryCharge(*p)) continue;
      group.charged_work += cost;
    } else {
      exclusive.insert(p);
    }
    side = Combine(side, p_side);
    group.members.push_back(p);
    group.member_set.insert(p);
    group.size += FusedSize(*p);
    push_operands(p);
  }
  return group;
}

}  // namespace compiler::fusion

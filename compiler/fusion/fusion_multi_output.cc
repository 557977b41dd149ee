// MultiOutputFusion (fusion.h): sibling kLoop/kInput fusions that read the same operand become
// one fusion with a tuple root, so the shared operand is read once.
//
// Two siblings A (earlier) and B merge when: they iterate over the same shape (kLoop: the
// result; kInput: the reduce input), the merged size stays within the limit, B does not depend
// on A (a bounded upward search; when the search runs out of budget we assume it does), and
// every user of A comes after B, so the merged fusion can take B's place in the order without
// breaking anyone. Users are rewired to get-tuple-element of the merged fusion (users of an
// already multi-output sibling keep their get-tuple-element, re-indexed). The merged kind is
// kInput if either sibling is kInput. Scalars and single-element operands are not worth
// sharing and do not make siblings.
#include <algorithm>
#include <limits>
#include <unordered_set>

#include "compiler/fusion/fusion.h"
#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_placement.h"

namespace compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kReachabilitySearchBudget = 4096;

bool IsSibling(const Instruction& inst, const TargetDescription& target) {
  for (hlo::FusionKind kind : {hlo::FusionKind::kLoop, hlo::FusionKind::kInput}) {
    if (target.fusion_kinds.count(kind) && fusion::IsMergeableFusion(inst, kind)) return true;
  }
  return false;
}

bool HasTupleRoot(const Instruction& fusion) { return fusion.shape().IsTuple(); }

// The shape a fusion's kernel iterates over.
std::vector<int64_t> IterationShape(const Instruction& fusion) {
  const hlo::Computation& body = *fusion.called_computations()[0];
  if (fusion.attr<hlo::FusionAttrs>().kind == hlo::FusionKind::kInput) {
    for (const auto& inst : body.instructions()) {
      if (inst->opcode() == Opcode::kReduce) return inst->operand(0)->shape().dims;
    }
  }
  const hlo::Shape& shape = fusion.shape();
  if (shape.IsTuple()) return shape.tuple_shapes.empty() ? std::vector<int64_t>{} :
                                                           shape.tuple_shapes[0].dims;
  return shape.dims;
}

// Users of a multi-output fusion must all be get-tuple-elements (we re-index them).
bool UsersAreRewirable(const Instruction& fusion) {
  if (!HasTupleRoot(fusion)) return true;
  for (const Instruction* user : fusion.users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return false;
  }
  return true;
}

int64_t FirstUserPosition(const Instruction& fusion, const fusion::FusionBuilder& builder) {
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const Instruction* user : fusion.users()) {
    if (HasTupleRoot(fusion)) {
      for (const Instruction* u : user->users()) first = std::min(first, builder.Position(u));
    } else {
      first = std::min(first, builder.Position(user));
    }
  }
  return first;
}

// Whether `later` may depend on `earlier` (true when the bounded search gives up).
bool MayDependOn(const Instruction& later, const Instruction& earlier,
                 const fusion::FusionBuilder& builder) {
  const int64_t floor = builder.Position(&earlier);
  std::vector<const Instruction*> stack(later.operands().begin(), later.operands().end());
  std::unordered_set<const Instruction*> seen;
  int64_t budget = kReachabilitySearchBudget;
  while (!stack.empty()) {
    const Instruction* n = stack.back();
    stack.pop_back();
    if (n == &earlier) return true;
    if (builder.Position(n) < floor || !seen.insert(n).second) continue;
    if (--budget < 0) return true;
    for (const Instruction* op : n->operands()) stack.push_back(op);
  }
  return false;
}

// Builds the merged fusion of `a` and `b`, rewires their users and discards them.
Instruction* Merge(Instruction* a, Instruction* b, fusion::FusionBuilder& builder) {
  const std::unordered_set<const Instruction*> members{a, b};
  fusion::FusedBodyBuilder body(members);
  std::vector<Instruction*> outputs;
  for (Instruction* f : {a, b}) {
    body.AddMember(*f);
    Instruction* root = body.CloneOf(f);
    if (HasTupleRoot(*f)) {
      for (Instruction* element : root->operands()) outputs.push_back(element);
    } else {
      outputs.push_back(root);
    }
  }
  Instruction* tuple = body.AddTuple(outputs);
  hlo::Computation* callee = builder.AddFusedComputation(
      body.Finish(builder.UniqueComputationName("fused_computation"), tuple));
  const bool input = a->attr<hlo::FusionAttrs>().kind == hlo::FusionKind::kInput ||
                     b->attr<hlo::FusionAttrs>().kind == hlo::FusionKind::kInput;
  auto merged = std::make_unique<Instruction>(builder.UniqueInstructionName("fusion"),
                                              Opcode::kFusion, tuple->shape());
  merged->set_attrs(hlo::FusionAttrs{input ? hlo::FusionKind::kInput : hlo::FusionKind::kLoop});
  merged->mutable_called_computations().push_back(callee);
  merged->set_location(b->location());
  for (Instruction* operand : body.outside_operands()) merged->AppendOperand(operand);
  hlo::Computation& computation = builder.computation();
  Instruction* m = computation.AddInstruction(std::move(merged));
  const int64_t position = builder.Position(b);
  builder.SetPosition(m, position);

  int64_t offset = 0;
  for (Instruction* f : {a, b}) {
    const int64_t outputs_of_f =
        HasTupleRoot(*f) ? static_cast<int64_t>(f->shape().tuple_shapes.size()) : 1;
    if (HasTupleRoot(*f)) {
      const std::vector<Instruction*> users = f->users();
      for (Instruction* gte : users) {
        gte->mutable_attr<hlo::TupleIndexAttrs>().index += offset;
        for (int64_t i = 0; i < gte->operand_count(); ++i) {
          if (gte->operand(i) == f) gte->SetOperand(i, m);
        }
      }
    } else {
      auto gte = std::make_unique<Instruction>(builder.UniqueInstructionName("get-tuple-element"),
                                               Opcode::kGetTupleElement, f->shape());
      gte->set_attrs(hlo::TupleIndexAttrs{offset});
      gte->AppendOperand(m);
      Instruction* g = computation.AddInstruction(std::move(gte));
      builder.SetPosition(g, position);
      f->ReplaceAllUsesWith(g);  // g reads m, not f, so it is not among f's users
      if (computation.root() == f) computation.set_root(g);
    }
    offset += outputs_of_f;
    builder.Discard(f);
  }
  return m;
}

}  // namespace

bool MultiOutputFusion::Run(hlo::Module& module) {
  if (!target_.multi_output_fusion) return false;
  bool changed = false;
  fusion::FusionBuilder builder(module);
  for (hlo::Computation* computation : fusion::FusibleComputations(module)) {
    builder.BeginComputation(*computation);
    std::vector<Instruction*> snapshot;
    for (const auto& inst : computation->instructions()) snapshot.push_back(inst.get());
    for (Instruction* shared : snapshot) {
      if (builder.IsDead(shared) || !shared->shape().IsArray() ||
          shared->shape().ElementCount() <= 1) {
        continue;
      }
      std::vector<Instruction*> siblings;
      std::unordered_set<const Instruction*> seen;
      for (Instruction* user : shared->users()) {
        if (seen.insert(user).second && IsSibling(*user, target_) && UsersAreRewirable(*user)) {
          siblings.push_back(user);
        }
      }
      if (siblings.size() < 2) continue;
      std::sort(siblings.begin(), siblings.end(), [&](const Instruction* x, const Instruction* y) {
        return builder.Position(x) < builder.Position(y);
      });
      Instruction* merged = siblings[0];
      for (size_t k = 1; k < siblings.size(); ++k) {
        Instruction* next = siblings[k];
        if (IterationShape(*merged) != IterationShape(*next)) continue;
        if (fusion::FusedSize(*merged) + fusion::FusedSize(*next) + 1 >
            target_.max_fusion_instructions) {
          continue;
        }
        if (FirstUserPosition(*merged, builder) <= builder.Position(next)) continue;
        if (MayDependOn(*next, *merged, builder)) continue;
        // A host-fallback fusion and a device fusion stay separate kernels.
        if (!fusion::Compatible(fusion::PlacementOf(*merged, target_),
                                fusion::PlacementOf(*next, target_))) {
          continue;
        }
        merged = Merge(merged, next, builder);
        changed = true;
      }
    }
    builder.EndComputation();
  }
  return changed;
}

}  // namespace compiler

// Helpers shared by the basic passes; see basic_pass_util.h for what each guarantees.
#include "compiler/passes/basic_pass_util.h"

#include <utility>

#include "hlo/opcodes.h"

namespace compiler::basic {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;

bool HasDirectSideEffect(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kCustomCall:
      return instruction.has_attr<hlo::CustomCallAttrs>() &&
             instruction.attr<hlo::CustomCallAttrs>().has_side_effect;
    // Random numbers: two executions give different values, so they are neither dead nor
    // duplicates of each other. rng-bit-generator is a pure function of its state operand in
    // principle, but models thread the state through it; keeping it is the safe choice.
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kAfterAll:
      return true;
    default:
      // Collectives communicate with other devices: removing or merging one changes what the
      // other participants observe.
      return hlo::OpcodeClass(instruction.opcode()) == hlo::OpClass::kCollective;
  }
}

SideEffects::SideEffects(const Module& module) {
  for (const Computation* computation : ReachableComputationsCalleesFirst(module)) {
    bool pure = true;
    for (const auto& inst : computation->instructions()) {
      if (Has(*inst)) {
        pure = false;
        break;
      }
    }
    if (pure) pure_.insert(computation);
  }
}

bool SideEffects::Has(const Instruction& instruction) const {
  if (HasDirectSideEffect(instruction)) return true;
  for (const Computation* callee : instruction.called_computations()) {
    if (!pure_.contains(callee)) return true;
  }
  return false;
}

std::vector<Computation*> ReachableComputationsCalleesFirst(const Module& module) {
  std::vector<Computation*> order;
  if (module.entry() == nullptr) return order;
  std::unordered_set<const Computation*> seen{module.entry()};
  // Iterative DFS; a frame walks the callees of one computation.
  struct Frame {
    Computation* computation;
    size_t instruction = 0, callee = 0;
  };
  std::vector<Frame> stack{{module.entry()}};
  while (!stack.empty()) {
    Frame& frame = stack.back();
    const auto& insts = frame.computation->instructions();
    if (frame.instruction == insts.size()) {
      order.push_back(frame.computation);
      stack.pop_back();
      continue;
    }
    const auto& callees = insts[frame.instruction]->called_computations();
    if (frame.callee == callees.size()) {
      ++frame.instruction;
      frame.callee = 0;
      continue;
    }
    Computation* callee = callees[frame.callee++];
    if (callee != nullptr && seen.insert(callee).second) stack.push_back({callee});
  }
  return order;
}

bool RemoveUnreachableComputations(Module& module) {
  if (module.entry() == nullptr) return false;
  std::vector<Computation*> reachable_list = ReachableComputationsCalleesFirst(module);
  std::unordered_set<const Computation*> reachable(reachable_list.begin(), reachable_list.end());
  std::vector<Computation*> unreachable;
  for (const auto& c : module.computations()) {
    if (!reachable.contains(c.get())) unreachable.push_back(c.get());
  }
  for (Computation* c : unreachable) module.RemoveComputation(c);
  return !unreachable.empty();
}

std::unordered_map<const Computation*, int64_t> CallSiteCounts(const Module& module) {
  std::unordered_map<const Computation*, int64_t> counts;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) ++counts[callee];
    }
  }
  return counts;
}

NameUniquer::NameUniquer(const Computation& computation) {
  used_.reserve(computation.instructions().size() * 2);
  for (const auto& inst : computation.instructions()) used_.insert(inst->name());
}

std::string NameUniquer::Unique(const std::string& base) {
  if (used_.insert(base).second) return base;
  // Resume numbering where the last collision for this base stopped, so many clones of one
  // name cost linear time in total.
  int64_t& next = next_suffix_[base];
  for (;;) {
    std::string candidate = base + "." + std::to_string(++next);
    if (used_.insert(candidate).second) return candidate;
  }
}

std::unique_ptr<Instruction> CloneInstruction(const Instruction& original, std::string name,
                                              const std::vector<Instruction*>& operands) {
  auto clone = std::make_unique<Instruction>(std::move(name), original.opcode(), original.shape());
  clone->set_attrs(original.attrs());
  clone->mutable_opaque_attributes() = original.opaque_attributes();
  clone->mutable_called_computations() = original.called_computations();
  clone->set_location(original.location());
  for (Instruction* operand : operands) clone->AppendOperand(operand);
  return clone;
}

std::unique_ptr<Instruction> MakeGetTupleElement(Instruction* tuple, int64_t index,
                                                 std::string name) {
  auto gte = std::make_unique<Instruction>(std::move(name), Opcode::kGetTupleElement,
                                           tuple->shape().tuple_shapes[static_cast<size_t>(index)]);
  gte->set_attrs(hlo::TupleIndexAttrs{index});
  gte->set_location(tuple->location());
  gte->AppendOperand(tuple);
  return gte;
}

std::unique_ptr<Instruction> MakeTuple(const std::vector<Instruction*>& elements,
                                       std::string name) {
  std::vector<hlo::Shape> shapes;
  shapes.reserve(elements.size());
  for (const Instruction* e : elements) shapes.push_back(e->shape());
  auto tuple = std::make_unique<Instruction>(std::move(name), Opcode::kTuple,
                                             hlo::Shape::Tuple(std::move(shapes)));
  if (!elements.empty()) tuple->set_location(elements.front()->location());
  for (Instruction* e : elements) tuple->AppendOperand(e);
  return tuple;
}

void RemoveInstructions(Computation& computation, const std::unordered_set<Instruction*>& dead) {
  if (dead.empty()) return;
  // Detach every doomed instruction from its operands first: then the removal order does not
  // matter (the list need not be topologically sorted) and no removed instruction is ever
  // touched again through a user's operand list.
  std::vector<Instruction*> doomed;
  doomed.reserve(dead.size());
  for (const auto& inst : computation.instructions()) {
    if (dead.contains(inst.get())) doomed.push_back(inst.get());
  }
  for (Instruction* inst : doomed) inst->ClearOperands();
  for (Instruction* inst : doomed) computation.RemoveInstruction(inst);
}

}  // namespace compiler::basic

// dce: see dce.h. Mark-and-sweep per computation: the roots of liveness are the computation's
// root, its parameters and its side-effecting instructions; liveness flows to operands.
#include "compiler/passes/dce.h"

#include <unordered_set>
#include <vector>

#include "compiler/passes/basic_pass_util.h"

namespace compiler {
namespace {

using hlo::Computation;
using hlo::Instruction;

bool SweepComputation(Computation& computation, const basic::SideEffects& side_effects) {
  std::unordered_set<const Instruction*> live;
  live.reserve(computation.instructions().size() * 2);
  std::vector<const Instruction*> worklist;
  auto mark = [&](const Instruction* inst) {
    if (inst != nullptr && live.insert(inst).second) worklist.push_back(inst);
  };
  mark(computation.root());
  for (const auto& inst : computation.instructions()) {
    if (inst->opcode() == hlo::Opcode::kParameter || side_effects.Has(*inst)) mark(inst.get());
  }
  while (!worklist.empty()) {
    const Instruction* inst = worklist.back();
    worklist.pop_back();
    for (const Instruction* operand : inst->operands()) mark(operand);
  }
  std::unordered_set<Instruction*> dead;
  for (const auto& inst : computation.instructions()) {
    if (!live.contains(inst.get())) dead.insert(inst.get());
  }
  basic::RemoveInstructions(computation, dead);
  return !dead.empty();
}

}  // namespace

bool DeadCodeElimination::Run(hlo::Module& module) {
  const basic::SideEffects side_effects(module);
  bool changed = false;
  for (Computation* computation : basic::ReachableComputationsCalleesFirst(module)) {
    changed |= SweepComputation(*computation, side_effects);
  }
  changed |= basic::RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace compiler

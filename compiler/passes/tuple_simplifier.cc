// tuple-simplifier: see tuple_simplifier.h.
#include "compiler/passes/tuple_simplifier.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/passes/basic_pass_util.h"

namespace compiler {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

int64_t TupleIndex(const Instruction& gte) { return gte.attr<hlo::TupleIndexAttrs>().index; }

// The value `inst` can be replaced by, or nullptr.
Instruction* Simplified(const Instruction& inst) {
  if (inst.opcode() == Opcode::kGetTupleElement) {
    // gte(tuple(a0, ..., an), i) -> ai
    Instruction* tuple = inst.operand(0);
    const int64_t index = TupleIndex(inst);
    if (tuple->opcode() != Opcode::kTuple || index < 0 || index >= tuple->operand_count()) {
      return nullptr;
    }
    Instruction* element = tuple->operand(index);
    return element->shape().Equal(inst.shape()) ? element : nullptr;
  }
  if (inst.opcode() == Opcode::kTuple && inst.operand_count() > 0) {
    // tuple(gte(x, 0), ..., gte(x, n-1)) -> x
    const Instruction* first = inst.operand(0);
    if (first->opcode() != Opcode::kGetTupleElement) return nullptr;
    Instruction* source = first->operand(0);
    if (!source->shape().IsTuple() ||
        static_cast<int64_t>(source->shape().tuple_shapes.size()) != inst.operand_count()) {
      return nullptr;
    }
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const Instruction* element = inst.operand(i);
      if (element->opcode() != Opcode::kGetTupleElement || element->operand(0) != source ||
          TupleIndex(*element) != i) {
        return nullptr;
      }
    }
    return source->shape().Equal(inst.shape()) ? source : nullptr;
  }
  return nullptr;
}

bool IsTupleOp(const Instruction& inst) {
  return inst.opcode() == Opcode::kTuple || inst.opcode() == Opcode::kGetTupleElement;
}

bool SimplifyComputation(Computation& computation) {
  std::vector<Instruction*> rewritten;
  for (const auto& inst : computation.instructions()) {
    Instruction* replacement = Simplified(*inst);
    if (replacement == nullptr) continue;
    inst->ReplaceAllUsesWith(replacement);
    rewritten.push_back(inst.get());
  }
  if (rewritten.empty()) return false;
  // Remove what the rewrite made unused: the rewritten instructions and, transitively, tuple /
  // gte operands left without users. Only those two opcodes: other dead code is dce's business.
  // live_uses counts the uses of a candidate by instructions not (yet) known dead.
  std::unordered_set<Instruction*> dead;
  std::unordered_map<Instruction*, int64_t> live_uses;
  auto uses_left = [&](Instruction* inst) -> int64_t& {
    return live_uses.try_emplace(inst, static_cast<int64_t>(inst->users().size())).first->second;
  };
  std::vector<Instruction*> worklist = rewritten;
  while (!worklist.empty()) {
    Instruction* inst = worklist.back();
    worklist.pop_back();
    if (computation.root() == inst || !IsTupleOp(*inst) || uses_left(inst) != 0 ||
        !dead.insert(inst).second) {
      continue;
    }
    for (Instruction* operand : inst->operands()) {
      if (--uses_left(operand) == 0) worklist.push_back(operand);
    }
  }
  basic::RemoveInstructions(computation, dead);
  return true;
}

}  // namespace

bool TupleSimplifier::Run(hlo::Module& module) {
  bool changed = false;
  for (Computation* computation : basic::ReachableComputationsCalleesFirst(module)) {
    changed |= SimplifyComputation(*computation);
  }
  return changed;
}

}  // namespace compiler

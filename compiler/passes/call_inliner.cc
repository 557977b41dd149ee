// call-inliner: see call_inliner.h for the post-condition.
//
// Computations are processed callees first, so when a call is inlined its callee is already
// call-free: each inlining copies exactly the callee's instructions, and the total work is the
// size of the result, checked against kMaxInlinedInstructions before anything is copied.
#include "compiler/passes/call_inliner.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/passes/basic_pass_util.h"
#include "hlo/diagnostic.h"

namespace compiler {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

// Copies `callee` into the computation of `call` and makes the call's users use the copy of
// the callee's root. The call itself is left without users, for the caller to remove.
void InlineOne(Instruction& call, const Computation& callee, basic::NameUniquer& names) {
  Computation& caller = *call.parent();
  std::unordered_map<const Instruction*, Instruction*> copy_of;
  copy_of.reserve(callee.instructions().size());
  std::vector<Instruction*> operands;
  for (const auto& owned : callee.instructions()) {
    const Instruction& inst = *owned;
    if (inst.opcode() == Opcode::kParameter) {
      const int64_t number = inst.attr<hlo::ParameterAttrs>().number;
      if (number < 0 || number >= call.operand_count()) {
        throw hlo::Error(call.location(), "call '" + call.name() + "' passes " +
                                              std::to_string(call.operand_count()) +
                                              " operand(s) but '" + callee.name() +
                                              "' reads parameter " + std::to_string(number));
      }
      copy_of[&inst] = call.operand(number);
      continue;
    }
    operands.clear();
    for (const Instruction* operand : inst.operands()) {
      auto it = copy_of.find(operand);
      if (it == copy_of.end()) {
        throw hlo::Error(inst.location(),
                         "instruction '" + inst.name() + "' uses an operand defined after it");
      }
      operands.push_back(it->second);
    }
    copy_of[&inst] =
        caller.AddInstruction(basic::CloneInstruction(inst, names.Unique(inst.name()), operands));
  }
  auto root = copy_of.find(callee.root());
  if (root == copy_of.end()) {
    throw hlo::Error(callee.location(), "computation '" + callee.name() + "' has no root");
  }
  call.ReplaceAllUsesWith(root->second);
}

bool IsInlinableCall(const Instruction& inst) {
  return inst.opcode() == Opcode::kCall && inst.called_computations().size() == 1;
}

// Refuses, before any work, a call graph whose inlining would exceed the size bound: the
// flattened size of a computation is its own size plus the flattened sizes of its callees
// (saturating), and the sum over the computations that get copies into them is what is built.
void CheckInlinedSize(const std::vector<Computation*>& callees_first) {
  constexpr int64_t kLimit = CallInliner::kMaxInlinedInstructions;
  std::unordered_map<const Computation*, int64_t> flattened;
  int64_t built = 0;
  for (const Computation* computation : callees_first) {
    int64_t size = static_cast<int64_t>(computation->instructions().size());
    bool has_calls = false;
    for (const auto& inst : computation->instructions()) {
      if (!IsInlinableCall(*inst)) continue;
      has_calls = true;
      size += flattened[inst->called_computations()[0]];
      if (size > kLimit || (built + size) > kLimit) {
        throw hlo::Error(inst->location(), "inlining call '" + inst->name() +
                                               "' would grow the module past " +
                                               std::to_string(kLimit) + " instructions");
      }
    }
    flattened[computation] = size;
    if (has_calls) built += size;
  }
}

// Inlines every call in `computation`; returns whether there was one.
bool InlineCallsIn(Computation& computation) {
  std::vector<Instruction*> calls;
  for (const auto& inst : computation.instructions()) {
    if (IsInlinableCall(*inst)) calls.push_back(inst.get());
  }
  if (calls.empty()) return false;
  basic::NameUniquer names(computation);
  std::unordered_set<Instruction*> inlined;
  for (Instruction* call : calls) {
    InlineOne(*call, *call->called_computations()[0], names);
    inlined.insert(call);
  }
  basic::RemoveInstructions(computation, inlined);
  // Inlined copies were appended at the end; move them before the users of their calls.
  computation.SortTopologically();
  return true;
}

}  // namespace

bool CallInliner::Run(hlo::Module& module) {
  const std::vector<Computation*> callees_first = basic::ReachableComputationsCalleesFirst(module);
  CheckInlinedSize(callees_first);
  bool changed = false;
  for (Computation* computation : callees_first) changed |= InlineCallsIn(*computation);
  if (changed) basic::RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace compiler

// Helpers shared by the basic passes (call-inliner, dce, cse, constant-folding,
// tuple-simplifier, while-loop-invariant-hoisting).
//
// Guarantees: every helper is linear in the size of what it walks (hash maps keyed by pointer,
// no rescans), never asserts on malformed-but-verified IR, and keeps instruction names unique
// within a computation when it creates instructions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/ir.h"

namespace compiler::basic {

// True when the instruction itself must run even if its value is unused, or must not be merged
// with an identical one: custom-call with has_side_effect, collectives, rng ops (their results
// differ per execution), after-all (token ordering). Does not look into called computations;
// use SideEffects for that.
bool HasDirectSideEffect(const hlo::Instruction& instruction);

// Transitive side effects: an instruction is side-effecting when it is directly, or when a
// computation it calls (recursively) contains a side-effecting instruction. Computed once for
// every computation reachable from the entry, callees first (no recursion, so deep call graphs
// cannot overflow the stack). The basic passes only move or remove pure instructions, so the
// answer stays valid while they edit the module; a computation it has not seen counts as
// side-effecting (the safe answer).
class SideEffects {
 public:
  explicit SideEffects(const hlo::Module& module);
  bool Has(const hlo::Instruction& instruction) const;

 private:
  std::unordered_set<const hlo::Computation*> pure_;
};

// Computations reachable from the entry, callees before callers (post-order of the call graph).
std::vector<hlo::Computation*> ReachableComputationsCalleesFirst(const hlo::Module& module);

// Removes every computation not reachable from the entry. Returns true if any was removed.
bool RemoveUnreachableComputations(hlo::Module& module);

// Number of instructions in the module calling each computation (one count per call site).
std::unordered_map<const hlo::Computation*, int64_t> CallSiteCounts(const hlo::Module& module);

// Hands out names not yet used in one computation: `base` if free, else `base.1`, `base.2`, ...
class NameUniquer {
 public:
  explicit NameUniquer(const hlo::Computation& computation);
  std::string Unique(const std::string& base);

 private:
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int64_t> next_suffix_;
};

// A copy of `original` (opcode, shape, attributes, opaque attributes, called computations,
// location) with the given name and operands; not yet added to any computation.
std::unique_ptr<hlo::Instruction> CloneInstruction(const hlo::Instruction& original,
                                                   std::string name,
                                                   const std::vector<hlo::Instruction*>& operands);

// A new get-tuple-element of `tuple` at `index` (shape taken from the tuple's shape).
std::unique_ptr<hlo::Instruction> MakeGetTupleElement(hlo::Instruction* tuple, int64_t index,
                                                      std::string name);
// A new tuple of `elements` (shape built from the elements' shapes).
std::unique_ptr<hlo::Instruction> MakeTuple(const std::vector<hlo::Instruction*>& elements,
                                            std::string name);

// Removes `dead` (instructions with no users outside `dead`, none of them the root) from
// `computation`, in any order.
void RemoveInstructions(hlo::Computation& computation,
                        const std::unordered_set<hlo::Instruction*>& dead);

}  // namespace compiler::basic

// dce: dead-code elimination.
//
// Post-condition: in every computation reachable from the entry, every instruction is the
// root, a parameter, side-effecting (see basic::SideEffects: side-effecting custom-calls,
// collectives, rng, after-all, and any instruction calling a computation that contains one), or
// an operand (transitively) of one of those. Computations not reachable from the entry are
// removed. Runs in time linear in the module size (one mark pass, one sweep per computation).
//
// Does NOT: remove unused parameters (they are the computation's signature); remove unused
// elements of while-loop tuples or unused outputs of multi-output instructions; look inside
// fusion computations' callers to shrink signatures.
#pragma once

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class DeadCodeElimination : public Pass {
 public:
  DeadCodeElimination() = default;
  explicit DeadCodeElimination(const TargetDescription& /*target*/) {}
  std::string_view name() const override { return "dce"; }
  std::string_view description() const override {
    return "remove unused side-effect-free instructions and unreachable computations";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

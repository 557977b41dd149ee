// cse: common-subexpression elimination within each computation.
//
// Post-condition: in every computation reachable from the entry, no two instructions are
// "identical": same opcode, same shape including the effective layout (Shape::Equal), the
// same operands in the same order, equal typed attributes (constants compare by value,
// bit for bit), the same called computations (by identity), and equal opaque attributes other
// than `metadata`. Of a set of identical instructions the first in definition order is kept
// (with its name and metadata) and the others are replaced by it and removed.
// Linear time: one hash-map lookup per instruction, visiting operands before users so that
// merges cascade in a single sweep.
//
// Never merged: parameters; side-effecting instructions (basic::SideEffects: rng, collectives,
// side-effecting custom-calls, after-all, and calls of computations containing any of them);
// constants whose values were elided in the dump (ConstantAttrs::elided — two elided
// constants stand for different unknown values even if their placeholder fill coincided).
//
// Does NOT: treat commutative operands as equal (add(a,b) vs add(b,a)); compare called
// computations structurally (two reduces with separately written but identical `to_apply`
// regions stay separate); merge across computations; ignore backend_config or sharding (they
// can change what the instruction means to a backend).
#pragma once

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class CommonSubexpressionElimination : public Pass {
 public:
  CommonSubexpressionElimination() = default;
  explicit CommonSubexpressionElimination(const TargetDescription& /*target*/) {}
  std::string_view name() const override { return "cse"; }
  std::string_view description() const override {
    return "merge identical side-effect-free instructions (constants by value)";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

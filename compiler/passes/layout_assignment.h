// layout-assignment: gives every array shape a concrete layout chosen from the target's
// preferences, and inserts `copy` instructions where a value's layout differs from the layout
// its user requires.
//
// Post-condition, in every computation of the module:
//   * every array shape of rank >= 1 carries an explicit layout (Shape::has_layout; a scalar
//     has only one layout and is left as it is);
//   * parameters, bitcasts, copies and the results of while/call/conditional/fusion/custom-call
//     keep the layout they had ("pinned": their layout is part of a contract with a caller, a
//     callee, or the physical reinterpretation a bitcast performs);
//   * the root keeps its layout (for the entry, entry_computation_layout's result layout): when
//     the computed value has another layout, a copy (element-wise for tuples) becomes the root;
//   * every other instruction has the default descending layout when the target
//     prefers_row_major (otherwise it keeps the layout it had, made explicit); tuple,
//     get-tuple-element and opt-barrier take the layouts of what they forward;
//   * operand layouts satisfy their users: a bitcast and a custom-call see their operand in the
//     layout it originally had (a bitcast's result depends on it), while/call/fusion/conditional
//     operands match the callee's parameter layout, and any other op reads its array operands in
//     the preferred (descending) layout. A mismatching operand is routed through one shared
//     `copy` (per value and layout) named `<value>.copy`.
// The module evaluates to the same results: layouts only change physical placement, and the
// one layout-sensitive op (bitcast) keeps seeing its original operand layout.
//
// Does NOT: turn transposes into bitcasts, pick per-op layouts for performance (e.g. a
// column-major dot operand), remove copies made redundant by other passes, or change the
// layouts of while-loop state (pinned, since it is shared by body, condition and caller).
// Runs in time linear in the module size.
#pragma once

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class LayoutAssignment : public Pass {
 public:
  explicit LayoutAssignment(const TargetDescription& target)
      : prefers_row_major_(target.prefers_row_major) {}
  std::string_view name() const override { return "layout-assignment"; }
  std::string_view description() const override {
    return "assign the target's preferred layouts; insert copies where a user needs another";
  }
  bool Run(hlo::Module& module) override;

 private:
  bool prefers_row_major_;
};

}  // namespace compiler

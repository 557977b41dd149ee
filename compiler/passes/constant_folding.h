// constant-folding: replaces instructions whose operands are all constants by the constant
// they evaluate to, using the reference evaluator (so folding follows ir.h's semantics exactly:
// bf16 rounding, integer wrap, NaN propagation, ...).
//
// Post-condition: every folded instruction is replaced by a `constant` with the same name,
// shape (layout included) and metadata, and is removed; folding cascades along chains in one
// sweep. Constants made dead by the pass itself are removed; pre-existing constant operands that
// lose their last user are left to dce.
//
// Size bounds (so folding cannot blow up memory or compile time):
//   * a result over kMaxFoldedElements elements is not folded;
//   * the operands together over kMaxOperandElements elements are not folded;
//   * an estimate of the evaluation work (result elements x contraction length or window
//     size) over kMaxFoldWork is not folded, so a small result of a long dot does not stall
//     compilation;
//   * broadcast is never folded (a broadcast of a small constant is cheaper to keep than the
//     expanded literal); iota only up to kMaxFoldedIotaElements elements.
// Not folded: parameters, constants, side-effecting and rng instructions, control flow (call,
// while, conditional, fusion, custom-call), collectives, tuples and tuple-shaped results
// (tuple-simplifier handles those), opt-barrier (it exists to block such rewrites), and anything
// the evaluator rejects.
// Elided constants (ConstantAttrs::elided, i.e. `constant({...})` in a dump) are never folded
// through: their values are placeholders, and folding would print them back as real-looking
// literals. An instruction with an elided operand stays as it is.
#pragma once

#include <cstdint>

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class ConstantFolding : public Pass {
 public:
  static constexpr int64_t kMaxFoldedElements = int64_t{64} << 10;
  static constexpr int64_t kMaxOperandElements = int64_t{1} << 20;
  static constexpr int64_t kMaxFoldedIotaElements = 16;
  static constexpr double kMaxFoldWork = double(int64_t{1} << 26);

  ConstantFolding() = default;
  explicit ConstantFolding(const TargetDescription& /*target*/) {}
  std::string_view name() const override { return "constant-folding"; }
  std::string_view description() const override {
    return "evaluate instructions with constant operands (results up to 64Ki elements)";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

// DotCanonicalizer (dot-canonicalizer): every dot becomes
//
//     [batch..., m, k] x [batch..., k, n] -> [batch..., m, n]
//
// i.e. lhs_batch = rhs_batch = {0..B-1}, lhs_contracting = {B+1}, rhs_contracting = {B}, with
// exactly one free and one contracting dimension per operand. Operands are transposed (batch
// dims first, in dimension-number order; free dims in increasing order; contracting dims in
// dimension-number order) and reshaped (free dims collapsed into m or n, contracting dims into
// k; a missing free dim becomes size 1); the result is reshaped back to the original shape,
// whose order (batch, lhs free, rhs free) the canonical dot already produces. An operand whose
// two groups are already contiguous in the other order (a weight stored [n, k]) is reshaped
// first and then transposed in its last two dimensions only (SwapsLastTwoDims), a form a
// backend's GEMM can read as a transposed matrix without moving bytes.
//
// Post-condition: IsCanonicalDot holds for every dot; the module evaluates to the same values
// (the sum over k visits the same products; a backend may associate them differently).
// Does NOT: collapse multiple batch dimensions into one, change element types or precision
// config, or touch dots that are already canonical.
#pragma once

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

// True for a dot of the canonical form above.
bool IsCanonicalDot(const hlo::Instruction& dot);

// True for a transpose of a row-major array into a row-major array that swaps its last two
// dimensions and keeps the others in place.
bool SwapsLastTwoDims(const hlo::Instruction& inst);

class DotCanonicalizer : public Pass {
 public:
  DotCanonicalizer() = default;
  explicit DotCanonicalizer(const TargetDescription&) {}
  std::string_view name() const override { return "dot-canonicalizer"; }
  std::string_view description() const override {
    return "dots to [batch, m, k] x [batch, k, n] via transposes and reshapes";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

// while-loop-invariant-hoisting: computes loop-invariant values once, before the loop.
//
// A value in a while body is invariant when it is a constant, a get-tuple-element of the body
// parameter at an index the body passes through unchanged (root element i is gte(param, i)),
// or a side-effect-free instruction whose operands are all invariant. The invariant
// instructions worth hoisting are the non-trivial ones (not constant / get-tuple-element /
// tuple / parameter / reshape / bitcast) that do not inflate their data (result bytes <= operand
// bytes: hoisting a broadcast or an iota would only keep a big buffer alive across the loop). Those
// whose value is used by the rest of the body are cloned (with their invariant operands) before the
// loop, appended to the loop's tuple as new elements, read in the body through new
// get-tuple-elements, and passed through unchanged by the body's root.
//
// Post-condition: in each transformed loop, the hoisted instructions are gone from the body,
// the while's shape, its init tuple, both computations' parameters and the body root have
// grown by one element per hoisted value (appended at the end, so existing indices keep their
// meaning), and users of the while that read the whole tuple see the original shape (through a
// rebuilt tuple of the first n elements). Loops nested in loop bodies are handled innermost
// first, so an invariant can move out of several levels in one run.
//
// Does NOT transform a loop when: the body or condition is shared with another caller; the
// body root is not a tuple instruction (or has users); a body/condition parameter is used other
// than through get-tuple-element; or more than kMaxHoistedPerLoop values would be added (growth
// bound). Does NOT hoist out of the condition, hoist a whole inner while loop (only what its
// body computes from invariants), or hoist side-effecting/rng instructions, and
// does not try to prove that a loop runs at least once (hoisted code is pure, so running it
// for a zero-trip loop costs time, never correctness).
#pragma once

#include <cstdint>

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class WhileLoopInvariantHoisting : public Pass {
 public:
  static constexpr int64_t kMaxHoistedPerLoop = 32;

  WhileLoopInvariantHoisting() = default;
  explicit WhileLoopInvariantHoisting(const TargetDescription& /*target*/) {}
  std::string_view name() const override { return "while-loop-invariant-hoisting"; }
  std::string_view description() const override {
    return "compute loop-invariant values once before the while loop";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

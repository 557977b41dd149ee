// tuple-simplifier: removes tuple packing that is immediately unpacked, and unpacking that is
// immediately repacked.
//
//   get-tuple-element(tuple(a0, ..., an), i)           -> ai
//   tuple(gte(x, 0), gte(x, 1), ..., gte(x, n-1))      -> x    (x has exactly n elements, in order)
//
// Post-condition: in every computation reachable from the entry, no get-tuple-element reads a
// `tuple` instruction and no tuple rebuilds another value element by element, wherever the
// replacement has exactly the same shape (layouts included — a layout change is a copy, not a
// no-op). Rewritten instructions, and tuples / get-tuple-elements that become unused through
// the rewrite, are removed. Cascades (nested tuples) are handled in one sweep because operands
// are visited before their users.
//
// Does NOT: look through while, call, conditional or fusion boundaries; fold a
// get-tuple-element of a tuple-shaped constant; remove unused tuple elements of loops.
#pragma once

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class TupleSimplifier : public Pass {
 public:
  TupleSimplifier() = default;
  explicit TupleSimplifier(const TargetDescription& /*target*/) {}
  std::string_view name() const override { return "tuple-simplifier"; }
  std::string_view description() const override {
    return "gte(tuple(...), i) -> element i; tuple(gte(x,0..n-1)) -> x";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

// DotExpander (dot-expander): makes every dot one the target's own path computes, as its
// TargetDescription states it (the dot rule: a library for some element types, generated code
// for the others).
//
//   mixed types:  a dot whose operands are of another type than its result, where the result's
//                 type is a library type (bf16 x bf16 -> f32), gets its operands converted to
//                 the result's type first (exact for every widening; the library then sees one
//                 type throughout, which is all cuBLASLt and the CPU's GEMM take); with an f64
//                 operand (f64 x f64 -> f32), which that would round before the f64 sum, it
//                 becomes an f64 dot converted to the result's type instead;
//   integer dots: a dot of integers (s8 x s8 -> s32 included) that the target's library does
//                 not take, while the rule says such dots are generated code, becomes
//
//       reduce(multiply(convert(broadcast(lhs)), convert(broadcast(rhs))), 0, add)
//
//                 over [result dims..., contracting dims...]: the input fusion makes that one
//                 kernel whose every output element sums its k products, so the broadcast
//                 product is never stored (XLA's DotDecomposer makes the same form for dots its
//                 emitters do not take).
//
// Post-condition: every dot has operands of its result's type, and on a target whose dot rule is
// "library for types T, generated otherwise", no integer dot outside T remains. Values are
// unchanged: integer sums wrap the same in any order, widening converts are exact.
// Does NOT: touch floating-point dots outside the library's types (f64 on the CPU keeps its own
// path), convolutions (no generated form for them: a target description says so), or pred dots.
#pragma once

#include <set>

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class DotExpander : public Pass {
 public:
  DotExpander() = default;
  explicit DotExpander(const TargetDescription& target);
  std::string_view name() const override { return "dot-expander"; }
  std::string_view description() const override {
    return "mixed-type dots get converted operands; integer dots the library lacks become "
           "multiply-reduce";
  }
  bool Run(hlo::Module& module) override;

 private:
  std::set<hlo::PrimitiveType> library_types_;  // empty: the target has no dot library
  bool expand_integer_dots_ = false;
};

}  // namespace compiler

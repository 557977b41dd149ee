// async-wrapper-expander: rewrites XLA's generic asynchronous wrapping into a plain call.
//
//   s = ((ops), r, ctx...) async-start(ops), calls=C   ->  c = call(ops), to_apply=C
//                                                          s = tuple(tuple(ops), c, zeros...)
//   u = async-update(s)                                ->  s
//   d = async-done(s)                                  ->  get-tuple-element(s), index=1
//
// Post-condition: no computation reachable from the entry contains async-start, async-update or
// async-done; every value is what the evaluator gives the wrapped form (the context words are
// zero in both). The call-inliner and tuple-simplifier that follow leave the wrapped instruction
// (a reduce-scatter, an all-to-all, a collective-broadcast...) inline where the start was.
//
// Does NOT: model the overlap the wrapping allows (backends run the exchange at the start, as
// they run XLA's -start/-done collectives), or keep async_execution_thread.
// Bad input: an async-update or async-done whose operand is not an async-start's value is left
// to the verifier's shape checks; nothing here reads past a tuple.
#pragma once

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class AsyncWrapperExpander : public Pass {
 public:
  AsyncWrapperExpander() = default;
  explicit AsyncWrapperExpander(const TargetDescription& /*target*/) {}
  std::string_view name() const override { return "async-wrapper-expander"; }
  std::string_view description() const override {
    return "rewrite async-start / async-update / async-done into a call of the wrapped "
           "computation";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

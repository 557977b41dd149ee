// call-inliner: replaces every `call` instruction by a copy of the computation it calls.
//
// Post-condition: no computation reachable from the entry contains a `call` instruction
// (calls inside fusion, reduce, while, conditional, ... computations are inlined too, into
// those computations); computations no longer reachable from the entry are removed. Inlined
// instructions keep their names when free in the caller, else get a `.N` suffix; they keep
// their metadata. Instructions of every touched computation stay topologically sorted.
//
// Does NOT: inline fusions, while/conditional bodies, custom-call or reduce computations (only
// the `call` opcode is inlined); look at call attributes such as backend_config (a call is
// semantically its callee applied to its operands, so they carry no meaning to keep).
// Bad input: a call graph whose full inlining would exceed kMaxInlinedInstructions (an
// exponential chain of calls) is an hlo::Error located at the call, not an allocation blow-up.
#pragma once

#include <cstdint>

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class CallInliner : public Pass {
 public:
  // Upper bound on the instruction count of the module while inlining.
  static constexpr int64_t kMaxInlinedInstructions = int64_t{1} << 22;

  CallInliner() = default;
  explicit CallInliner(const TargetDescription& /*target*/) {}
  std::string_view name() const override { return "call-inliner"; }
  std::string_view description() const override {
    return "inline every call and drop computations that become unreachable";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

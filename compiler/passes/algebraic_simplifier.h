// AlgebraicSimplifier (algebraic-simplifier): applies the rule tables of simplify_rules.h —
// arithmetic identities, reshape/transpose/broadcast/slice chains, convert chains,
// compare/select idioms, transposes folded into dot dimension numbers — to a fixed point.
//
// Post-condition: no rule of the tables matches any live instruction (unless the rewrite
// budget of 4 rewrites per instruction ran out, which only a pathological module reaches);
// every computation is topologically sorted with unique names; the module evaluates to the
// same bits as before (NaN payloads aside: the rules are exact identities, see
// simplify_rules.h). Instructions a rewrite made unused are deleted, transitively.
//
// Does NOT: fold constants (constant-folding), remove code that was dead before it ran (dce),
// merge equal expressions (cse), apply inexact floating-point algebra (reassociation,
// x*0 -> 0 for floats), or replace a computation root by a value of a different layout (the
// entry's result layout is part of its signature).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/pass.h"
#include "compiler/passes/simplify_rules.h"
#include "compiler/target_description.h"

namespace compiler {

class AlgebraicSimplifier : public Pass {
 public:
  AlgebraicSimplifier();
  explicit AlgebraicSimplifier(const TargetDescription& target) : AlgebraicSimplifier() {}

  std::string_view name() const override { return "algebraic-simplifier"; }
  std::string_view description() const override {
    return "exact algebraic identities, shape/convert chains, select idioms, dot transposes";
  }
  bool Run(hlo::Module& module) override;

  // How often each rule fired during the last Run (rule name -> count), for tests and reports.
  const std::map<std::string, int64_t>& rule_counts() const { return rule_counts_; }
  // Every rule the simplifier knows, in table order.
  static std::vector<const simplify::Rule*> AllRules();

 private:
  bool SimplifyComputation(hlo::Computation& computation);

  // rules_by_opcode_[opcode] = rules that look at that opcode, in table order.
  std::vector<std::vector<const simplify::Rule*>> rules_by_opcode_;
  std::map<std::string, int64_t> rule_counts_;
};

}  // namespace compiler

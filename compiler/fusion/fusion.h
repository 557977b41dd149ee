// Fusion: the four passes that group instructions into `fusion` instructions, and the explain API
// that says why a producer–consumer edge was left unfused.
//
// The pipeline runs them in this order (each reads only its TargetDescription):
//
//   output-fusion       dot / convolution + accepted epilogues (bias, scale, relu, GELU,
//                       convert, residual add) -> kind=kOutput; only epilogues in
//                       target.contraction_epilogues.
//   input-fusion        reductions with their row-local producers and consumers: a softmax or a
//                       layer-norm row becomes ONE kInput fusion per row-reduction group.
//   loop-fusion         producer–consumer fusion of elementwise and data-movement ops (and of
//                       kLoop fusions with each other) -> kind=kLoop. Fusible: elementwise,
//                       broadcast, reshape, bitcast, transpose, slice, concatenate, pad, iota,
//                       convert, reverse, dynamic-slice, small constants. Not: gather and
//                       dynamic-update-slice (in-place / data-dependent; left to backends).
//   multi-output-fusion sibling kLoop/kInput fusions that read the same operand and iterate over
//                       the same shape become one fusion with a tuple root; users read it through
//                       get-tuple-element. Only when target.multi_output_fusion.
//
// Post-conditions shared by every pass:
//   * only kinds in target.fusion_kinds are formed (an empty set: the passes change nothing);
//   * a fusion never holds both an op the target runs on the host (host fallback by the
//     ownership rules) and one it runs on the device (fusion_placement.h); the one exception:
//     a contraction that runs on the host keeps its epilogues;
//   * the module verifies and evaluates to the same values as before (fused computations hold
//     clones of the original instructions, under their original names; parameters `param_N`);
//   * fused computations are named `fused_computation`, `fused_computation.1`, … and are placed
//     just before the computation that calls them; fusion instructions `fusion`, `fusion.1`, …;
//     every computation stays topologically sorted;
//   * side-effecting custom-calls, custom-calls, collectives, while/conditional/call, rng,
//     parameters and constants bigger than kSmallConstantElements are never fused; kCustom
//     fusions are never entered or merged;
//   * a fusion never exceeds target.max_fusion_instructions instructions, and within one run
//     of a pass the arithmetic work recomputed by duplicated producers stays within
//     (target.max_duplication_factor - 1) times the arithmetic work of the computation
//     (fusion_cost.h); free ops (data movement, small constants) are duplicated without limit,
//     expensive ones (transcendentals, divide, reductions, contractions) never.
// What the passes do NOT do: fuse into or out of reducer/comparator computations, fuse across
// computations, fuse producers into a contraction's operands (library calls read materialized
// operands), or change layouts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/pass.h"
#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler {

class OutputFusion : public Pass {
 public:
  explicit OutputFusion(const TargetDescription& target) : target_(target) {}
  std::string_view name() const override { return "output-fusion"; }
  std::string_view description() const override {
    return "fuses dot/convolution with accepted epilogues (bias, scale, relu, ...) into kOutput";
  }
  bool Run(hlo::Module& module) override;

 private:
  const TargetDescription& target_;
};

class InputFusion : public Pass {
 public:
  explicit InputFusion(const TargetDescription& target) : target_(target) {}
  std::string_view name() const override { return "input-fusion"; }
  std::string_view description() const override {
    return "fuses reductions with their row-local producers and consumers into kInput";
  }
  bool Run(hlo::Module& module) override;

 private:
  const TargetDescription& target_;
};

class LoopFusion : public Pass {
 public:
  explicit LoopFusion(const TargetDescription& target) : target_(target) {}
  std::string_view name() const override { return "loop-fusion"; }
  std::string_view description() const override {
    return "fuses elementwise and data-movement producers into their consumers (kLoop)";
  }
  bool Run(hlo::Module& module) override;

 private:
  const TargetDescription& target_;
};

class MultiOutputFusion : public Pass {
 public:
  explicit MultiOutputFusion(const TargetDescription& target) : target_(target) {}
  std::string_view name() const override { return "multi-output-fusion"; }
  std::string_view description() const override {
    return "merges sibling fusions that read the same operand into one tuple-rooted fusion";
  }
  bool Run(hlo::Module& module) override;

 private:
  const TargetDescription& target_;
};

// One producer–consumer edge that the fusion passes left unfused, and why.
struct FusionDecision {
  std::string computation;  // where the edge is
  std::string producer;     // instruction names
  std::string consumer;
  std::string reason;       // e.g. "consumer is a custom-call", "fusion size limit 64"
};

// For every producer–consumer edge between two top-level instructions of the entry and of the
// computations reachable through control flow, where both ends do work (parameters, tuples,
// get-tuple-elements and large constants are not "work"), the reason it is not fused. Meant to
// be called on the module after the fusion passes; stateless (re-derives each reason from the
// same rules the passes apply).
std::vector<FusionDecision> ExplainFusion(const hlo::Module& module,
                                          const TargetDescription& target);
// One line per decision: "computation: producer -> consumer: reason".
std::string FormatFusionDecisions(const std::vector<FusionDecision>& decisions);

}  // namespace compiler

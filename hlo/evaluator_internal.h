// Internal interface between the evaluator core (evaluator.cc: dispatch, parameters, constants,
// control flow) and the op-family files. Not part of hlo/'s public API.
//
// Each family function computes one instruction from already-evaluated operand values. They may
// call back into the evaluator for called computations (reduce's to_apply, sort's comparator)
// through EvalContext::Call.
#pragma once

#include <memory>
#include <span>
#include <unordered_map>

#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "hlo/literal.h"

namespace hlo::eval {

struct ComputationPlan;  // evaluator.cc: per-computation operand slots and value lifetimes

// State shared while evaluating a module.
class EvalContext {
 public:
  explicit EvalContext(const EvaluatorOptions& options) : options_(options) {}
  // Evaluates `computation` on `arguments` (used for to_apply, comparators, loop bodies).
  Literal Call(const Computation& computation, std::span<const Literal* const> arguments);
  const EvaluatorOptions& options() const { return options_; }
  // Adds a result of `shape` to the work done; throws past EvaluatorOptions::max_result_elements.
  void CountResult(const Shape& shape);
  // The device this context evaluates for in a multi-device run; nullptr on one device.
  const DeviceView* device() const { return options_.device; }

 private:
  const EvaluatorOptions& options_;
  int64_t result_elements_ = 0;
  // Built once per computation and reused on every call (while bodies run many times).
  std::unordered_map<const Computation*, std::shared_ptr<const ComputationPlan>> plans_;
};

using Operands = std::span<const Literal* const>;

// evaluator_elementwise.cc: every op of class kElementwiseUnary/Binary/Ternary (convert,
// bitcast-convert, compare, select, clamp, reduce-precision, …).
Literal EvaluateElementwise(const Instruction& inst, Operands operands);

// evaluator_data_movement.cc: bitcast, broadcast, concatenate, dynamic-slice,
// dynamic-update-slice, gather, pad, reshape, reverse, slice, transpose, iota, copy-like ops.
Literal EvaluateDataMovement(const Instruction& inst, Operands operands);

// evaluator_reduction.cc: reduce, reduce-window, scatter, select-and-scatter, sort, topk, map.
Literal EvaluateReduction(const Instruction& inst, Operands operands, EvalContext& context);

// evaluator_contraction.cc: dot, convolution, batch-norm-inference/-training/-grad.
Literal EvaluateContraction(const Instruction& inst, Operands operands);
// evaluator_complex.cc
Literal EvaluateFft(const Instruction& inst, Operands operands);

// evaluator_control.cc: call, while, conditional, fusion, custom-call (through the registry).
Literal EvaluateControl(const Instruction& inst, Operands operands, EvalContext& context);

// Helpers shared by the family files -------------------------------------------------------------

// Multi-dimensional index iteration over `dims` in row-major order: calls fn(index) for each.
template <typename Fn>
void ForEachIndex(std::span<const int64_t> dims, Fn&& fn) {
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  while (true) {
    fn(std::span<const int64_t>(index));
    int64_t k = static_cast<int64_t>(dims.size()) - 1;
    while (k >= 0) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
      --k;
    }
    if (k < 0) return;
  }
}

// Row-major linear index of `index` in `dims`.
inline int64_t LinearIndex(std::span<const int64_t> dims, std::span<const int64_t> index) {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

// A literal with the instruction's shape but with the default layout flag of the result.
Literal MakeResult(const Instruction& inst);

}  // namespace hlo::eval

// The cost model behind fusion decisions: which ops may be fused at all, how much arithmetic
// an op costs per element, and the two bounds every fusion pass respects.
//
// Guarantees:
//   * IsNeverFusible is true for everything the fusion passes must leave alone (side effects,
//     custom-calls, collectives, control flow, rng, parameters, big constants, kCustom fusions).
//   * PerElementWork is 0 exactly for ops that compute nothing (data movement, iota, constants,
//     copy, bitcast-convert; convert is not free: it costs 1), so duplicating them never counts
//     against the duplication budget.
//   * DuplicationBudget: within one run of one pass, duplicating producers into several
//     consumer fusions may add at most (max_duplication_factor - 1) x (arithmetic work of the
//     computation), so that pass leaves at most max_duplication_factor times the work it found.
//     Expensive producers (transcendentals, divide, power, reductions, contractions) are never
//     duplicated.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler::fusion {

// Constants up to this many elements are fused into their users (XLA fuses small constants).
inline constexpr int64_t kSmallConstantElements = 16;
// Per-element work of an op XLA calls "expensive" (transcendentals, divide, power).
inline constexpr double kExpensiveWork = 8.0;

// Why an instruction can never be part of a fusion; empty when it can.
std::string NeverFusibleReason(const hlo::Instruction& instruction);
inline bool IsNeverFusible(const hlo::Instruction& instruction) {
  return !NeverFusibleReason(instruction).empty();
}

// Ops kLoop fusion takes: elementwise, broadcast, reshape, bitcast, transpose, slice,
// concatenate, pad, iota, convert, reverse, dynamic-slice, small constants, and kLoop fusions.
bool IsLoopFusible(const hlo::Instruction& instruction);

// Arithmetic work per result element (0 for data movement). Fusions: the sum over their body.
double PerElementWork(const hlo::Instruction& instruction);
// PerElementWork x result elements.
double Work(const hlo::Instruction& instruction);
// Transcendentals, divide, power, and anything that reduces or contracts.
bool IsExpensive(const hlo::Instruction& instruction);

// How many instructions an instruction contributes to a fusion (a fusion: its non-parameter
// body; anything else: 1), not counting scalar constants and broadcasts of scalars, which a
// kernel holds as immediates.
int64_t FusedSize(const hlo::Instruction& instruction);

// Whether `consumer` reads elements of its operand `operand_index` more than once per element
// (broadcast, and ops whose result is larger than that operand), so fusing an expensive
// producer there would recompute it.
bool ReusesOperandElements(const hlo::Instruction& consumer, int64_t operand_index);

// The duplication budget of one computation (see the header comment).
class DuplicationBudget {
 public:
  DuplicationBudget(const hlo::Computation& computation, const TargetDescription& target);
  // Charges the work of duplicating `producer` once more; false (nothing charged) when the
  // producer is expensive or the budget cannot pay for it.
  bool TryCharge(const hlo::Instruction& producer);
  // Gives back work charged for a group that was not formed after all.
  void Refund(double work) { remaining_ += work; }
  double remaining() const { return remaining_; }

 private:
  double remaining_ = 0;
};

// The reason a non-free producer with several users is not duplicated (expensive producer, or
// the budget); used by the passes and by ExplainFusion so both say the same thing.
std::string DuplicationRefusal(const hlo::Instruction& producer, const TargetDescription& target);

}  // namespace compiler::fusion

// The cost model: static work (FLOPs, transcendentals) and memory traffic (bytes) per
// instruction, used by the ownership analysis and the portability report.
//
// Guarantees: every opcode has an explicit rule (an exhaustive switch in cost_model.cc); costs
// are deterministic, never negative, and computed in time linear in the instructions visited
// (per-computation results are memoized, so a reducer shared by many reduces is costed once).
//
// The counting rules (docs/ownership.md has the reasoning):
//   dot          2 * (output elements) * K,  K = product of the lhs contracting dimensions
//                (= 2 * batch * M * N * K).
//   convolution  2 * (output elements) * (kernel window volume) * (kernel input features, i.e.
//                input features per group). Taps that land in padding are counted too.
//   elementwise  1 per output element; transcendental ops (exp, log, tanh, rsqrt, sin, power, …)
//                also count 1 transcendental per element. copy and bitcast-convert are free.
//   reduce       (input elements) * (FLOPs of one call of the reducer, at least 1);
//                reduce-window, scatter, select-and-scatter, sort, map, all-reduce alike.
//   fusion       the sum over its fused computation.
//   free         parameter, constant, tuple, get-tuple-element, bitcast, data movement, iota,
//                control flow (its bodies are costed where they are analyzed), custom-call
//                (opaque: its work is unknown to the compiler).
// Bytes: the operands read plus the result written at the boundary of the instruction (for a
// fusion, values internal to it are not memory traffic). Ops that touch only part of an operand
// count what they touch: slice/dynamic-slice/gather read what they return (plus indices);
// dynamic-update-slice and scatter update in place (read and write the update). Instructions
// that generate no code (parameter, constant, tuple, get-tuple-element, bitcast, after-all,
// opt-barrier, while/conditional/call) move no bytes.
//
// Not modeled: trip counts of while loops (a body is counted once), caches, layouts and
// padding of tiles; the roofline estimate below is a first-order bound, not a simulation.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "compiler/ownership.h"
#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler {

// Bytes of a value: the sum over the array leaves of a (possibly nested) tuple shape.
double ShapeBytes(const hlo::Shape& shape);

// True for the ops that exist without a kernel and move no bytes: parameter, constant, tuple,
// get-tuple-element, bitcast, after-all, opt-barrier and control flow (while, conditional,
// call). The ownership analysis gives exactly these Owner::kNoCode ("trivial" instructions).
bool GeneratesNoCode(hlo::Opcode op);

// True for elementwise ops that count as transcendental (exp, log, tanh, rsqrt, sin, ...).
bool IsTranscendental(hlo::Opcode op);

class CostModel {
 public:
  // FLOPs, transcendentals and bytes of `instruction` executed as one kernel.
  InstructionCost Cost(const hlo::Instruction& instruction);
  // FLOPs and transcendentals only (no bytes).
  InstructionCost Work(const hlo::Instruction& instruction);
  // Sum of Work over a computation's instructions (memoized per computation).
  const InstructionCost& ComputationWork(const hlo::Computation& computation);

 private:
  double ReducerFlopsPerCall(const hlo::Instruction& instruction, int64_t which = 0);
  std::unordered_map<const hlo::Computation*, InstructionCost> computation_work_;
};

// Convenience for one-off queries (a fresh CostModel each call).
InstructionCost CostOf(const hlo::Instruction& instruction);

// First-order roofline time of one kernel on `target`: max(compute, memory) plus the launch
// cost. Contractions use the target's matrix rate for the operand type (or its vector rate when
// it lists none); everything else the vector rate. A rate of 0 contributes no time.
double RooflineSeconds(const hlo::Instruction& instruction, const InstructionCost& cost,
                       const TargetDescription& target);

}  // namespace compiler

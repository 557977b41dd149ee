// Transaction-level latencies of the compute units: how many cycles one matrix-unit or
// vector-unit instruction occupies its unit, and what it moves, computed from the instruction's
// fields and the ArchConfig (no per-PE simulation). The SystemC units wait these latencies.
//
// Guarantees:
//   - The matrix unit's cycles come from mxu_timing.h's fold formulas (the same code SCALE-Sim
//     compatibility mode uses), per dataflow, with the fill/drain of consecutive folds
//     overlapped inside one instruction as a pipelined array does; tests/simulator/ checks them
//     within +-2 % of the processing-element-level reference model (pe_reference.h) on at
//     least 200 random tile shapes on arrays up to 16x16. Consecutive ws instructions overlap
//     too (issue_interval, weights_hold; mxu_schedule.h), checked against pe_sequence.h.
//   - Vector instructions take ceil(elements / lanes) cycles plus a fixed pipeline depth
//     documented in docs/isa.md; row reductions add a log2(lanes) tree.
//   - Byte counts are exact (what the instruction reads and writes in the UB/accumulators).
#pragma once

#include <cstdint>

#include "simulator/functional.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace simulator {

// The vector unit's pipeline (docs/isa.md "Semantics and timing"): an instruction streams its
// elements L per cycle, then the last group needs ArchConfig::vector_pipeline_depth more cycles
// (operand read, execute, round/pack, write back). exp/tanh/rsqrt/recip add
// vector_transcendental_depth (iterative approximation stages). Row reductions add
// ceil(log2 L) cycles of adder tree. Both depths are rows of the architecture table, which the
// lowering reads for its cost decisions too.

struct UnitCost {
  int64_t cycles = 0;          // latency: until its results are in place
  // Cycles until the unit can accept its next instruction (<= cycles). Only consecutive ws
  // matmul/conv instructions overlap (docs/isa.md); everything else has issue_interval = cycles.
  int64_t issue_interval = 0;
  // mxu.matmul / mxu.conv: cycles from its start during which its weight buffer must keep its
  // tile (an mxu.ldw into that buffer may start then); 0 for other instructions.
  int64_t weights_hold = 0;
  int64_t macs = 0;
  int64_t vector_element_ops = 0;
  int64_t ub_bytes_read = 0, ub_bytes_written = 0;
  int64_t acc_bytes_read = 0, acc_bytes_written = 0;
};

// Cost of an mxu.* or v* instruction (other opcodes: hlo::Error). `weights` gives mxu.matmul /
// mxu.conv the loaded tile's k x n.
UnitCost ComputeCost(const systolic::Instruction& inst, const systolic::ArchConfig& config,
                     const RegisterFile& registers, const WeightBuffers& weights);

}  // namespace simulator

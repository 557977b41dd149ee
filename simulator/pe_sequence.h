// The processing-element model of a SEQUENCE of weight-stationary matrix-unit instructions
// (mxu.ldw / mxu.matmul) run back to back: the test oracle for the overlap rules of
// mxu_schedule.h (issue interval, weight-buffer release). Like pe_reference.h, every PE's
// registers are updated every cycle; keep arrays and sequences small (tests: up to 16 x 16).
//
// The machine: every PE(i,j) holds the ISA's two weight buffers as two registers w[0], w[1].
// mxu.ldw into buffer b writes tile row r into w[b] of array row r at cycle L + r (after the PEs
// read their registers in that cycle), one ldw at a time. A matmul's operands carry their buffer
// and step: row t of A enters array row i at s + t + i and moves right one PE per cycle,
// multiplying with w[b]; partial sums start at +0 in row 0, move down through all R rows and
// leave at the bottom of column j (j < n) -- exactly pe_reference.h's ws machine.
//
// The controller issues steps in program order, each at the first cycle in which its resources
// are free, reading the array's state:
//   - mxu.ldw into b: the loader is idle, and no operand of an earlier matmul reading b is still
//     to enter the array or sits in row 0 left of its last column (row r is rewritten at L + r,
//     so that check covers every row);
//   - mxu.matmul: the tile of its buffer is completely loaded, and the previous matmul's operands
//     have all entered (the array takes one new row per cycle).
// Any operand that meets a weight register holding another tile than the one its instruction
// expects, or a partial sum out of step, throws hlo::Error: a wrong schedule cannot pass.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/mxu_timing.h"
#include "simulator/isa/isa.h"

namespace simulator {

struct PeStep {
  enum class Kind { kLoadWeights, kMatmul };
  Kind kind = Kind::kMatmul;
  size_t buffer = 0;
  int64_t m = 0;               // matmul: activation rows
  int64_t k = 0, n = 0;        // ldw: tile shape (a matmul uses its buffer's)
  std::vector<uint32_t> data;  // ldw: k x n weights; matmul: m x k activations (row-major)
};

struct PeStepRun {
  int64_t start = 0;          // ldw: first row write; matmul: first operand enters
  int64_t end = 0;            // ldw: last row write + 1; matmul: last output leaves + 1
  std::vector<uint32_t> out;  // matmul: m x n column sums
};

struct PeSequenceRun {
  int64_t cycles = 0;  // the latest end
  std::vector<PeStepRun> steps;
};

// Throws hlo::Error on a dataflow other than ws, a bad shape (k > R, n > C, a dimension < 1, an
// array above 64 x 64), a matmul on a buffer no earlier ldw filled, a run above a million
// cycles, or a structural hazard.
PeSequenceRun RunPeSequence(const ArrayShape& array, systolic::Dtype dtype,
                            const std::vector<PeStep>& steps);

}  // namespace simulator

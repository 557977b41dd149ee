// A cycle-exact processing-element model of an R x C systolic array: the test oracle for the
// matrix unit's transaction-level timing (mxu_timing.h TimeInstructionPipelined, used by
// unit_timing.h) and for its arithmetic (numeric_mxu.h). Not SystemC and not fast: every PE's
// registers are updated every cycle, so keep R, C and m small (tests use arrays up to 16 x 16).
//
// What one call models: one mxu.matmul (or mxu.conv, given its im2col rows) of an m x k
// activation matrix A by a k x n weight tile W (k <= R, n <= C) in one dataflow, preceded in ws
// by the mxu.ldw that puts W into the PEs. (pe_sequence.h runs ws instructions back to back.)
//
//   ws  PE(i,j) holds W[i][j]. Row t of A enters row i of the array at the left edge at cycle
//       s + t + i (skewed) and moves right one PE per cycle; partial sums start at +0 in row 0,
//       move down one PE per cycle through ALL R rows and leave at the bottom of column j.
//   is  The same machine with the roles swapped: PE(i,j) holds A[f*C + j][i] (fold f of m), row
//       t of W^T streams in from the left (t < n), and column j's sums are C[f*C + j][t].
//   os  PE(i,j) accumulates C[f*R + i][j] (fold f of m): A[f*R + i][kk] enters row i at cycle
//       s + kk + i, W[kk][j] enters column j from the top at s + kk + j; each PE puts its finished
//       sum on its column's output bus (one result per column per cycle) in the cycle of its last
//       multiply-accumulate.
//
// Stationary tiles (ws weights, is activations) are double-buffered in every PE: a tile is
// written into the shadow registers one array row per cycle (row r at cycle L + r), and a switch
// token injected with the first operand of a fold travels with the data, so each PE swaps in the
// new tile exactly when that fold's data reaches it. The controller is greedy and reads the
// array's state: a tile load starts in the cycle the last shadow register of row 0 is swapped in, a
// fold starts streaming once its tile is loaded and the previous fold's operands have all
// entered; in os the next fold starts max(k, rows) cycles later (k: its operands' length, rows:
// the results the column bus must carry). Any structural hazard (a shadow overwritten before use,
// data meeting the wrong tile, two results on one bus) throws hlo::Error, so a wrong schedule
// cannot pass silently.
//
// Timing conventions (the same as TimeInstructionPipelined's):
//   - cycle 0 is the first cycle in which the instruction moves an operand into the array (the
//     first shadow-row write for mxu.ldw and for is, the first streamed operand for ws matmul
//     and os);
//   - a MAC and the register update it feeds happen in one cycle; an output leaves the array in
//     the cycle the bottom PE (ws, is) or the column bus (os) produces it;
//   - the count is the index of the cycle in which the last output leaves, plus one (for
//     mxu.ldw: the cycle of the last shadow-row write, plus one).
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/mxu_timing.h"
#include "simulator/isa/isa.h"

namespace simulator {

// One instruction's GEMM: element bit patterns as numeric_mxu.h defines them.
struct PeGemm {
  systolic::Dtype dtype = systolic::Dtype::kF32;
  int64_t m = 0, k = 0, n = 0;
  std::vector<uint32_t> a;  // m x k, row-major
  std::vector<uint32_t> w;  // k x n, row-major
};

struct PeRun {
  int64_t weight_load_cycles = 0;  // ws: the mxu.ldw; 0 in os and is (is fills inside `cycles`)
  int64_t cycles = 0;              // the matmul, per the conventions above
  int64_t folds = 0;
  std::vector<uint32_t> out;       // m x n column sums (before the accumulator update)
};

// Throws hlo::Error on a bad shape (k > R, n > C, a dimension < 1, an array above 64 x 64, a
// run above a million cycles) or on a structural hazard.
PeRun RunPeReference(const ArrayShape& array, const PeGemm& gemm);

}  // namespace simulator

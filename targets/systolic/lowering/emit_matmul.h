// Emission of a dot, alone or as the core of an output fusion (bias, scale, activation,
// conversion epilogues from row_program.h), on the matrix unit.
//
// For each output tile (batch b, rows m0.., columns n0..; n innermost) of a MatmulPlan:
//   load:   the W panel (K x tn, kept from tile t - 2 when the set still holds it), the A panel
//           (tm whole rows, once per row block, in its own slot), the epilogue's operand tiles,
//           into UB set t%2 (strided DMA straight from the row-major operands: no copies)
//   mxu:    per k block mxu.ldw into weight buffer (alternating, one step ahead: mxu_steps.h)
//           and mxu.matmul, the first block overwriting and the rest accumulating into
//           accumulator set t%2
//   vector: the epilogue on the accumulator tile (if any), and the copy of the result into a
//           resident UB region when asked (LocalOperands)
//   store:  the result tile (from the accumulators when there is no epilogue)
// Program order: tile t's loads are written before tile t - 1's mxu/vector/store work, so the
// in-order front end dispatches them early (units' own orders, hence the tokens, unchanged).
// Tokens: load->mxu, load->vector, mxu->vector (or mxu->store), vector->store, and for the
// reuse of set t%2 by tile t+2: store->load (UB) and vector->mxu or store->mxu (accumulators).
//
// Guarantees: the emitted program computes exactly what the matrix unit's semantics give for
// the dot (functional.h: accumulation in increasing k) followed by the epilogue; it returns
// false with the reason when the dot is not canonical or no tiling fits, emitting nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"
#include "targets/systolic/lowering/tiling.h"

namespace systolic::lowering {

// Operands kept in the unified buffer across ops (lowering.cc: a layer's activations stay on
// chip for the next layer, as in TPU v1's unified buffer). Addresses are outside the op's
// share of the UB; the caller orders their writes and reads across ops.
// Both are in column blocks: block j holds columns [j * w, j * w + w_j) of every row, packed
// ([rows, w_j] row-major, w_j = min(w, columns - j * w)), blocks one after another; w is the
// producer's tn, which must equal the consumer's tk (the array is square, or K fits both).
// So a result tile is one contiguous copy, and a k block of A one packed matmul operand.
// A convolution's input kept on chip in the layout its loads would build: NHWC with the
// convolution's padding included, [batch][top + h + bottom][left + w + right][channels], the
// halo zero (segment_builder.h writes it), so each band of input rows is one contiguous range.
struct PaddedActivation {
  int64_t batch = 0, h = 0, w = 0, channels = 0, element_bytes = 0;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  int64_t padded_h() const { return top + h + bottom; }
  int64_t padded_w() const { return left + w + right; }
  int64_t pixel_bytes() const { return channels * element_bytes; }
  int64_t bytes() const { return batch * padded_h() * padded_w() * pixel_bytes(); }
  bool operator==(const PaddedActivation&) const = default;
};

struct LocalOperands {
  std::optional<uint64_t> lhs;     // the whole lhs (batch * M rows of K), blocks of tk: no loads
  std::optional<uint64_t> result;  // also copy the result here, blocks of tn
  // Set for convolutions: lhs / result are in this padded layout instead of column blocks.
  std::optional<PaddedActivation> lhs_padded, result_padded;
  // A dot's result also copied here row-major (its DRAM layout), for elementwise consumers.
  std::optional<uint64_t> result_rows;
  // An elementwise op's operands already on chip row-major: operand index -> UB address.
  std::map<int64_t, uint64_t> operand_rows;
};

// `program`'s contraction is a dot; `params` are the DRAM addresses of its external
// operands, `lhs` / `rhs` the indices among them of the dot's operands.
bool EmitMatmulFusion(ProgramBuilder& builder, const RowProgram& program,
                      const ArchConfig& config, const std::vector<uint64_t>& params, int64_t lhs,
                      int64_t rhs, uint64_t result, std::string* why,
                      const LocalOperands& local = {});

// The same for a contraction already known to be `shape` (a 1x1 convolution is a matmul).
bool EmitMatmulTiles(ProgramBuilder& builder, const RowProgram& program,
                     const MatmulShape& shape, const ArchConfig& config,
                     const std::vector<uint64_t>& params, int64_t lhs, int64_t rhs,
                     uint64_t result, std::string* why, const LocalOperands& local = {});

}  // namespace systolic::lowering

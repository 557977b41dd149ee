// Emission of a dot, alone or as the core of an output fusion (bias, scale, activation,
// conversion epilogues from row_program.h), on the matrix unit.
//
// For each output tile (batch b, rows m0.., columns n0..) of a MatmulPlan (tiling.h):
//   load:   A block tm x tk and W block tk x tn per k block, plus the epilogue's operand tiles,
//           into UB set t%2 (strided DMA straight from the row-major operands: no copies)
//   mxu:    per k block mxu.ldw into weight buffer (alternating) then mxu.matmul, the first
//           block overwriting and the rest accumulating into accumulator set t%2
//   vector: the epilogue on the accumulator tile (if any)
//   store:  the result tile (from the accumulators when there is no epilogue)
// Tokens: load->mxu, load->vector, mxu->vector (or mxu->store), vector->store, and for the
// reuse of set t%2 by tile t+2: store->load (UB) and vector->mxu or store->mxu (accumulators).
//
// Guarantees: the emitted program computes exactly what the matrix unit's semantics give for
// the dot (functional.h: accumulation in increasing k) followed by the epilogue; it returns
// false with the reason when the dot is not canonical or no tiling fits, emitting nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "targets/systolic/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"
#include "targets/systolic/lowering/tiling.h"

namespace systolic::lowering {

// `program`'s contraction is a dot; `params` are the DRAM addresses of its external
// operands, `lhs` / `rhs` the indices among them of the dot's operands.
bool EmitMatmulFusion(ProgramBuilder& builder, const RowProgram& program,
                      const ArchConfig& config, const std::vector<uint64_t>& params, int64_t lhs,
                      int64_t rhs, uint64_t result, std::string* why);

// The same for a contraction already known to be `shape` (a 1x1 convolution is a matmul).
bool EmitMatmulTiles(ProgramBuilder& builder, const RowProgram& program,
                     const MatmulShape& shape, const ArchConfig& config,
                     const std::vector<uint64_t>& params, int64_t lhs, int64_t rhs,
                     uint64_t result, std::string* why);

}  // namespace systolic::lowering

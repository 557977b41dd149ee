// Emission of row programs (row_program.h) on the vector unit: per-tile buffer planning with
// liveness, the tile's loads, its vector ops and its store, and the double-buffered row-tile
// pipeline of a whole elementwise / reduction fusion.
//
// Guarantees:
//   - PlanTileBuffers allocates each value when it is defined and frees it after its last use
//     (a tile's loads all precede its compute, so they are allocated first); it returns nullopt
//     when the tile does not fit `capacity` bytes.
//   - Emitted vector ops respect the ISA's field widths (20-bit counts are split; rows and cols
//     of a tile are kept <= 65535 by the planner).
//   - EmitRowFusion pipelines tiles through two buffer sets: the load unit fills set t%2 while
//     the vector unit computes the other, ordered by load->vector, vector->store and
//     store->load tokens (the last guards a set's reuse). Signals and waits are balanced.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"
#include "targets/systolic/lowering/scratchpad.h"

namespace systolic::lowering {

// Rows [row0, row0+rows) x columns [col0, col0+cols) of the program's outer x inner matrix.
struct Tile {
  int64_t row0 = 0, rows = 0, col0 = 0, cols = 0;
};

struct TileBuffers {
  std::vector<int64_t> offset;  // per value, bytes from the set's base; -1 in the accumulators
  int64_t footprint = 0;        // bytes one set occupies
};

inline constexpr int64_t kLocalAlignment = 64;
// `bytes` of local memory rounded up to kLocalAlignment.
inline int64_t AlignedLocal(int64_t bytes) { return AlignUp(bytes, kLocalAlignment); }
// A vector dtype whose elements are `bytes` wide (1, 2 or 4), for work that moves bytes without
// reading them as numbers (a fill's bit pattern, a transpose); nullopt for other widths.
std::optional<Dtype> RawDtype(int64_t bytes);
// One of the two double-buffered halves of `bytes` of local memory, aligned down.
inline int64_t AlignedHalf(int64_t bytes) { return bytes / 2 / kLocalAlignment * kLocalAlignment; }

std::optional<TileBuffers> PlanTileBuffers(const RowProgram& program, int64_t rows, int64_t cols,
                                           int64_t capacity);

// `params` are the DRAM addresses of the external operands; `set_base` the UB address of the
// buffer set; `dot_acc` the accumulator address of the dot's tile (output fusions).
// `on_chip`: operands already in the UB (operand index -> address of a copy in their DRAM
// layout), which are read there instead of loaded; the tile must then span whole rows, so a
// full-class tile is contiguous in the copy.
void EmitTileLoads(ProgramBuilder& builder, const RowProgram& program, const TileBuffers& buffers,
                   uint64_t set_base, const Tile& tile, const std::vector<uint64_t>& params,
                   const std::map<int64_t, uint64_t>& on_chip = {});
void EmitTileCompute(ProgramBuilder& builder, const RowProgram& program,
                     const TileBuffers& buffers, uint64_t set_base, const Tile& tile,
                     uint64_t dot_acc, const std::map<int64_t, uint64_t>& on_chip = {});
void EmitTileStore(ProgramBuilder& builder, const RowProgram& program, const TileBuffers& buffers,
                   uint64_t set_base, const Tile& tile, uint64_t result, uint64_t dot_acc);

// Copies the tile of the root value, packed (rows x cols), to local address `dst` on the
// vector unit (one vmov; a few for tiles beyond the 20-bit count field).
void EmitTileCopyToLocal(ProgramBuilder& builder, const RowProgram& program,
                         const TileBuffers& buffers, uint64_t set_base, const Tile& tile,
                         uint64_t dot_acc, uint64_t dst);
// The same copy in pieces of `piece` consecutive elements of the tile, piece i at
// dst + i * dst_stride bytes (a convolution's output rows into a padded layout).
void EmitTileCopyPiecesToLocal(ProgramBuilder& builder, const RowProgram& program,
                               const TileBuffers& buffers, uint64_t set_base, const Tile& tile,
                               uint64_t dot_acc, int64_t piece, uint64_t dst, int64_t dst_stride);

// dst = a OP b over `count` elements (OP a binary vector opcode; split to the count field).
void EmitBinary(ProgramBuilder& builder, Opcode op, uint64_t dst, uint64_t a, uint64_t b,
                int64_t count, Dtype dtype);
// dst = vcvt(src) over `count` elements.
void EmitConvert(ProgramBuilder& builder, uint64_t dst, uint64_t src, int64_t count, Dtype from,
                 Dtype to);
// dst[r][c] = src[c] for `rows` rows of `cols` (vbcast, split by rows; cols at most 65535).
void EmitBroadcastRows(ProgramBuilder& builder, uint64_t dst, uint64_t src, int64_t rows,
                       int64_t cols, Dtype dtype);
// viota of `count` elements (below 2^20, the count field) whose first is row-major index
// `start`: ((start + k) / inner) % modulus as `dtype` (the iota registers written when they
// change).
void EmitViota(ProgramBuilder& builder, uint64_t dst, int64_t count, Dtype dtype, int64_t start,
               int64_t inner, int64_t modulus);
// `count` elements of `dtype` at `dst` set to the bit pattern `bits` (vfill, split to the field).
void EmitFill(ProgramBuilder& builder, uint64_t dst, int64_t count, Dtype dtype, uint32_t bits);
// One vrequant pass of `count` elements with `quant`'s registers (written only when they
// change, split to the count field).
void EmitRequantize(ProgramBuilder& builder, uint64_t dst, uint64_t src, int64_t count,
                    Dtype from, Dtype to, const Requantization& quant);

// A whole fusion without a dot. Returns false (with the reason) when no row tile fits the UB.
bool EmitRowFusion(ProgramBuilder& builder, const RowProgram& program, const ArchConfig& config,
                   const std::vector<uint64_t>& params, uint64_t result, std::string* why,
                   const std::map<int64_t, uint64_t>& on_chip = {});

}  // namespace systolic::lowering

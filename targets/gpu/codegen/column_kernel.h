// Column reductions: a fusion whose root is a reduce over a contiguous run of NON-minor
// dimensions (f32[4096,1024] -> f32[1024] over dim 0), possibly followed by elementwise ops
// (convert back to bf16, divide by a count). Seen as [OUTER, R, C] (the dims before, the
// reduced dims, the dims after, row-major), it runs as a tiled kernel:
//
//     for tile (outer, 32 columns c0..c0+31) in block-stride loop over OUTER x ceil(C / 32):
//       thread (warp w, lane l) folds rows r = w, w + warps, ... of column c0 + l   (coalesced:
//         the 32 lanes of a warp read 32 consecutive elements of one row)
//       partial -> tile[w][l]; bar.sync                   (tile: [32][33], padded: no conflicts)
//       warp w, for columns c = w, w + warps, ...: lane l reads tile[l][c] (the transpose),
//         warp butterfly (shfl.sync.bfly), lane 0 stores the root at (outer, c0 + c)
//       bar.sync                                          (the tile is reused by the next tile)
//
// Guarantees:
//   - PlanColumnKernel accepts only what this schedule computes exactly: one non-variadic reduce
//     of a shuffleable type on row-major shapes, its reduced dims contiguous and not the minor-
//     most, and C > 1; every instruction after it elementwise on the reduce's shape; no other
//     reduce in the fusion. Otherwise nullopt (the caller emits a loop kernel).
//   - Values differ from the sequential fold only by reassociation (per-thread strided partials,
//     then the butterfly); the reducer's init must be its identity, as HLO requires.
//   - Any grid and any block of 32..1024 threads (a multiple of 32) compute the same values.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu::codegen {

struct ColumnKernelPlan {
  int64_t outer = 0;    // product of the dims before the reduced ones
  int64_t reduced = 0;  // product of the reduced dims (R)
  int64_t columns = 0;  // product of the dims after them (C)
  const hlo::Instruction* reduce = nullptr;
};

std::optional<ColumnKernelPlan> PlanColumnKernel(const hlo::Computation& fused);

inline constexpr int64_t kColumnTile = 32;

// Emits `void entry(ptr operand..., ptr output)`; launch with ChooseColumnLaunchDimensions.
void EmitColumnKernel(llvm::Module& module, const std::string& entry,
                      const hlo::Computation& fused, const ColumnKernelPlan& plan,
                      const std::vector<hlo::Shape>& operand_shapes);

// 256-thread blocks (8 warps), one per tile, at most one wave.
LaunchDimensions ChooseColumnLaunchDimensions(const ColumnKernelPlan& plan,
                                              const DeviceLimits& device);

}  // namespace gpu::codegen

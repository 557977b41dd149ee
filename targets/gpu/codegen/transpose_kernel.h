// Tiled transposes through shared memory: a transpose (unfused, or a loop fusion's root, or the
// operand of a row-major reshape/bitcast that is the root: same bytes) that moves
// the operand's minor-most dim (K) away from the output's minor-most position. Read element by
// element, either the loads (strided along K in the output's order) or the stores are
// uncoalesced; through a 32 x 33 tile both are:
//
//     M = the operand dim that becomes the output's minor-most, K = the operand's minor-most,
//     REST = every other dim.  For tile (rest, m0, k0) in block-stride loop:
//       warp w, lane l: rows i = w, w + warps, ... < 32:
//         tile[i][l] = operand[rest, M = m0 + i, K = k0 + l]        (lanes along K: coalesced)
//       bar.sync
//       rows i = w, w + warps, ...:
//         output[permuted(rest, M = m0 + l, K = k0 + i)] = tile[l][i] (lanes along M: coalesced,
//                                                                    the pad column: no conflicts)
//       bar.sync                                           (the next tile rewrites the tile)
//
// Guarantees: PlanTransposeKernel accepts only a transpose root on row-major shapes of a type
// of 1..8 bytes (not pred) with M != K and both at least 16 long (a narrower dim wastes most
// of the tile: the loop kernel is as good); the operand is any fused expression (computed once
// per element, in the read phase). Values are exactly the transpose's (pure data movement).
// Any grid and any block of 32..1024 threads (a multiple of 32) compute the same result.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu::codegen {

struct TransposeKernelPlan {
  int64_t m_dim = 0;  // operand dim that is the output's minor-most
  int64_t k_dim = 0;  // operand's minor-most dim
  std::vector<int64_t> rest_dims;  // the other operand dims, in order
  int64_t rest_count = 1;          // product of their extents
  int64_t tiles_m = 0, tiles_k = 0;
  int64_t Tiles() const { return rest_count * tiles_m * tiles_k; }
};

inline constexpr int64_t kTransposeTile = 32;

// The plan for a transpose instruction: a fusion's root, or an unfused transpose.
std::optional<TransposeKernelPlan> PlanTransposeKernel(const hlo::Instruction& transpose);

// Emits `void entry(ptr operand..., ptr output)`; launch with ChooseTransposeLaunchDimensions.
// With `fused`, `transpose` is its root (or the root's reshaped operand) and the operands are its
// parameters; without, the
// transpose is unfused and its one operand is the kernel's first argument.
void EmitTransposeKernel(llvm::Module& module, const std::string& entry,
                         const hlo::Instruction& transpose, const hlo::Computation* fused,
                         const TransposeKernelPlan& plan,
                         const std::vector<hlo::Shape>& operand_shapes);

// 256-thread blocks, one tile each, at most one wave.
LaunchDimensions ChooseTransposeLaunchDimensions(const TransposeKernelPlan& plan,
                                                 const DeviceLimits& device);

}  // namespace gpu::codegen

// Row kernels: fusions built around reductions over the contiguous (minor-most, row-major)
// dimensions — mean/sum over the last axis, and softmax / layer-norm rows whose reduced values
// are broadcast back over the row — emitted as ONE kernel with one warp per row:
//
//     for row in warp-stride loop over ROWS:
//       for each reduce r, in definition order:        (r may read earlier reduces' values)
//         lane partial over j = lane, lane+32, ... < ROWLEN;  warp butterfly (shfl.sync.bfly)
//       root at the row (lane 0 stores) or at every element of the row (lanes stride over j)
//
// Guarantees:
//   - PlanRowKernel accepts a fusion only when this schedule computes exactly what the fused
//     computation says: every reduce is non-variadic over the trailing dims of a row-major
//     operand, all with the same ROWS x ROWLEN; every instruction that depends on a reduce is
//     row-major and maps row to row (elementwise ops, reshape/bitcast, broadcast appending
//     trailing dims, reduce); the root is an array of ROWS or ROWS x ROWLEN elements. Otherwise
//     it returns nullopt and the caller emits a loop kernel (still correct, one thread per output
//     element).
//   - Values differ from a sequential reduction only by floating-point reassociation (lanes,
//     then the butterfly), as on any parallel reduction.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu_codegen {

struct RowKernelPlan {
  int64_t rows = 0;        // elements of each reduce's result
  int64_t row_length = 0;  // elements each reduce folds per row
  bool root_is_row_shaped = false;
  std::vector<const hlo::Instruction*> reduces;  // definition order
};

// The plan for a fusion's computation, or nullopt when it is not a row kernel.
std::optional<RowKernelPlan> PlanRowKernel(const hlo::Computation& fused);

inline constexpr int kWarpSize = 32;

// Emits `void entry(ptr operand..., ptr output)` for the plan; operands are the fusion's
// parameters in order. Launch: blocks of DeviceLimits::threads_per_block threads, one warp per
// row (ChooseRowLaunchDimensions).
void EmitRowKernel(llvm::Module& module, const std::string& entry, const hlo::Computation& fused,
                   const RowKernelPlan& plan, const std::vector<hlo::Shape>& operand_shapes);

LaunchDimensions ChooseRowLaunchDimensions(int64_t rows, const DeviceLimits& device);

}  // namespace gpu_codegen

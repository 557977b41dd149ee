// Row kernels: fusions built around reductions over the contiguous (minor-most, row-major)
// dimensions — mean/sum over the last axis, and softmax / layer-norm rows whose reduced values
// are broadcast back over the row — emitted as ONE kernel, in one of two schedules:
//
//   warp per row (short rows, many of them):
//     for row in warp-stride loop over ROWS:
//       for each reduce r, in definition order:        (r may read earlier reduces' values)
//         lane partial over j = lane, lane+32, ... < ROWLEN;  warp butterfly (shfl.sync.bfly)
//       root at the row (lane 0 stores) or at every element of the row (lanes stride over j)
//
//   block per row (long rows, or fewer rows than SMs: ChooseRowSchedule):
//     for row in block-stride loop over ROWS:
//       for each reduce r: thread partial over j = tid, tid+ntid, ...; warp butterfly;
//         lane 0 of each warp -> shared[r][warp]; bar.sync; warp 0 butterflies the partials
//         -> shared[r][32]; bar.sync; every thread reads the row's value from shared[r][32]
//       root as above with the block's threads in place of the warp's lanes
//   Shared memory: one [33 x T] array per reduce (32 warp partials + the row's value), so a
//   fast warp starting the next row never overwrites a value a slow warp still has to read.
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

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir.h"
#include "targets/gpu/codegen/loop_kernel.h"
#include "targets/llvm/elemental_emitter.h"

namespace gpu::codegen {

struct RowKernelPlan {
  int64_t rows = 0;        // elements of each reduce's result
  int64_t row_length = 0;  // elements each reduce folds per row
  bool root_is_row_shaped = false;
  std::vector<const hlo::Instruction*> reduces;  // definition order
  bool block_per_row = false;  // set by ChooseRowSchedule
};

// The plan for a fusion's computation, or nullopt when it is not a row kernel.
std::optional<RowKernelPlan> PlanRowKernel(const hlo::Computation& fused);

inline constexpr int kWarpSize = 32;

// Rows longer than this get a block each: a warp would loop more than 32 times per lane.
inline constexpr int64_t kLongRow = 1024;
// Elements each thread of a block-per-row kernel folds, at least (sizes the block).
inline constexpr int64_t kBlockRowElementsPerThread = 8;

// Block per row when the row is long (> kLongRow) or when the rows are fewer than the SMs (one
// warp per row would leave most SMs idle) and each row has work for more than one warp.
void ChooseRowSchedule(RowKernelPlan& plan, const DeviceLimits& device);

// Emits `void entry(ptr operand..., ptr output)` for the plan; operands are the fusion's
// parameters in order. Launch: ChooseRowKernelLaunch (any grid and any block of a multiple of
// 32 threads, at most 1024, computes the same values).
void EmitRowKernel(llvm::Module& module, const std::string& entry, const hlo::Computation& fused,
                   const RowKernelPlan& plan, const std::vector<hlo::Shape>& operand_shapes);

// Blocks of DeviceLimits::threads_per_block threads, one warp per row (also topk's launch).
LaunchDimensions ChooseRowLaunchDimensions(int64_t rows, const DeviceLimits& device);

// The plan's launch: ChooseRowLaunchDimensions for warp per row; for block per row one block per
// row (at most one wave) of ROWLEN / kBlockRowElementsPerThread threads, rounded up to a warp,
// clamped to [128, 1024].
LaunchDimensions ChooseRowKernelLaunch(const RowKernelPlan& plan, const DeviceLimits& device);

// Building blocks shared with the other shared-memory kernels (column_kernel.h):
//
// Whether shfl.sync can move values of `type` (2, 4 or 8 bytes, not pred).
bool Shuffleable(hlo::PrimitiveType type);

// `value` of every lane combined with the other lanes' through a 5-stage shfl.sync.bfly
// butterfly (64-bit values as two 32-bit halves): every lane ends with the warp's reduction.
llvm::Value* WarpButterfly(llvm::IRBuilder<>& b, llvm_codegen::ElementalEmitter& emitter,
                           const hlo::Computation& reducer, llvm::Value* value);

inline constexpr unsigned kSharedAddressSpace = 3;
// A kernel-private variable of `type` in shared memory (addrspace 3), 8-byte aligned,
// undef-initialized as NVPTX requires of .shared variables.
llvm::GlobalVariable* SharedArray(llvm::Module& module, const std::string& name, llvm::Type* type);

}  // namespace gpu::codegen

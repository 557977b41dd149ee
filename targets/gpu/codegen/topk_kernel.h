// topk as one generated kernel: ONE warp per row (rows = all dims but the last), k selection
// rounds per row:
//
//     prev = (+infinity, -1)
//     for r in 0 .. k-1:
//       each lane: best element among j = lane, lane+32, ... that comes strictly after `prev`
//       warp butterfly (shfl.sync.bfly, 5 stages) -> every lane holds the row's best -> prev
//       lane 0 stores values[row, r] (the element's bits, copied) and indices[row, r] = j
//
// "Best" is the interpreter's order (hlo/evaluator_sort.cc): IEEE total order for floats
// (-NaN < -inf < ... < -0 < +0 < ... < +NaN), largest (or smallest) first, ties to the lower
// index. Elements are compared through a 64-bit integer key with the same order, so a round needs
// no per-thread array: no local memory, no shared memory, no atomics, and the result does not
// depend on the grid, the number of lanes or the order lanes run in (deterministic).
// Cost: k * length / 32 loads per lane: meant for the small k of top-k sampling (k <= ~64);
// a large k wants a sort.
//
// Accepts `topk` (k=, largest=) and XLA's custom-call "TopK" (largest first, k from the result
// shape), whose semantics are the same (hlo/evaluator_custom_calls.cc).
//
// Guarantees: element types pred, s8..s64, u8..u32, f16, bf16, f32, f64 (u64 values >= 2^63
// would order wrongly and are refused); the operand and both results row-major; the last
// dimension < 2^31 (s32 indices). Otherwise PlanTopK returns the reason.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <string>
#include <variant>

#include "hlo/ir.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu::codegen {

struct TopKPlan {
  int64_t rows = 0;
  int64_t length = 0;  // elements per row
  int64_t k = 0;
  bool largest = true;
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
};

std::variant<TopKPlan, std::string> PlanTopK(const hlo::Instruction& topk);

// Emits `void entry(ptr input, ptr values, ptr indices)`. Launch with ChooseRowLaunchDimensions
// (one warp per row, grid-strided over rows).
void EmitTopKKernel(llvm::Module& module, const std::string& entry, const TopKPlan& plan);

}  // namespace gpu::codegen

// dynamic-update-slice IN PLACE (the result shares the operand's buffer, as buffer assignment
// arranges for KV-cache style updates): one kernel over the UPDATE's elements only,
//
//     for j in grid-stride loop over the update's elements:
//       output[clamp(start) + j] = update[j]
//
// instead of a loop kernel rewriting every element of the result. Starts are clamped to
// [0, operand_dim - update_dim] (ir.h), scalar per dimension or one rank-1 operand.
// Guarantees: each output element has at most one writer (deterministic); elements outside the
// update's window are not touched, which is correct only because the output already holds the
// operand — callers use it only when the slices are the same.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

#include "hlo/ir.h"

namespace gpu::codegen {

// Emits `void entry(ptr update, ptr start..., ptr output)` (the start operands in order).
// Launch with ChooseLaunchDimensions(update elements); any grid is correct.
void EmitInPlaceUpdateSliceKernel(llvm::Module& module, const std::string& entry,
                                  const hlo::Instruction& dus);

}  // namespace gpu::codegen

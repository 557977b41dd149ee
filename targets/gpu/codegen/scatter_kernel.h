// scatter as one generated kernel applied to the output after it holds the operand (the
// caller copies the operand first unless the buffers are shared):
//
//     for w in this thread's window offsets (grid-stride over the update window's elements):
//       for s in 0 .. scatter positions - 1, in row-major order:       (sequential per thread)
//         start = start_indices at s (not clamped)
//         if the whole window fits at start:        (else the update slice is skipped, ir.h)
//           out[start + w] = update_computation(out[start + w], updates[s, w])
//
// Determinism without atomics: two threads own different window offsets w1 != w2, which differ
// in some operand dimension. When every indexed operand dimension (scatter_dims_to_operand_dims)
// has a window extent of 1 — embedding-gradient and `.at[i].set/add` scatters — starts differ
// only in indexed dimensions, so w1 and w2 can never reach the same element: threads never
// collide, and each element sees its updates in increasing s, the interpreter's order for
// every element. Otherwise (windows overlapping along an indexed dimension) thread 0 applies
// every update element alone (`serial`), s outer and w inner: deterministic, the interpreter's
// order when the update's scatter dims precede its window dims, and slow.
//
// Guarantees: one operand / one update array (not variadic), batching dims (an operand batching
// dim starts at its indices batching dim's scatter position, XLA's rule), integer start
// indices, row-major or any layout (IrArray), any element type the update computation takes;
// otherwise PlanScatter returns the reason.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "hlo/ir.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu::codegen {

struct ScatterPlan {
  std::vector<int64_t> update_scatter_dims;  // update dims that pick a scatter position
  std::vector<int64_t> window_operand_dim;   // per update_window_dims entry: its operand dim
  std::vector<int64_t> window_extent;        // per operand dim (1 for inserted dims)
  int64_t positions = 0;                     // product of the update's scatter dims
  int64_t window_elements = 0;               // product of the update's window dims
  bool serial = false;                       // windows may overlap: thread 0 does everything
};

std::variant<ScatterPlan, std::string> PlanScatter(const hlo::Instruction& scatter);

// Emits `void entry(ptr indices, ptr updates, ptr output)` (the output already holds the
// operand). Launch with ChooseLaunchDimensions(window elements); any grid is correct.
void EmitScatterKernel(llvm::Module& module, const std::string& entry,
                       const hlo::Instruction& scatter, const ScatterPlan& plan);

}  // namespace gpu::codegen

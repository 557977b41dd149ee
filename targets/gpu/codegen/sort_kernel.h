// sort (any number of operands, any comparator computation) as one generated kernel: an
// odd-even transposition sort of each row, one thread block per row, in the outputs (the caller
// copies the operands there first):
//
//     for row in block-stride loop over rows:
//       for phase in 0 .. length-1:
//         for pair i = 2·t + (phase & 1), t = tid, tid+ntid, ...:      (i + 1 < length)
//           if comparator(row[i+1]..., row[i]...): swap elements i and i+1 of every output
//         bar.sync                                                    (block-wide barrier)
//
// Why this algorithm: it is stable (only neighbours that are strictly out of order swap), so
// with a strict weak order it yields exactly the stable sort the interpreter computes (ties keep
// their order; is_stable=false allows any order, this one included), and it needs nothing but
// the comparator, which the shared elemental emitter emits as scalar IR (multi-operand sorts and
// custom comparators included). length phases always suffice. Cost: length² / 2 comparisons
// per row over the block's threads — fine for rows up to a few thousand elements; long rows want
// a merge-based sort (not written).
//
// Guarantees: every operand shares the dims and the kernel is correct for any grid and block
// size (rows and pairs are strided); each element is written only by the thread owning its pair
// in a phase, so results are deterministic; a comparator returning something other than pred
// is an hlo::Error from the emitter.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <string>
#include <variant>

#include "hlo/ir.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu::codegen {

struct SortPlan {
  int64_t rows = 0;
  int64_t length = 0;  // elements along the sorted dimension
  int64_t dimension = 0;
};

std::variant<SortPlan, std::string> PlanSort(const hlo::Instruction& sort);

// Emits `void entry(ptr output0, ..., ptr outputN-1)`, sorting the outputs in place.
void EmitSortKernel(llvm::Module& module, const std::string& entry, const hlo::Instruction& sort,
                    const SortPlan& plan);

// One block per row (at most one wave of blocks), DeviceLimits::threads_per_block threads.
LaunchDimensions ChooseSortLaunchDimensions(const SortPlan& plan, const DeviceLimits& device);

}  // namespace gpu::codegen

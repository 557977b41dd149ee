// sort on the CPU: a runtime merge sort per slice along the sort dimension, driven by the
// comparator computation compiled to a generated function (no evaluator, no literals).
//
// Guarantees:
//   - Every 1-D slice along `dimension` is ordered by a stable bottom-up merge sort that takes
//     the right element only when comparator(right, left) is true: the interpreter's order
//     exactly, for every comparator — also an inconsistent one (IEEE LT with NaNs) — and for
//     is_stable true or false. It never reads outside the slice whatever the comparator says.
//   - Multi-operand sorts permute every operand by the same order; the comparator sees
//     (lhs0, rhs0, lhs1, rhs1, ...) as its parameters, as in HLO.
//   - Covers operands and results sharing one layout (any layout) and every element type the
//     elemental emitter loads; slices run in parallel on the thread pool.
//   - A comparator that is just compare(p0, p1) LT / GT on operand 0 is evaluated natively on
//     (key, index) pairs; where that order is a strict weak one (no NaN under IEEE `<`) any
//     stable sort gives the same permutation, so std::sort on (key, index) is used.
// MakeSortThunk returns nullptr when the comparator cannot be generated (the caller falls
// back to the evaluator).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "hlo/ir.h"
#include "targets/cpu/thunk.h"

namespace cpu {

struct SortLowering {
  std::unique_ptr<Thunk> thunk;
  std::shared_ptr<JitFunction> comparator;  // resolved after the JIT
};

// operands / outputs: buffer ids of the operands and of the result's leaves (one per operand).
// Emits the comparator as `symbol` into `module`.
std::optional<SortLowering> MakeSortThunk(const hlo::Instruction& sort, llvm::Module& module,
                                          const std::string& symbol,
                                          std::vector<int64_t> operands,
                                          std::vector<int64_t> outputs);

}  // namespace cpu

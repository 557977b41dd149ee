// Top-k on the CPU — the "TopK" custom-call and the `topk` op (k=, largest=) — as a runtime
// routine (a partial sort per row) with the interpreter's exact order: IEEE total order (+NaN
// above +inf, -0 below +0), largest (or smallest) first, equal elements by lower index; for
// f32/bf16 operands [batch..., n] in row-major layout and s32 indices. Other forms return
// nullptr (the caller falls back to the evaluator).
#pragma once

#include <memory>

#include "hlo/ir.h"
#include "targets/cpu/thunk.h"

namespace cpu {

// operand: the input buffer; values/indices: the result tuple's leaves.
std::unique_ptr<Thunk> MakeTopKThunk(const hlo::Instruction& call, int64_t operand,
                                     int64_t values, int64_t indices);

}  // namespace cpu

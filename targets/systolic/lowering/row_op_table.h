// The one table from elementwise HLO ops to the vector unit's row ops (row_program.h): which
// HLO op on which element type has an exact vector-unit equivalent, and which instruction(s)
// it becomes. AnalyzeRows consults it; emit_vector.cc expands each RowOpKind.
//
// Guarantees: a mapped op computes what hlo/ir.h defines (divide and sqrt within one ulp: a
// reciprocal (square root) and a multiply); everything else is nullopt with the reason.
#pragma once

#include <optional>
#include <string>

#include "hlo/ir.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

// The row op of elementwise `inst` whose element type is `dtype` (kind, opcode, compare set;
// srcs and dst left to the caller).
std::optional<RowOp> ElementwiseRowOp(const hlo::Instruction& inst, Dtype dtype, std::string* why);
// The same for an opcode alone (`compare` holds a compare's attributes; the default ones
// otherwise): what native_ops.h asks to say which element types an opcode runs on.
std::optional<RowOp> ElementwiseRowOp(hlo::Opcode op, const hlo::CompareAttrs& compare,
                                      Dtype dtype, std::string* why);

// Whether vcvt (round to nearest, saturate) computes HLO's convert from `from` to `to`
// (truncate float -> int, wrap int -> int): on float -> float, int -> float, widening
// s8/u8 -> s32, and to or from pred (0 or 1; x != 0). The requantize idiom
// (requantize_pattern.h) is the other convert it runs.
bool VcvtMatchesConvert(hlo::PrimitiveType from, hlo::PrimitiveType to);

// What a reduce's combiner and init value make of it on the vector unit: a sum from 0 or a max
// from -inf (vredsum / vredmax, column vadd / vmax), and on pred an `and` from true or an `or`
// from false; nullopt for every other reduce. The init operand must be a constant (the caller
// decides what a computed init means).
// kAnd / kOr: a pred reduce with `and` from true or `or` from false (vredmax on the 0/1
// bytes as u8, `and` through two negations).
enum class VectorReducer { kSum, kMax, kAnd, kOr };
std::optional<VectorReducer> VectorReducerOf(const hlo::Instruction& reduce);

// The value of a one-element float constant seen through broadcasts and reshapes, else
// nullopt; `*through` (when given) is set to the instruction the walk stopped at.
std::optional<double> ScalarFloatConstant(const hlo::Instruction* value,
                                          const hlo::Instruction** through = nullptr);
// The powers the vector unit runs: x^2 (vmul) and x^-0.5 (vrsqrt, RMS normalization).
bool VectorPowerExponent(double exponent);

// f32, bf16 or f16: the float types the vector unit holds.
bool IsVectorFloat(Dtype dtype);

// The array.dtypes bit of a matrix-unit input type (0: not an MXU input type).
uint32_t MxuBit(Dtype dtype);

}  // namespace systolic::lowering

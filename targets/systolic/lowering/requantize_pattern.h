// The requantization idiom of quantized models, recognized so the vector unit can run it:
//
//   convert<s8|u8>(clamp(lo, round-nearest-even(x), hi))   with x f32, lo/hi integral constants
//                                                          inside the target type's range
//
// equals vcvt<f32 -> s8|u8>(min(max(x, lo), hi)): clamping to integral bounds commutes with
// rounding, vcvt rounds half to even, and the clamped value is in range so vcvt's saturation
// and HLO's truncation agree; a NaN stays NaN through max/min and both conversions give 0.
// (Plain float -> int converts truncate in HLO and round in vcvt, so they stay on the host.)
#pragma once

#include <functional>
#include <optional>
#include <set>

#include "hlo/ir.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

// The type of the rounded value x: the product of an f32 scale.
inline constexpr hlo::PrimitiveType kRequantizeInputType = hlo::PrimitiveType::kF32;

struct RequantizePattern {
  const hlo::Instruction* value = nullptr;  // x
  double lo = 0, hi = 0;
};

std::optional<RequantizePattern> MatchRequantize(const hlo::Instruction& convert);

// The integer spellings of requantization, each one vrequant in a fixed-point mode:
//
//   convert<s8|u8>(clamp(lo, x, hi))       lo, hi s32 constants inside the target type's range
//   x = add(y, zp) | y                     zp an s32 constant
//   y = convert<s32>(shift-right-arithmetic(add(multiply(convert<s64>(v), M), 2^(n-1)), n))
//         gemmlowp / TFLite single rounding: mode 1 (without the add: floor, mode 2)
//     | shift-right-arithmetic(maximum(v, 0) | v, n)     an integer ReLU and shift: mode 2
//     | v                                                a plain clamp: mode 2, shift 0
//
// with v s32 and M, n constants (either operand order of add, multiply and maximum). Exact
// when no HLO integer wraps, which the match requires: |M| <= 2^(n-1) keeps y within 2^30,
// |zp| < 2^30 keeps x within s32, n <= 62 keeps the s64 product and nudge within 63 bits. The
// maximum with 0 before a monotone shift is the same as a ReLU at the zero point after it.
// `outside` says which instructions belong to another computation or op (never walked through);
// `resolve` maps an operand to the instruction computing it (row_program.h's Substitution).
struct IntegerRequantizePattern {
  const hlo::Instruction* value = nullptr;  // v
  Requantization quant;                     // a fixed-point mode, multiplier, shift, zp, relu
  double lo = 0, hi = 0;
  std::set<const hlo::Instruction*> steps;  // the idiom's instructions, the convert included
};

std::optional<IntegerRequantizePattern> MatchIntegerRequantize(
    const hlo::Instruction& convert,
    const std::function<bool(const hlo::Instruction*)>& outside = {},
    const std::function<const hlo::Instruction*(const hlo::Instruction*)>& resolve = {});

}  // namespace systolic::lowering

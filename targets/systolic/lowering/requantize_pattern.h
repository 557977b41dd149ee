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

#include <optional>

#include "hlo/ir.h"

namespace systolic::lowering {

// The type of the rounded value x: the product of an f32 scale.
inline constexpr hlo::PrimitiveType kRequantizeInputType = hlo::PrimitiveType::kF32;

struct RequantizePattern {
  const hlo::Instruction* value = nullptr;  // x
  double lo = 0, hi = 0;
};

std::optional<RequantizePattern> MatchRequantize(const hlo::Instruction& convert);

}  // namespace systolic::lowering

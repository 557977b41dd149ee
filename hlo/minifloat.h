// The 8-bit and 4-bit floating-point types XLA prints (f8e5m2, f8e4m3fn, f8e4m3, f8e3m4,
// f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz, f4e2m1fn, f8e8m0fnu): one table of their formats and one
// pair of conversions for all of them.
//
// Guarantees: MinifloatToDouble is exact for every bit pattern. DoubleToMinifloat rounds to
// nearest, ties to even, as XLA's convert and ml_dtypes do; what happens beyond the largest
// finite value depends on the format's special values:
//   kIeee          infinity exists: overflow gives ±inf, NaN stays NaN (sign kept).
//   kFiniteNanOnly (the "fn" suffix) no infinity; the all-ones pattern is NaN: overflow and ±inf
//                  give NaN, like ml_dtypes' non-saturating conversion.
//   kUnsignedZero  (the "fnuz" suffix) no infinity, no -0; 0x80 is the only NaN: overflow, ±inf
//                  and NaN give 0x80, -0 gives +0.
//   kNoSpecials    (f4e2m1fn) no infinity, no NaN: overflow and ±inf saturate at the largest
//                  finite value, NaN gives +0 (ml_dtypes' choice, checked in the tests).
//   kExponentOnly  (f8e8m0fnu) no sign, no mantissa, no zero: 2^(bits - 127), 0xff is NaN;
//                  values at or below zero, inf and NaN give NaN; values below the smallest
//                  power round up to it.
#pragma once

#include <cstdint>
#include <optional>

#include "hlo/shape.h"

// The case labels of every minifloat type, for exhaustive switches over PrimitiveType that treat
// them alike.
#define RETARGET_MINIFLOAT_CASES                       \
  case ::hlo::PrimitiveType::kF8E5M2:                  \
  case ::hlo::PrimitiveType::kF8E4M3FN:                \
  case ::hlo::PrimitiveType::kF8E4M3B11FNUZ:           \
  case ::hlo::PrimitiveType::kF8E5M2FNUZ:              \
  case ::hlo::PrimitiveType::kF8E4M3FNUZ:              \
  case ::hlo::PrimitiveType::kF8E4M3:                  \
  case ::hlo::PrimitiveType::kF8E3M4:                  \
  case ::hlo::PrimitiveType::kF4E2M1FN:                \
  case ::hlo::PrimitiveType::kF8E8M0FNU

namespace hlo {

enum class MinifloatSpecials : uint8_t {
  kIeee,
  kFiniteNanOnly,
  kUnsignedZero,
  kNoSpecials,
  kExponentOnly,
};

struct MinifloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;  // value = 2^(exponent field - bias) x 1.mantissa for normal numbers
  MinifloatSpecials specials;
};

// The format of a minifloat element type; nullopt for every other type. The one table of the
// formats (constexpr, so the evaluator's compile-time type traits read it too).
constexpr std::optional<MinifloatFormat> MinifloatFormatOf(PrimitiveType type) {
  using S = MinifloatSpecials;
  switch (type) {
    case PrimitiveType::kF8E5M2: return MinifloatFormat{5, 2, 15, S::kIeee};
    case PrimitiveType::kF8E4M3: return MinifloatFormat{4, 3, 7, S::kIeee};
    case PrimitiveType::kF8E3M4: return MinifloatFormat{3, 4, 3, S::kIeee};
    case PrimitiveType::kF8E4M3FN: return MinifloatFormat{4, 3, 7, S::kFiniteNanOnly};
    case PrimitiveType::kF8E4M3FNUZ: return MinifloatFormat{4, 3, 8, S::kUnsignedZero};
    case PrimitiveType::kF8E5M2FNUZ: return MinifloatFormat{5, 2, 16, S::kUnsignedZero};
    case PrimitiveType::kF8E4M3B11FNUZ: return MinifloatFormat{4, 3, 11, S::kUnsignedZero};
    case PrimitiveType::kF4E2M1FN: return MinifloatFormat{2, 1, 1, S::kNoSpecials};
    case PrimitiveType::kF8E8M0FNU: return MinifloatFormat{8, 0, 127, S::kExponentOnly};
    default: return std::nullopt;
  }
}
constexpr bool IsMinifloat(PrimitiveType type) { return MinifloatFormatOf(type).has_value(); }

double MinifloatToDouble(const MinifloatFormat& format, uint8_t bits);
uint8_t DoubleToMinifloat(const MinifloatFormat& format, double value);

// The largest finite value of the format.
double MinifloatMax(const MinifloatFormat& format);

}  // namespace hlo

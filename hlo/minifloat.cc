#include "hlo/minifloat.h"

#include <cmath>
#include <limits>

namespace hlo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

int MaxExponentField(const MinifloatFormat& f) { return (1 << f.exponent_bits) - 1; }
int MantissaMask(const MinifloatFormat& f) { return (1 << f.mantissa_bits) - 1; }
int SignBit(const MinifloatFormat& f) { return 1 << (f.exponent_bits + f.mantissa_bits); }

// The bit pattern a NaN converts to (the format has one, or the caller handled its absence).
uint8_t NanBits(const MinifloatFormat& f, bool negative) {
  switch (f.specials) {
    case MinifloatSpecials::kIeee:
    case MinifloatSpecials::kFiniteNanOnly: {
      const int all_ones = (MaxExponentField(f) << f.mantissa_bits) | MantissaMask(f);
      return static_cast<uint8_t>(all_ones | (negative ? SignBit(f) : 0));
    }
    case MinifloatSpecials::kUnsignedZero: return 0x80;
    case MinifloatSpecials::kExponentOnly: return 0xff;
    case MinifloatSpecials::kNoSpecials: break;
  }
  return 0;
}

// Encodes |value| (finite, representable after rounding, > 0) without the sign.
uint8_t EncodeMagnitude(const MinifloatFormat& f, double value) {
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m x 2^exponent, m in [0.5, 1)
  const int unbiased = exponent - 1;
  const int min_normal = 1 - f.bias;
  if (unbiased < min_normal) {  // subnormal: exponent field 0
    const double quantum = std::ldexp(1.0, min_normal - f.mantissa_bits);
    return static_cast<uint8_t>(value / quantum);
  }
  const double fraction = std::ldexp(value, -unbiased) - 1.0;  // in [0, 1)
  const int mantissa = static_cast<int>(std::ldexp(fraction, f.mantissa_bits));
  return static_cast<uint8_t>(((unbiased + f.bias) << f.mantissa_bits) | mantissa);
}

uint8_t DoubleToExponentOnly(double value) {
  if (!(value > 0) || std::isinf(value)) return 0xff;
  int exponent = 0;
  const double m = std::frexp(value, &exponent);  // m in [0.5, 1): value in [2^(e-1), 2^e)
  // Nearest power of two, ties (m = 0.75) upward, as ml_dtypes rounds this format.
  int power = m >= 0.75 ? exponent : exponent - 1;
  if (power < -127) power = -127;
  if (power > 127) return 0xff;
  return static_cast<uint8_t>(power + 127);
}

}  // namespace

double MinifloatToDouble(const MinifloatFormat& f, uint8_t bits) {
  if (f.specials == MinifloatSpecials::kExponentOnly) {
    return bits == 0xff ? kNaN : std::ldexp(1.0, bits - 127);
  }
  const int width = f.exponent_bits + f.mantissa_bits + 1;
  bits = static_cast<uint8_t>(bits & ((1 << width) - 1));
  const bool negative = (bits & SignBit(f)) != 0;
  const int exponent = (bits >> f.mantissa_bits) & MaxExponentField(f);
  const int mantissa = bits & MantissaMask(f);
  switch (f.specials) {
    case MinifloatSpecials::kIeee:
      if (exponent == MaxExponentField(f)) {
        if (mantissa != 0) return negative ? -kNaN : kNaN;
        return negative ? -kInf : kInf;
      }
      break;
    case MinifloatSpecials::kFiniteNanOnly:
      if (exponent == MaxExponentField(f) && mantissa == MantissaMask(f))
        return negative ? -kNaN : kNaN;
      break;
    case MinifloatSpecials::kUnsignedZero:
      if (bits == 0x80) return kNaN;
      break;
    case MinifloatSpecials::kNoSpecials:
    case MinifloatSpecials::kExponentOnly:
      break;
  }
  double magnitude = exponent == 0
                         ? std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits)
                         : std::ldexp((1 << f.mantissa_bits) | mantissa,
                                      exponent - f.bias - f.mantissa_bits);
  return negative ? -magnitude : magnitude;
}

double MinifloatMax(const MinifloatFormat& f) {
  // The largest finite pattern: the top exponent with a full mantissa, except where that
  // exponent holds inf/NaN (one exponent lower) or the full mantissa is NaN (one less).
  int exponent = MaxExponentField(f), mantissa = MantissaMask(f);
  switch (f.specials) {
    case MinifloatSpecials::kIeee: exponent -= 1; break;
    case MinifloatSpecials::kFiniteNanOnly: mantissa -= 1; break;
    case MinifloatSpecials::kUnsignedZero:
    case MinifloatSpecials::kNoSpecials: break;
    case MinifloatSpecials::kExponentOnly: return std::ldexp(1.0, 127);
  }
  return MinifloatToDouble(f, static_cast<uint8_t>((exponent << f.mantissa_bits) | mantissa));
}

uint8_t DoubleToMinifloat(const MinifloatFormat& f, double value) {
  if (f.specials == MinifloatSpecials::kExponentOnly) return DoubleToExponentOnly(value);
  const bool negative = std::signbit(value);
  const uint8_t sign = static_cast<uint8_t>(negative ? SignBit(f) : 0);
  if (std::isnan(value)) {
    // ml_dtypes turns a NaN into a zero whose sign is the NaN's inverted; kept for agreement.
    if (f.specials == MinifloatSpecials::kNoSpecials)
      return static_cast<uint8_t>(negative ? 0 : SignBit(f));
    return NanBits(f, negative);
  }
  const double max = MinifloatMax(f);
  double magnitude = std::fabs(value);
  if (!std::isinf(magnitude)) {
    // Round to the format's quantum at this magnitude, ties to even (nearbyint's default mode).
    int exponent = 0;
    std::frexp(magnitude, &exponent);
    const int min_normal = 1 - f.bias;
    const int scale = std::max(exponent - 1, min_normal) - f.mantissa_bits;
    magnitude = std::ldexp(std::nearbyint(std::ldexp(magnitude, -scale)), scale);
  }
  if (magnitude > max) {
    switch (f.specials) {
      case MinifloatSpecials::kIeee:
        return static_cast<uint8_t>(sign | (MaxExponentField(f) << f.mantissa_bits));
      case MinifloatSpecials::kFiniteNanOnly:
      case MinifloatSpecials::kUnsignedZero:
        return NanBits(f, negative);
      case MinifloatSpecials::kNoSpecials:
        magnitude = max;
        break;
      case MinifloatSpecials::kExponentOnly:
        break;
    }
  }
  if (magnitude == 0) {
    return f.specials == MinifloatSpecials::kUnsignedZero ? 0 : sign;  // fnuz has no -0
  }
  return static_cast<uint8_t>(sign | EncodeMagnitude(f, magnitude));
}

}  // namespace hlo

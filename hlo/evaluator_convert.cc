// convert, bitcast-convert and reduce-precision.
//
// Guarantees (ir.h):
//  - convert: float -> integer truncates toward zero and saturates at the target's bounds, NaN
//    becomes 0; integer -> integer wraps; anything -> pred is `!= 0` (so NaN -> true); pred ->
//    anything is 0 or 1; to bf16/f16 rounds to nearest even (f64 goes through f32 first, as
//    Literal::SetFromDouble does); to the 8-/4-bit floats rounds once from the exact value
//    (minifloat.h); to s4/u4 from floats saturates at the 4-bit bounds, from integers wraps;
//    real -> complex gives (value, 0), complex -> real is refused (take real or imag).
//  - bitcast-convert copies the bytes: literals hold row-major data, so when the widths differ
//    the (little-endian) narrow elements along the result's/operand's extra last dimension
//    form one wide element, which is XLA's definition.
//  - reduce-precision follows XLA: round the mantissa to nearest even, then values whose
//    exponent is too large become ±inf and too small become ±0; NaN stays NaN, also with
//    mantissa_bits=0 (checked against XLA:CPU through jax 0.10.2).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "hlo/evaluator_elementwise_internal.h"

namespace hlo::eval {
namespace {

template <typename I, typename C>
I SaturateToInteger(C value) {
  double v = static_cast<double>(value);  // exact for every float type
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) {
    return std::numeric_limits<I>::lowest();
  }
  // max() rounds up to a power of two as a double for 32/64-bit types, so >= is the right test.
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <PrimitiveType From, PrimitiveType To>
typename ElementTraits<To>::Storage ConvertOne(typename ElementTraits<From>::Storage stored) {
  using Source = ElementTraits<From>;
  using Target = ElementTraits<To>;
  using Out = typename Target::Storage;
  auto value = Source::Load(stored);
  if constexpr (To == PrimitiveType::kPred) {
    return value != 0;
  } else if constexpr (From == PrimitiveType::kPred) {
    return Target::Store(static_cast<typename Target::Compute>(value != 0));
  } else if constexpr (kIsFloatType<From> && kIsNibbleType<To>) {
    constexpr int kLow = To == PrimitiveType::kS4 ? -8 : 0;
    constexpr int kHigh = To == PrimitiveType::kS4 ? 7 : 15;
    return static_cast<Out>(std::clamp<int>(SaturateToInteger<int16_t>(value), kLow, kHigh));
  } else if constexpr (kIsFloatType<From> && kIsIntType<To>) {
    return SaturateToInteger<Out>(value);
  } else if constexpr (kIsMinifloatType<To>) {
    return DoubleToMinifloat(Target::Format(), static_cast<double>(value));  // one rounding
  } else if constexpr (To == PrimitiveType::kF64) {
    return static_cast<double>(value);
  } else if constexpr (kIsFloatType<To>) {
    return Target::Store(static_cast<float>(value));
  } else {
    // integer -> integer: modular (C++20 defines it); 4-bit targets wrap on store.
    return Target::Store(static_cast<typename Target::Compute>(value));
  }
}

template <PrimitiveType From, PrimitiveType To>
void ConvertTyped(const Literal& in, Literal& out) {
  auto src = in.data<typename ElementTraits<From>::Storage>();
  auto dst = out.mutable_data<typename ElementTraits<To>::Storage>();
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = ConvertOne<From, To>(src[i]);
}

// XLA's reduce-precision on the bit pattern of a float with `kMantissa` explicit mantissa bits
// and `kExponent` exponent bits (Bits is the unsigned integer of the same width).
template <typename Bits, typename Float, int kExponent, int kMantissa>
Float ReducePrecision(Float input, int exponent_bits, int mantissa_bits) {
  constexpr int kTotal = sizeof(Bits) * 8;
  Bits bits = std::bit_cast<Bits>(input);
  if (mantissa_bits < kMantissa) {
    const int dropped = kMantissa - mantissa_bits;
    const Bits last_kept_bit = Bits{1} << dropped;
    const Bits base_bias = (last_kept_bit >> 1) - 1;
    const Bits kept_lsb = (bits & last_kept_bit) >> dropped;
    bits = (bits + kept_lsb + base_bias) & ~(last_kept_bit - 1);  // round half to even
  }
  if (exponent_bits < kExponent) {
    const Bits sign_mask = Bits{1} << (kTotal - 1);
    const Bits exponent_mask = ((Bits{1} << kExponent) - 1) << kMantissa;
    const int64_t bias = (int64_t{1} << (kExponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const Bits max_exponent = static_cast<Bits>(bias + reduced_bias) << kMantissa;
    const Bits min_exponent = static_cast<Bits>(bias - reduced_bias) << kMantissa;
    const Bits exponent = bits & exponent_mask;
    const Bits signed_zero = bits & sign_mask;
    if (exponent > max_exponent) {
      bits = signed_zero | exponent_mask;  // ±inf
    } else if (exponent <= min_exponent) {
      bits = signed_zero;
    }
  }
  // NaN stays NaN even with no mantissa bit left (what XLA's CPU backend returns; the bit
  // manipulation above would have turned it into inf or a different payload).
  if (std::isnan(input)) return input;
  return std::bit_cast<Float>(bits);
}

}  // namespace

void ConvertElements(const Literal& in, Literal& out) {
  if (IsComplex(out.shape().type)) {  // real -> (value, 0); c64 <-> c128 per part
    for (int64_t i = 0; i < out.element_count(); ++i) out.SetComplex(i, in.GetComplex(i));
    return;
  }
  if (IsComplex(in.shape().type)) {
    throw Error("convert from complex " + std::string(PrimitiveTypeName(in.shape().type)) +
                " to " + std::string(PrimitiveTypeName(out.shape().type)) +
                " is not defined (take real or imag first)");
  }
  DispatchArrayType(in.shape().type, [&](auto from) {
    DispatchArrayType(out.shape().type, [&](auto to) {
      ConvertTyped<decltype(from)::value, decltype(to)::value>(in, out);
    });
  });
}

void BitcastConvertElements(const Literal& in, Literal& out) {
  if (in.bytes().size() != out.bytes().size()) {
    throw Error("bitcast-convert from " + in.shape().ToString(false) + " to " +
                out.shape().ToString(false) + " changes the size in bytes");
  }
  if (!out.bytes().empty()) std::memcpy(out.mutable_bytes().data(), in.bytes().data(), out.bytes().size());
}

void ReducePrecisionElements(const ReducePrecisionAttrs& attrs, const Literal& in, Literal& out) {
  const int64_t exponent_bits = attrs.exponent_bits;
  const int64_t mantissa_bits = attrs.mantissa_bits;
  const PrimitiveType type = out.shape().type;
  const int64_t max_exponent = type == PrimitiveType::kF64 ? 11 : 8;
  const int64_t max_mantissa = type == PrimitiveType::kF64 ? 52 : 23;
  if (exponent_bits < 1 || mantissa_bits < 0) {
    throw Error("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got " +
                std::to_string(exponent_bits) + " and " + std::to_string(mantissa_bits));
  }
  // More bits than the type has change nothing.
  const int e = static_cast<int>(std::min(exponent_bits, max_exponent));
  const int m = static_cast<int>(std::min(mantissa_bits, max_mantissa));
  DispatchArrayType(type, [&](auto t) {
    constexpr PrimitiveType P = decltype(t)::value;
    if constexpr (P == PrimitiveType::kF64) {
      MapUnary<P, P>(in, out, [&](double x) {
        return ReducePrecision<uint64_t, double, 11, 52>(x, e, m);
      });
    } else if constexpr (kIsFloatType<P>) {
      // f16/bf16 values are exact in f32; the reduced value is rounded again on store, which
      // is exact whenever the requested format fits in the storage type.
      MapUnary<P, P>(in, out, [&](float x) {
        return ReducePrecision<uint32_t, float, 8, 23>(x, e, m);
      });
    } else {
      ThrowUnsupported(Opcode::kReducePrecision, P);
    }
  });
}

}  // namespace hlo::eval

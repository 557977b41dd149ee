// Element-type plumbing for the evaluator's family files (internal to hlo/).
//
// Guarantees: DispatchArrayType calls its functor with a compile-time PrimitiveType for every
// real array type of types.def (exhaustive switch, no default) and throws hlo::Error for
// tuple/token and for complex types (handled by evaluator_complex.cc).
// ElementTraits<P> names the C++ storage type (as literal.h stores it) and the compute type
// arithmetic uses: bf16/f16 compute in float and round to nearest even on store (ir.h), so the
// hot loops below never go through Literal::GetAsDouble.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>

#include "hlo/literal.h"
#include "hlo/minifloat.h"
#include "hlo/shape.h"

namespace hlo::eval {

template <PrimitiveType P>
struct ElementTraits;

#define RETARGET_INT_TRAITS(P, T)                          \
  template <>                                              \
  struct ElementTraits<PrimitiveType::P> {                 \
    using Storage = T;                                     \
    using Compute = T;                                     \
    static Compute Load(Storage s) { return s; }           \
    static Storage Store(Compute c) { return c; }          \
  };
RETARGET_INT_TRAITS(kS8, int8_t)
RETARGET_INT_TRAITS(kS16, int16_t)
RETARGET_INT_TRAITS(kS32, int32_t)
RETARGET_INT_TRAITS(kS64, int64_t)
RETARGET_INT_TRAITS(kU8, uint8_t)
RETARGET_INT_TRAITS(kU16, uint16_t)
RETARGET_INT_TRAITS(kU32, uint32_t)
RETARGET_INT_TRAITS(kU64, uint64_t)
#undef RETARGET_INT_TRAITS

// pred is stored as one byte holding 0 or 1 (literal.h); uint8_t avoids bool's trap values.
template <>
struct ElementTraits<PrimitiveType::kPred> {
  using Storage = uint8_t;
  using Compute = uint8_t;
  static Compute Load(Storage s) { return s; }
  static Storage Store(Compute c) { return c != 0; }
};
template <>
struct ElementTraits<PrimitiveType::kF32> {
  using Storage = float;
  using Compute = float;
  static Compute Load(Storage s) { return s; }
  static Storage Store(Compute c) { return c; }
};
template <>
struct ElementTraits<PrimitiveType::kF64> {
  using Storage = double;
  using Compute = double;
  static Compute Load(Storage s) { return s; }
  static Storage Store(Compute c) { return c; }
};
// bf16 <-> f32 inline for the hot loops: bit-identical to literal.h's BF16ToFloat and
// FloatToBF16 (round to nearest even; NaN stays a quiet NaN with its sign). The
// evaluator_elementwise test checks ties, overflow and NaN against those definitions.
template <>
struct ElementTraits<PrimitiveType::kBF16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute Load(Storage s) { return std::bit_cast<float>(static_cast<uint32_t>(s) << 16); }
  static Storage Store(Compute c) {
    const uint32_t bits = std::bit_cast<uint32_t>(c);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040);
    return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
};
template <>
struct ElementTraits<PrimitiveType::kF16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute Load(Storage s) { return F16ToFloat(s); }
  static Storage Store(Compute c) { return FloatToF16(c); }
};

// s4 / u4: one value per byte; arithmetic in 8 bits, wrapped to 4 bits on store.
template <>
struct ElementTraits<PrimitiveType::kS4> {
  using Storage = int8_t;
  using Compute = int8_t;
  static Compute Load(Storage s) { return s; }
  static Storage Store(Compute c) { return WrapS4(c); }
};
template <>
struct ElementTraits<PrimitiveType::kU4> {
  using Storage = uint8_t;
  using Compute = uint8_t;
  static Compute Load(Storage s) { return s; }
  static Storage Store(Compute c) { return WrapU4(c); }
};

// The 8-bit and 4-bit floats compute in float and round to their format on store (minifloat.h),
// as bf16 does.
template <PrimitiveType P>
struct MinifloatTraits {
  using Storage = uint8_t;
  using Compute = float;
  static constexpr MinifloatFormat Format() { return *MinifloatFormatOf(P); }
  static Compute Load(Storage s) { return static_cast<float>(MinifloatToDouble(Format(), s)); }
  static Storage Store(Compute c) { return DoubleToMinifloat(Format(), c); }
};
#define RETARGET_MINIFLOAT_TRAITS(P) \
  template <>                        \
  struct ElementTraits<PrimitiveType::P> : MinifloatTraits<PrimitiveType::P> {};
RETARGET_MINIFLOAT_TRAITS(kF8E5M2)
RETARGET_MINIFLOAT_TRAITS(kF8E4M3FN)
RETARGET_MINIFLOAT_TRAITS(kF8E4M3B11FNUZ)
RETARGET_MINIFLOAT_TRAITS(kF8E5M2FNUZ)
RETARGET_MINIFLOAT_TRAITS(kF8E4M3FNUZ)
RETARGET_MINIFLOAT_TRAITS(kF8E4M3)
RETARGET_MINIFLOAT_TRAITS(kF8E3M4)
RETARGET_MINIFLOAT_TRAITS(kF4E2M1FN)
RETARGET_MINIFLOAT_TRAITS(kF8E8M0FNU)
#undef RETARGET_MINIFLOAT_TRAITS

template <PrimitiveType P>
using TypeConstant = std::integral_constant<PrimitiveType, P>;

template <PrimitiveType P>
inline constexpr bool kIsMinifloatType = IsMinifloat(P);
template <PrimitiveType P>
inline constexpr bool kIsFloatType = P == PrimitiveType::kF16 || P == PrimitiveType::kBF16 ||
                                     P == PrimitiveType::kF32 || P == PrimitiveType::kF64 ||
                                     kIsMinifloatType<P>;
template <PrimitiveType P>
inline constexpr bool kIsNibbleType = P == PrimitiveType::kS4 || P == PrimitiveType::kU4;
template <PrimitiveType P>
inline constexpr bool kIsIntType = !kIsFloatType<P> && P != PrimitiveType::kPred;

// Calls fn(TypeConstant<P>{}) for the array type `type`.
template <typename Fn>
decltype(auto) DispatchArrayType(PrimitiveType type, Fn&& fn) {
  switch (type) {
    case PrimitiveType::kPred: return fn(TypeConstant<PrimitiveType::kPred>{});
    case PrimitiveType::kS8: return fn(TypeConstant<PrimitiveType::kS8>{});
    case PrimitiveType::kS16: return fn(TypeConstant<PrimitiveType::kS16>{});
    case PrimitiveType::kS32: return fn(TypeConstant<PrimitiveType::kS32>{});
    case PrimitiveType::kS64: return fn(TypeConstant<PrimitiveType::kS64>{});
    case PrimitiveType::kU8: return fn(TypeConstant<PrimitiveType::kU8>{});
    case PrimitiveType::kU16: return fn(TypeConstant<PrimitiveType::kU16>{});
    case PrimitiveType::kU32: return fn(TypeConstant<PrimitiveType::kU32>{});
    case PrimitiveType::kU64: return fn(TypeConstant<PrimitiveType::kU64>{});
    case PrimitiveType::kF16: return fn(TypeConstant<PrimitiveType::kF16>{});
    case PrimitiveType::kF32: return fn(TypeConstant<PrimitiveType::kF32>{});
    case PrimitiveType::kF64: return fn(TypeConstant<PrimitiveType::kF64>{});
    case PrimitiveType::kBF16: return fn(TypeConstant<PrimitiveType::kBF16>{});
    case PrimitiveType::kS4: return fn(TypeConstant<PrimitiveType::kS4>{});
    case PrimitiveType::kU4: return fn(TypeConstant<PrimitiveType::kU4>{});
    case PrimitiveType::kF8E5M2: return fn(TypeConstant<PrimitiveType::kF8E5M2>{});
    case PrimitiveType::kF8E4M3FN: return fn(TypeConstant<PrimitiveType::kF8E4M3FN>{});
    case PrimitiveType::kF8E4M3B11FNUZ: return fn(TypeConstant<PrimitiveType::kF8E4M3B11FNUZ>{});
    case PrimitiveType::kF8E5M2FNUZ: return fn(TypeConstant<PrimitiveType::kF8E5M2FNUZ>{});
    case PrimitiveType::kF8E4M3FNUZ: return fn(TypeConstant<PrimitiveType::kF8E4M3FNUZ>{});
    case PrimitiveType::kF8E4M3: return fn(TypeConstant<PrimitiveType::kF8E4M3>{});
    case PrimitiveType::kF8E3M4: return fn(TypeConstant<PrimitiveType::kF8E3M4>{});
    case PrimitiveType::kF4E2M1FN: return fn(TypeConstant<PrimitiveType::kF4E2M1FN>{});
    case PrimitiveType::kF8E8M0FNU: return fn(TypeConstant<PrimitiveType::kF8E8M0FNU>{});
    // Complex values have their own paths (evaluator_complex.cc); the typed families do not
    // instantiate for them.
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
      throw Error("this operation is not defined for complex element type " +
                  std::string(PrimitiveTypeName(type)));
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken:
      break;
  }
  throw Error("expected an array element type, got " + std::string(PrimitiveTypeName(type)));
}

}  // namespace hlo::eval

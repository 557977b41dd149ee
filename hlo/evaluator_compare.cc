// compare: pred result from two operands of any array type.
//
// Guarantees (ir.h): floats compare by IEEE-754 (NaN is unordered: only NE is true) unless
// type=TOTALORDER, where -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN, decided on the bit
// patterns. Integers compare by their type's signedness; an explicit SIGNED/UNSIGNED type
// reinterprets the bits accordingly. pred compares as 0 < 1.
#include <bit>
#include <cmath>
#include <complex>
#include <limits>
#include <tuple>
#include <type_traits>

#include "hlo/evaluator_elementwise_internal.h"

namespace hlo::eval {
namespace {

template <typename K>
uint8_t Decide(ComparisonDirection direction, K a, K b) {
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kGe: return a >= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kLt: return a < b;
  }
  return 0;
}

// Maps a float's bit pattern to a signed integer whose order is the IEEE total order: negative
// values have their magnitude bits flipped so that larger magnitudes sort lower.
template <typename Bits>
std::make_signed_t<Bits> TotalOrderKey(Bits bits) {
  using S = std::make_signed_t<Bits>;
  S s = static_cast<S>(bits);
  return s < 0 ? static_cast<S>(s ^ std::numeric_limits<S>::max()) : s;
}

// Total-order key of a minifloat from its value: the formats differ in where (and whether) the
// sign, NaN and -0 sit in the bits, so the order is decided on values. NaN's sign puts it at
// either end, -0 before +0.
template <PrimitiveType P>
std::tuple<int, double, int> MinifloatTotalOrderKey(uint8_t bits) {
  const double v = ElementTraits<P>::Load(bits);
  if (std::isnan(v)) return {std::signbit(v) ? -1 : 1, 0.0, 0};
  return {0, v, std::signbit(v) ? 0 : 1};
}

template <PrimitiveType P>
void CompareTyped(const CompareAttrs& attrs, const Literal& a, const Literal& b, Literal& out) {
  using T = ElementTraits<P>;
  using Storage = typename T::Storage;
  auto lhs = a.data<Storage>();
  auto rhs = b.data<Storage>();
  auto dst = out.mutable_data<uint8_t>();
  const ComparisonDirection dir = attrs.direction;
  if constexpr (kIsFloatType<P>) {
    if (attrs.type == ComparisonType::kTotalOrder) {
      if constexpr (kIsMinifloatType<P>) {
        for (size_t i = 0; i < dst.size(); ++i) {
          dst[i] =
              Decide(dir, MinifloatTotalOrderKey<P>(lhs[i]), MinifloatTotalOrderKey<P>(rhs[i]));
        }
      } else {
        using Bits =
            std::conditional_t<sizeof(Storage) == 2, uint16_t,
                               std::conditional_t<sizeof(Storage) == 4, uint32_t, uint64_t>>;
        for (size_t i = 0; i < dst.size(); ++i) {
          dst[i] = Decide(dir, TotalOrderKey(std::bit_cast<Bits>(lhs[i])),
                          TotalOrderKey(std::bit_cast<Bits>(rhs[i])));
        }
      }
      return;
    }
    for (size_t i = 0; i < dst.size(); ++i) dst[i] = Decide(dir, T::Load(lhs[i]), T::Load(rhs[i]));
  } else if constexpr (P == PrimitiveType::kPred) {
    for (size_t i = 0; i < dst.size(); ++i) dst[i] = Decide(dir, lhs[i] != 0, rhs[i] != 0);
  } else {
    if (attrs.type == ComparisonType::kUnsigned) {
      using U = std::make_unsigned_t<Storage>;
      for (size_t i = 0; i < dst.size(); ++i) {
        dst[i] = Decide(dir, static_cast<U>(lhs[i]), static_cast<U>(rhs[i]));
      }
    } else if (attrs.type == ComparisonType::kSigned) {
      using S = std::make_signed_t<Storage>;
      for (size_t i = 0; i < dst.size(); ++i) {
        dst[i] = Decide(dir, static_cast<S>(lhs[i]), static_cast<S>(rhs[i]));
      }
    } else {
      for (size_t i = 0; i < dst.size(); ++i) dst[i] = Decide(dir, lhs[i], rhs[i]);
    }
  }
}

}  // namespace

void CompareElements(const CompareAttrs& attrs, const Literal& a, const Literal& b, Literal& out) {
  if (out.shape().type != PrimitiveType::kPred) {
    throw Error("compare must produce pred, not " + std::string(PrimitiveTypeName(out.shape().type)));
  }
  if (IsComplex(a.shape().type)) {  // only EQ and NE are defined (the verifier checks)
    if (attrs.direction != ComparisonDirection::kEq && attrs.direction != ComparisonDirection::kNe)
      throw Error("compare of complex values is defined only for EQ and NE");
    const bool want_equal = attrs.direction == ComparisonDirection::kEq;
    auto dst = out.mutable_data<uint8_t>();
    for (int64_t i = 0; i < out.element_count(); ++i)
      dst[i] = (a.GetComplex(i) == b.GetComplex(i)) == want_equal;
    return;
  }
  DispatchArrayType(a.shape().type, [&](auto type) {
    CompareTyped<decltype(type)::value>(attrs, a, b, out);
  });
}

}  // namespace hlo::eval

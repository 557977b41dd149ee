// Integer and pred elementwise ops, with exactly the integer rules of ir.h:
//   two's complement wrapping for add/subtract/multiply/negate/abs (computed in unsigned
//   arithmetic, so no C++ signed overflow); divide truncates, x/0 = -1 (all bits set),
//   INT_MIN/-1 = INT_MIN; remainder has the dividend's sign, x%0 = x, INT_MIN%-1 = 0; shift
//   amounts are unsigned and >= bit width give 0 (left, logical) or the sign fill
//   (arithmetic; unsigned operands are shifted as their signed counterpart, as XLA does);
//   power with a negative exponent: 1^n = 1, (-1)^n = ±1, else 0; 0^0 = 1.
// pred supports not/and/or/xor and maximum (= or) / minimum (= and).
#include <bit>
#include <limits>
#include <type_traits>

#include "hlo/evaluator_elementwise_internal.h"

namespace hlo::eval {
namespace {

// Unsigned type at least as wide as int, so that arithmetic never promotes to signed int.
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
T WrapAdd(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)); }
template <typename T>
T WrapSub(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b)); }
template <typename T>
T WrapMul(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b)); }

template <typename T>
T Divide(T a, T b) {
  if (b == 0) return static_cast<T>(-1);  // all bits set, signed or unsigned
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}

template <typename T>
T Remainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;  // also covers INT_MIN % -1
  }
  return static_cast<T>(a % b);
}

template <typename T>
T Power(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  T result = 1;
  auto e = static_cast<std::make_unsigned_t<T>>(exponent);
  while (e != 0) {
    if (e & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

template <typename T>
T ShiftLeft(T a, T amount) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(amount) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<Wide<T>>(static_cast<U>(a)) << static_cast<U>(amount));
}

template <typename T>
T ShiftRightLogical(T a, T amount) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(amount) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<U>(a) >> static_cast<U>(amount));
}

template <typename T>
T ShiftRightArithmetic(T a, T amount) {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  S value = static_cast<S>(a);
  if (static_cast<U>(amount) >= sizeof(T) * 8) return static_cast<T>(value < 0 ? S(-1) : S(0));
  return static_cast<T>(static_cast<S>(value >> static_cast<U>(amount)));  // C++20: arithmetic
}

template <PrimitiveType P>
void IntegerUnaryTyped(Opcode op, const Literal& in, Literal& out) {
  using T = typename ElementTraits<P>::Storage;
  using U = std::make_unsigned_t<T>;
  auto map = [&](auto fn) { MapUnary<P, P>(in, out, fn); };
  switch (op) {
    case Opcode::kAbs:
      if constexpr (std::is_signed_v<T>) return map([](T x) { return x < 0 ? WrapSub(T(0), x) : x; });
      return map([](T x) { return x; });
    case Opcode::kNegate: return map([](T x) { return WrapSub(T(0), x); });
    case Opcode::kNot: return map([](T x) { return static_cast<T>(~static_cast<U>(x)); });
    // popcnt of an s4 counts its sign-extended byte and wraps (popcnt(-1) = 8 -> -8), which is
    // what XLA:CPU returns; clz counts within the 4 bits (XLA:CPU agrees).
    case Opcode::kPopulationCount:
      return map([](T x) { return static_cast<T>(std::popcount(static_cast<U>(x))); });
    case Opcode::kClz:
      if constexpr (kIsNibbleType<P>) {
        return map([](T x) { return static_cast<T>(std::countl_zero(static_cast<U>(x & 0xf)) - 4); });
      }
      return map([](T x) { return static_cast<T>(std::countl_zero(static_cast<U>(x))); });
    case Opcode::kSign: return map([](T x) { return static_cast<T>((x > 0) - (x < 0)); });
    default: ThrowUnsupported(op, P);
  }
}

template <PrimitiveType P>
void IntegerBinaryTyped(Opcode op, const Literal& a, const Literal& b, Literal& out) {
  using T = typename ElementTraits<P>::Storage;
  auto map = [&](auto fn) { MapBinary<P, P>(a, b, out, fn); };
  switch (op) {
    case Opcode::kAdd: return map([](T x, T y) { return WrapAdd(x, y); });
    case Opcode::kSubtract: return map([](T x, T y) { return WrapSub(x, y); });
    case Opcode::kMultiply: return map([](T x, T y) { return WrapMul(x, y); });
    case Opcode::kDivide: return map([](T x, T y) { return Divide(x, y); });
    case Opcode::kRemainder: return map([](T x, T y) { return Remainder(x, y); });
    case Opcode::kMaximum: return map([](T x, T y) { return x > y ? x : y; });
    case Opcode::kMinimum: return map([](T x, T y) { return x < y ? x : y; });
    case Opcode::kPower: return map([](T x, T y) { return Power(x, y); });
    case Opcode::kAnd: return map([](T x, T y) { return static_cast<T>(x & y); });
    case Opcode::kOr: return map([](T x, T y) { return static_cast<T>(x | y); });
    case Opcode::kXor: return map([](T x, T y) { return static_cast<T>(x ^ y); });
    case Opcode::kShiftLeft: return map([](T x, T y) { return ShiftLeft(x, y); });
    case Opcode::kShiftRightLogical:
      if constexpr (P == PrimitiveType::kS4) {  // shift the 4 stored bits, not the sign extension
        return map([](T x, T y) { return static_cast<T>(ShiftRightLogical<uint8_t>(x & 0xf, y)); });
      }
      return map([](T x, T y) { return ShiftRightLogical(x, y); });
    case Opcode::kShiftRightArithmetic:
      if constexpr (P == PrimitiveType::kU4) {  // the top of the 4 bits is the sign
        return map([](T x, T y) {
          return static_cast<T>(ShiftRightArithmetic<int8_t>(WrapS4(static_cast<int8_t>(x)), y));
        });
      }
      return map([](T x, T y) { return ShiftRightArithmetic(x, y); });
    default: ThrowUnsupported(op, P);
  }
}

void PredUnary(Opcode op, const Literal& in, Literal& out) {
  constexpr PrimitiveType P = PrimitiveType::kPred;
  if (op == Opcode::kNot) return MapUnary<P, P>(in, out, [](uint8_t x) -> uint8_t { return !x; });
  ThrowUnsupported(op, P);
}

void PredBinary(Opcode op, const Literal& a, const Literal& b, Literal& out) {
  constexpr PrimitiveType P = PrimitiveType::kPred;
  auto map = [&](auto fn) { MapBinary<P, P>(a, b, out, fn); };
  switch (op) {
    case Opcode::kAnd:
    case Opcode::kMinimum: return map([](uint8_t x, uint8_t y) -> uint8_t { return x && y; });
    case Opcode::kOr:
    case Opcode::kMaximum: return map([](uint8_t x, uint8_t y) -> uint8_t { return x || y; });
    case Opcode::kXor: return map([](uint8_t x, uint8_t y) -> uint8_t { return (x != 0) != (y != 0); });
    default: ThrowUnsupported(op, P);
  }
}

}  // namespace

void IntegerUnary(Opcode op, const Literal& in, Literal& out) {
  DispatchArrayType(out.shape().type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    if constexpr (P == PrimitiveType::kPred) {
      PredUnary(op, in, out);
    } else if constexpr (kIsIntType<P>) {
      IntegerUnaryTyped<P>(op, in, out);
    } else {
      ThrowUnsupported(op, P);
    }
  });
}

void IntegerBinary(Opcode op, const Literal& a, const Literal& b, Literal& out) {
  DispatchArrayType(out.shape().type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    if constexpr (P == PrimitiveType::kPred) {
      PredBinary(op, a, b, out);
    } else if constexpr (kIsIntType<P>) {
      IntegerBinaryTyped<P>(op, a, b, out);
    } else {
      ThrowUnsupported(op, P);
    }
  });
}

}  // namespace hlo::eval

// Floating-point unary and binary elementwise arithmetic (f16, bf16, f32, f64, and the 8-/4-bit
// floats, which compute in f32 like bf16).
//
// Guarantees (ir.h): bf16/f16 compute in f32 and round to nearest even on store; f32 computes
// in float, f64 in double; maximum/minimum return NaN when either operand is NaN; sign keeps
// -0, +0 and NaN; round-nearest-afz rounds halves away from zero, round-nearest-even to even;
// remainder is fmod (sign of the dividend). Integer-only ops on floats are hlo::Errors.
#include <cmath>
#include <limits>

#include "hlo/evaluator_elementwise_internal.h"

namespace hlo::eval {
namespace {

template <typename C>
C SignOf(C x) {
  if (std::isnan(x) || x == C(0)) return x;  // NaN, -0 and +0 are their own sign
  return x > C(0) ? C(1) : C(-1);
}

template <typename C>
C Logistic(C x) {
  // 1 / (1 + e^-x); for very negative x, exp overflows to inf and the result is +0, as wanted.
  return C(1) / (C(1) + std::exp(-x));
}

template <typename C>
C NanMax(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a > b ? a : b;
}

template <typename C>
C NanMin(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? a : b;
}

template <PrimitiveType P>
void FloatUnaryTyped(Opcode op, const Literal& in, Literal& out) {
  using C = typename ElementTraits<P>::Compute;
  auto map = [&](auto fn) { MapUnary<P, P>(in, out, fn); };
  switch (op) {
    case Opcode::kAbs: return map([](C x) { return std::fabs(x); });
    case Opcode::kCbrt: return map([](C x) { return std::cbrt(x); });
    case Opcode::kCeil: return map([](C x) { return std::ceil(x); });
    case Opcode::kCos: return map([](C x) { return std::cos(x); });
    case Opcode::kErf: return map([](C x) { return std::erf(x); });
    case Opcode::kExp: return map([](C x) { return std::exp(x); });
    case Opcode::kExpm1: return map([](C x) { return std::expm1(x); });
    case Opcode::kFloor: return map([](C x) { return std::floor(x); });
    case Opcode::kLog: return map([](C x) { return std::log(x); });
    case Opcode::kLog1p: return map([](C x) { return std::log1p(x); });
    case Opcode::kLogistic: return map([](C x) { return Logistic(x); });
    case Opcode::kNegate: return map([](C x) { return -x; });
    case Opcode::kRoundNearestAfz: return map([](C x) { return std::round(x); });
    // nearbyint rounds in the current mode, which is round-to-nearest-even (never changed here).
    case Opcode::kRoundNearestEven: return map([](C x) { return std::nearbyint(x); });
    case Opcode::kRsqrt: return map([](C x) { return C(1) / std::sqrt(x); });
    case Opcode::kSign: return map([](C x) { return SignOf(x); });
    case Opcode::kSin: return map([](C x) { return std::sin(x); });
    case Opcode::kSqrt: return map([](C x) { return std::sqrt(x); });
    case Opcode::kTan: return map([](C x) { return std::tan(x); });
    case Opcode::kTanh: return map([](C x) { return std::tanh(x); });
    default: ThrowUnsupported(op, P);
  }
}

template <PrimitiveType P>
void FloatBinaryTyped(Opcode op, const Literal& a, const Literal& b, Literal& out) {
  using C = typename ElementTraits<P>::Compute;
  auto map = [&](auto fn) { MapBinary<P, P>(a, b, out, fn); };
  switch (op) {
    case Opcode::kAdd: return map([](C x, C y) { return x + y; });
    case Opcode::kSubtract: return map([](C x, C y) { return x - y; });
    case Opcode::kMultiply: return map([](C x, C y) { return x * y; });
    case Opcode::kDivide: return map([](C x, C y) { return x / y; });
    case Opcode::kMaximum: return map([](C x, C y) { return NanMax(x, y); });
    case Opcode::kMinimum: return map([](C x, C y) { return NanMin(x, y); });
    case Opcode::kPower: return map([](C x, C y) { return std::pow(x, y); });
    case Opcode::kRemainder: return map([](C x, C y) { return std::fmod(x, y); });
    case Opcode::kAtan2: return map([](C x, C y) { return std::atan2(x, y); });
    default: ThrowUnsupported(op, P);
  }
}

}  // namespace

void FloatUnary(Opcode op, const Literal& in, Literal& out) {
  DispatchArrayType(out.shape().type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    if constexpr (kIsFloatType<P>) {
      FloatUnaryTyped<P>(op, in, out);
    } else {
      ThrowUnsupported(op, P);
    }
  });
}

void FloatBinary(Opcode op, const Literal& a, const Literal& b, Literal& out) {
  DispatchArrayType(out.shape().type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    if constexpr (kIsFloatType<P>) {
      FloatBinaryTyped<P>(op, a, b, out);
    } else {
      ThrowUnsupported(op, P);
    }
  });
}

}  // namespace hlo::eval

// Recognizing a reducer: a computation whose root is one binary op of its two scalar parameters
// (the to_apply of reduce, all-reduce, scatter, ...), and that op applied to two scalars. The
// evaluator's fast paths use it, and so does any backend that maps a reducer onto a fixed
// operation (the gpu code generator's NCCL reductions, its emulator).
//
// Guarantees: RecognizeBinaryBody answers only for op(param0, param1) in either order over
// scalars of exactly `type`; and / or only on integers and pred; never on complex types.
// Combine computes as XLA's elementwise ops do in the compute type: integers wrap, maximum and
// minimum propagate NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "hlo/ir.h"

namespace hlo {

enum class BinaryKind : uint8_t { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr };

// The root of `computation` when it has exactly two scalar `type` parameters and its root is a
// binary instruction over them (either order); nullptr otherwise.
const Instruction* BinaryRootOverParameters(const Computation& computation, PrimitiveType type);

// The op of a computation whose root is `op(param0, param1)` (either order) over scalars of
// `type`, for the ops above that are legal on that type; nullopt otherwise (the caller calls the
// computation per element).
std::optional<BinaryKind> RecognizeBinaryBody(const Computation& computation, PrimitiveType type);

// a op b in the compute type C, wrapping for integers and propagating NaN for max/min.
template <typename C>
C Combine(BinaryKind kind, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (kind) {
      case BinaryKind::kAdd:
        return a + b;
      case BinaryKind::kMultiply:
        return a * b;
      case BinaryKind::kMaximum:
        return (std::isnan(a) || std::isnan(b)) ? a + b : (a > b ? a : b);
      case BinaryKind::kMinimum:
        return (std::isnan(a) || std::isnan(b)) ? a + b : (a < b ? a : b);
      case BinaryKind::kAnd:
      case BinaryKind::kOr:
        break;  // never recognized for floats
    }
    return a;
  } else {
    using U = std::make_unsigned_t<C>;
    switch (kind) {
      case BinaryKind::kAdd:
        return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
      case BinaryKind::kMultiply:
        // Promote through uint64 so narrow types do not promote to signed int and overflow.
        return static_cast<C>(static_cast<uint64_t>(static_cast<U>(a)) *
                              static_cast<uint64_t>(static_cast<U>(b)));
      case BinaryKind::kMaximum:
        return a > b ? a : b;
      case BinaryKind::kMinimum:
        return a < b ? a : b;
      case BinaryKind::kAnd:
        return static_cast<C>(a & b);
      case BinaryKind::kOr:
        return static_cast<C>(a | b);
    }
    return a;
  }
}

}  // namespace hlo

// Value predicates shared by the simplifier's rule families (see simplify_rules.h).
#include <cmath>
#include <complex>

#include "compiler/passes/simplify_rules.h"

namespace compiler::simplify {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

bool Match::is_integral() const {
  return hlo::IsInteger(type()) || type() == PrimitiveType::kPred;
}

namespace {

// Looks through broadcasts and reshapes (they replicate or rearrange, never change values) to
// the constant underneath, if any. Depth-bounded so a long chain costs O(1).
const Instruction* UnderlyingConstant(const Instruction* x) {
  for (int depth = 0; depth < 8 && x != nullptr; ++depth) {
    switch (x->opcode()) {
      case Opcode::kConstant: return x;
      case Opcode::kBroadcast:
      case Opcode::kReshape: x = x->operand(0); break;
      default: return nullptr;
    }
  }
  return nullptr;
}

bool ElementIs(const hlo::Literal& literal, int64_t i, double value) {
  const PrimitiveType type = literal.shape().type;
  if (hlo::IsComplex(type)) {  // both parts: (1, 5) is not 1
    const std::complex<double> v = literal.GetComplex(i);
    return v.imag() == 0 && v.real() == value && std::signbit(v.real()) == std::signbit(value);
  }
  if (hlo::IsFloating(type)) {
    const double v = literal.GetAsDouble(i);
    return v == value && std::signbit(v) == std::signbit(value);
  }
  return literal.GetAsInt64(i) == static_cast<int64_t>(value);
}

}  // namespace

bool IsSplat(const Instruction* x, double value) {
  const Instruction* constant = UnderlyingConstant(x);
  if (constant == nullptr || !constant->has_attr<hlo::ConstantAttrs>()) return false;
  const hlo::Literal& literal = constant->attr<hlo::ConstantAttrs>().literal;
  if (!literal.shape().IsArray()) return false;
  const int64_t n = literal.element_count();
  if (n <= 0) return false;  // an empty array has no value to speak of
  for (int64_t i = 0; i < n; ++i) {
    if (!ElementIs(literal, i, value)) return false;
  }
  return true;
}

static bool IsIntegral(PrimitiveType t) { return hlo::IsInteger(t) || t == PrimitiveType::kPred; }

bool IsAddIdentity(const Instruction* x) {
  return hlo::IsFloating(x->shape().type) ? IsSplat(x, -0.0)
                                          : IsIntegral(x->shape().type) && IsSplat(x, 0.0);
}

bool IsSubtractIdentity(const Instruction* x) {
  return (hlo::IsFloating(x->shape().type) || IsIntegral(x->shape().type)) && IsSplat(x, 0.0);
}

bool IsZeroIntegral(const Instruction* x) { return IsIntegral(x->shape().type) && IsSplat(x, 0.0); }

bool IsOne(const Instruction* x) {
  return (hlo::IsFloating(x->shape().type) || hlo::IsInteger(x->shape().type)) && IsSplat(x, 1.0);
}

bool IsAllTrue(const Instruction* x) {
  return x->shape().type == PrimitiveType::kPred && IsSplat(x, 1.0);
}

bool IsAllFalse(const Instruction* x) {
  return x->shape().type == PrimitiveType::kPred && IsSplat(x, 0.0);
}

namespace {
// Significand digits (including the implicit bit): the largest n such that every integer of
// magnitude <= 2^n is exact in the type.
int SignificandDigits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return 11;
    case PrimitiveType::kBF16: return 8;
    case PrimitiveType::kF32: return 24;
    case PrimitiveType::kF64: return 53;
    default: return 0;
  }
}
}  // namespace

bool IsLosslessConvert(PrimitiveType from, PrimitiveType to) {
  if (from == to || from == PrimitiveType::kPred) return true;  // 0 and 1 are exact everywhere
  if (to == PrimitiveType::kPred) return false;
  if (hlo::IsFloating(from)) {
    if (!hlo::IsFloating(to)) return false;
    // f16 and bf16 both embed in f32 (and f32 in f64), but not in each other.
    return SignificandDigits(to) > SignificandDigits(from) &&
           (hlo::BitWidth(to) > hlo::BitWidth(from));
  }
  if (!hlo::IsInteger(from)) return false;
  // Bits of magnitude the integer type needs (-2^(w-1) is a power of two, exact anywhere).
  const int magnitude_bits = hlo::IsSignedInteger(from) ? hlo::BitWidth(from) - 1
                                                        : hlo::BitWidth(from);
  if (hlo::IsFloating(to)) return magnitude_bits <= SignificandDigits(to);
  if (!hlo::IsInteger(to)) return false;
  if (hlo::IsSignedInteger(from) == hlo::IsSignedInteger(to)) {
    return hlo::BitWidth(to) >= hlo::BitWidth(from);
  }
  // unsigned -> wider signed is exact; signed -> unsigned never is (negative values).
  return hlo::IsUnsignedInteger(from) && hlo::BitWidth(to) > hlo::BitWidth(from);
}

}  // namespace compiler::simplify

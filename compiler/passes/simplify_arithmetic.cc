// Arithmetic and bitwise identities. Every rule is an exact identity for its types:
//   floats:   only x + (-0) (not x + 0: -0 + +0 = +0), x - (+0), x * 1, x / 1, pow(x, 1),
//             -(-x), max(x, x), min(x, x), max(x, -inf), min(x, +inf) (maximum/minimum
//             propagate NaN); nothing that NaN, inf or -0 would break;
//   integers: additionally x * 0 = 0, x - x = 0 (wrapping arithmetic has no special values).
#include <limits>

#include "compiler/passes/simplify_rules.h"

namespace compiler::simplify {
namespace {

using hlo::Instruction;
using O = hlo::Opcode;
using M = Match&;

Instruction* Zero(M m) { return m.builder().Splat(m.shape(), 0.0); }

constexpr double kInf = std::numeric_limits<double>::infinity();
bool IsLowest(const Instruction* x) { return hlo::IsFloating(x->shape().type) && IsSplat(x, -kInf); }
bool IsHighest(const Instruction* x) { return hlo::IsFloating(x->shape().type) && IsSplat(x, kInf); }

const Rule kArithmeticRules[] = {
    // x + id -> x   (id = -0.0 for floats, 0 for integers)
    {"add-identity-rhs", O::kAdd, [](M m) { return IsAddIdentity(m.op(1)) ? m.op(0) : nullptr; }},
    // id + x -> x
    {"add-identity-lhs", O::kAdd, [](M m) { return IsAddIdentity(m.op(0)) ? m.op(1) : nullptr; }},
    // x - (+0) -> x
    {"sub-zero", O::kSubtract, [](M m) { return IsSubtractIdentity(m.op(1)) ? m.op(0) : nullptr; }},
    // x - x -> 0   (integers only: inf - inf and NaN - NaN are NaN)
    {"sub-self", O::kSubtract, [](M m) { return m.is_integral() && Same(m.op(0), m.op(1)) ? Zero(m) : nullptr; }},
    // x * 1 -> x
    {"mul-one-rhs", O::kMultiply, [](M m) { return IsOne(m.op(1)) ? m.op(0) : nullptr; }},
    // 1 * x -> x
    {"mul-one-lhs", O::kMultiply, [](M m) { return IsOne(m.op(0)) ? m.op(1) : nullptr; }},
    // x * 0 -> 0   (integers only: NaN * 0 and inf * 0 are NaN)
    {"mul-zero-rhs", O::kMultiply, [](M m) { return IsZeroIntegral(m.op(1)) ? m.op(1) : nullptr; }},
    // 0 * x -> 0   (integers only)
    {"mul-zero-lhs", O::kMultiply, [](M m) { return IsZeroIntegral(m.op(0)) ? m.op(0) : nullptr; }},
    // x / 1 -> x
    {"div-one", O::kDivide, [](M m) { return IsOne(m.op(1)) ? m.op(0) : nullptr; }},
    // pow(x, 1) -> x
    {"pow-one", O::kPower, [](M m) { return IsOne(m.op(1)) ? m.op(0) : nullptr; }},
    // -(-x) -> x
    {"neg-neg", O::kNegate, [](M m) { return m.op(0)->opcode() == O::kNegate ? m.op(0)->operand(0) : nullptr; }},
    // |(|x|)| -> |x|
    {"abs-abs", O::kAbs, [](M m) { return m.op(0)->opcode() == O::kAbs ? m.op(0) : nullptr; }},
    // max(x, x) -> x
    {"max-self", O::kMaximum, [](M m) { return Same(m.op(0), m.op(1)) ? m.op(0) : nullptr; }},
    // min(x, x) -> x
    {"min-self", O::kMinimum, [](M m) { return Same(m.op(0), m.op(1)) ? m.op(0) : nullptr; }},
    // max(x, -inf) -> x   (floats: maximum propagates NaN, and max(-0, -inf) = -0)
    {"max-neg-inf", O::kMaximum, [](M m) { return IsLowest(m.op(1)) ? m.op(0) : IsLowest(m.op(0)) ? m.op(1) : nullptr; }},
    // min(x, +inf) -> x   (floats)
    {"min-pos-inf", O::kMinimum, [](M m) { return IsHighest(m.op(1)) ? m.op(0) : IsHighest(m.op(0)) ? m.op(1) : nullptr; }},
    // x & x -> x
    {"and-self", O::kAnd, [](M m) { return Same(m.op(0), m.op(1)) ? m.op(0) : nullptr; }},
    // x | x -> x
    {"or-self", O::kOr, [](M m) { return Same(m.op(0), m.op(1)) ? m.op(0) : nullptr; }},
    // x & true -> x   (pred)
    {"and-true", O::kAnd, [](M m) { return IsAllTrue(m.op(1)) ? m.op(0) : IsAllTrue(m.op(0)) ? m.op(1) : nullptr; }},
    // x & 0 -> 0   (pred false / integer 0)
    {"and-zero", O::kAnd, [](M m) { return IsZeroIntegral(m.op(1)) ? m.op(1) : IsZeroIntegral(m.op(0)) ? m.op(0) : nullptr; }},
    // x | 0 -> x   (pred false / integer 0)
    {"or-zero", O::kOr, [](M m) { return IsZeroIntegral(m.op(1)) ? m.op(0) : IsZeroIntegral(m.op(0)) ? m.op(1) : nullptr; }},
    // x | true -> true   (pred)
    {"or-true", O::kOr, [](M m) { return IsAllTrue(m.op(1)) ? m.op(1) : IsAllTrue(m.op(0)) ? m.op(0) : nullptr; }},
    // x ^ 0 -> x
    {"xor-zero", O::kXor, [](M m) { return IsZeroIntegral(m.op(1)) ? m.op(0) : IsZeroIntegral(m.op(0)) ? m.op(1) : nullptr; }},
    // copy(x) -> x   when the copy does not change the layout
    {"copy-same-layout", O::kCopy, [](M m) { return m.shape().Equal(m.op(0)->shape()) ? m.op(0) : nullptr; }},
};

}  // namespace

std::span<const Rule> ArithmeticRules() { return kArithmeticRules; }

}  // namespace compiler::simplify

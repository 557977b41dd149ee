// Compare / select / not idioms. Comparing a value with itself is decided only where no NaN
// exists (integers, pred) or where NaN compares equal to itself (TOTALORDER).
#include "compiler/passes/simplify_rules.h"

namespace compiler::simplify {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using O = hlo::Opcode;
using M = Match&;

// compare(x, x) has a fixed answer: reflexive directions are true, strict ones false.
// Returns -1 when undecided (a float compared under IEEE semantics).
int SelfCompareValue(M m) {
  if (!Same(m.op(0), m.op(1))) return -1;
  const hlo::CompareAttrs& attrs = m.inst().attr<hlo::CompareAttrs>();
  const hlo::PrimitiveType t = m.op(0)->shape().type;
  const bool no_nan = hlo::IsInteger(t) || t == hlo::PrimitiveType::kPred ||
                      attrs.type == hlo::ComparisonType::kTotalOrder;
  if (!no_nan) return -1;
  switch (attrs.direction) {
    case ComparisonDirection::kEq:
    case ComparisonDirection::kGe:
    case ComparisonDirection::kLe: return 1;
    case ComparisonDirection::kNe:
    case ComparisonDirection::kGt:
    case ComparisonDirection::kLt: return 0;
  }
  return -1;
}

Instruction* FoldSelfCompare(M m) {
  const int value = SelfCompareValue(m);
  return value < 0 ? nullptr : m.builder().Splat(m.shape(), value);
}

// select(not(p), a, b) -> select(p, b, a)
Instruction* SwapNegatedPredicate(M m) {
  const Instruction* p = m.op(0);
  if (p->opcode() != O::kNot) return nullptr;
  return m.builder().Add(O::kSelect, m.shape(), {p->operand(0), m.op(2), m.op(1)}, hlo::NoAttrs{});
}

const Rule kCompareSelectRules[] = {
    // select(p, a, a) -> a
    {"select-same", O::kSelect, [](M m) { return Same(m.op(1), m.op(2)) ? m.op(1) : nullptr; }},
    // select(true, a, b) -> a
    {"select-true", O::kSelect, [](M m) { return IsAllTrue(m.op(0)) ? m.op(1) : nullptr; }},
    // select(false, a, b) -> b
    {"select-false", O::kSelect, [](M m) { return IsAllFalse(m.op(0)) ? m.op(2) : nullptr; }},
    // select(not(p), a, b) -> select(p, b, a)
    {"select-not-predicate", O::kSelect, SwapNegatedPredicate},
    // compare(x, x, EQ|GE|LE) -> true;  compare(x, x, NE|GT|LT) -> false   (no NaN possible)
    {"compare-self", O::kCompare, FoldSelfCompare},
    // not(not(x)) -> x   (logical for pred, bitwise for integers)
    {"not-not", O::kNot, [](M m) { return m.op(0)->opcode() == O::kNot ? m.op(0)->operand(0) : nullptr; }},
};

}  // namespace

std::span<const Rule> CompareSelectRules() { return kCompareSelectRules; }

}  // namespace compiler::simplify

// The algebraic simplifier's rule-table machinery.
//
// A rule is data: a name, the opcode it looks at, and a rewrite function that returns the
// replacement value or nullptr when the pattern does not match. Each rule is one line in its
// family's table with the algebra it implements in a comment (`// x*1 -> x`), and the families
// (arithmetic, shape, convert, compare/select, dot) are composed into the simplifier's rule set.
//
// Contract of a rewrite function:
//   * it returns nullptr without building anything when the pattern does not match;
//   * the value it returns has the same logical shape and element type as the instruction and
//     equals it bit-for-bit on every input (NaN payloads aside) — floating-point rules are exact
//     identities, never "fast-math" ones (x+0 is not x for x=-0; x*0 is not 0 for NaN/inf);
//   * new instructions are built through Match::builder() so names stay unique.
// The driver (algebraic_simplifier.cc) replaces uses, deletes what became dead and iterates to
// a fixed point.
#pragma once

#include <span>
#include <string_view>

#include "compiler/passes/rewrite_builder.h"
#include "hlo/ir.h"

namespace compiler::simplify {

// The instruction a rule is looking at, plus the builder for its replacement.
class Match {
 public:
  Match(hlo::Instruction& instruction, RewriteBuilder& builder)
      : inst_(instruction), builder_(builder) {}

  hlo::Instruction& inst() const { return inst_; }
  hlo::Instruction* op(int64_t i) const { return inst_.operand(i); }
  const hlo::Shape& shape() const { return inst_.shape(); }
  hlo::PrimitiveType type() const { return inst_.shape().type; }
  bool is_float() const { return hlo::IsFloating(type()); }
  // Integers and pred: the types whose arithmetic has no NaN/inf/-0 special cases.
  bool is_integral() const;
  RewriteBuilder& builder() const { return builder_; }

 private:
  hlo::Instruction& inst_;
  RewriteBuilder& builder_;
};

using RewriteFn = hlo::Instruction* (*)(Match&);

struct Rule {
  std::string_view name;
  hlo::Opcode opcode;
  RewriteFn rewrite;
};

// ----- value predicates shared by the rule families -----------------------------------------

// True if every element of `x` is `value`: a constant, or a broadcast/reshape of one. Floats
// compare with the sign of zero (-0.0 is not +0.0); NaN never matches.
bool IsSplat(const hlo::Instruction* x, double value);
// The additive identity that is exact for the type: -0.0 for floats (x + -0 = x even for
// x = -0), 0 for integers.
bool IsAddIdentity(const hlo::Instruction* x);
// +0.0 for floats (x - +0 = x for every x), 0 for integers.
bool IsSubtractIdentity(const hlo::Instruction* x);
bool IsZeroIntegral(const hlo::Instruction* x);  // 0 of an integer or pred type
bool IsOne(const hlo::Instruction* x);
bool IsAllTrue(const hlo::Instruction* x);   // pred splat true
bool IsAllFalse(const hlo::Instruction* x);  // pred splat false
// `lhs` and `rhs` compute the same value: the same instruction.
inline bool Same(const hlo::Instruction* a, const hlo::Instruction* b) { return a == b; }
// The converting from `from` to `to` keeps every value exactly (widening).
bool IsLosslessConvert(hlo::PrimitiveType from, hlo::PrimitiveType to);

// ----- the families -----------------------------------------------------------------------
std::span<const Rule> ArithmeticRules();     // simplify_arithmetic.cc
std::span<const Rule> ShapeRules();          // simplify_shape.cc
std::span<const Rule> ConvertRules();        // simplify_convert.cc
std::span<const Rule> CompareSelectRules();  // simplify_compare_select.cc
std::span<const Rule> DotRules();            // simplify_dot.cc

}  // namespace compiler::simplify

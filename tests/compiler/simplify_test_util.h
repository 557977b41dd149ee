// Helpers for the simplifier / canonicalizer / batch-norm tests: parse small modules, run a
// pass under the pass contract (verifies, honest "changed", idempotent), and compare the module
// before and after by evaluation — bit-exact (NaN matches any NaN) with NaN/inf/-0 and integer
// extremes injected into the inputs, or within the per-type tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pass.h"
#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace simplify_test {

// "HloModule m / ENTRY main { body }".
inline std::string Entry(const std::string& body) {
  return "HloModule m\n\nENTRY main {\n" + body + "\n}\n";
}

inline int64_t CountOpcode(const hlo::Module& m, hlo::Opcode opcode) {
  int64_t n = 0;
  for (const auto& c : m.computations()) {
    for (const auto& inst : c->instructions()) n += inst->opcode() == opcode ? 1 : 0;
  }
  return n;
}

// Overwrites the first elements of every array with values that break inexact algebra:
// NaN, ±inf, ±0, ±1 for floats; 0, ±1, min, max for integers. `rotate` shifts which element
// gets which value so that binary ops see different pairs.
inline void InjectSpecialValues(hlo::Literal& literal, int rotate) {
  if (literal.IsTuple()) {
    for (hlo::Literal& e : literal.mutable_elements()) InjectSpecialValues(e, rotate);
    return;
  }
  const hlo::PrimitiveType t = literal.shape().type;
  std::vector<double> specials;
  if (hlo::IsFloating(t)) {
    const double inf = std::numeric_limits<double>::infinity();
    specials = {std::nan(""), inf, -inf, -0.0, 0.0, 1.0, -1.0, 2.5};
  } else if (hlo::IsInteger(t)) {
    specials = {0, 1, -1, 7};
  }
  const int64_t n = literal.element_count();
  for (size_t i = 0; i < specials.size() && static_cast<int64_t>(i) < n; ++i) {
    literal.SetFromDouble(static_cast<int64_t>(i), specials[(i + static_cast<size_t>(rotate)) % specials.size()]);
  }
  if (hlo::IsInteger(t) && n > 5) {
    // The type's extremes, written through the 64-bit path so they are exact.
    const int bits = hlo::BitWidth(t);
    const bool is_signed = hlo::IsSignedInteger(t);
    const int64_t max = is_signed ? static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1)
                                  : (bits == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1));
    const int64_t min = is_signed ? -max - 1 : 0;
    literal.SetFromInt64(4, max);
    literal.SetFromInt64(5, min);
  }
}

// Element-by-element identity: same shape, same bits, except that any NaN matches any NaN.
inline ::testing::AssertionResult SameValues(const hlo::Literal& a, const hlo::Literal& b) {
  if (a.IsTuple() != b.IsTuple()) return ::testing::AssertionFailure() << "tuple vs array";
  if (a.IsTuple()) {
    if (a.elements().size() != b.elements().size()) return ::testing::AssertionFailure() << "arity";
    for (size_t i = 0; i < a.elements().size(); ++i) {
      auto r = SameValues(a.elements()[i], b.elements()[i]);
      if (!r) return r << " (tuple element " << i << ")";
    }
    return ::testing::AssertionSuccess();
  }
  if (!a.shape().Compatible(b.shape())) {
    return ::testing::AssertionFailure() << a.shape().ToString() << " vs " << b.shape().ToString();
  }
  const bool is_float = hlo::IsFloating(a.shape().type);
  for (int64_t i = 0; i < a.element_count(); ++i) {
    if (is_float) {
      const double x = a.GetAsDouble(i), y = b.GetAsDouble(i);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (x == y && std::signbit(x) == std::signbit(y)) continue;
      return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs " << y;
    }
    if (a.GetAsInt64(i) != b.GetAsInt64(i)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a.GetAsInt64(i) << " vs " << b.GetAsInt64(i);
    }
  }
  return ::testing::AssertionSuccess();
}

enum class Compare { kBitExact, kTolerance, kNone };

// Evaluates `before` and `after` on seeded random inputs (with special values for kBitExact).
inline void ExpectSameResults(const hlo::Module& before, const hlo::Module& after, Compare mode) {
  if (mode == Compare::kNone) return;
  for (int seed = 1; seed <= 3; ++seed) {
    std::vector<hlo::Literal> inputs = io::MakeRandomInputs(before, static_cast<uint64_t>(seed));
    if (mode == Compare::kBitExact) {
      for (hlo::Literal& input : inputs) InjectSpecialValues(input, seed);
    }
    hlo::Literal expected = hlo::Evaluate(before, inputs);
    hlo::Literal actual = hlo::Evaluate(after, inputs);
    if (mode == Compare::kBitExact) {
      EXPECT_TRUE(SameValues(expected, actual)) << "seed " << seed << "\n" << hlo::PrintModule(after);
    } else {
      io::CompareResult cmp =
          io::CompareArrays(io::FlattenOutputs(expected), io::FlattenOutputs(actual), nullptr);
      EXPECT_TRUE(cmp.matched) << "seed " << seed << ": " << cmp.summary;
    }
  }
}

// Runs `pass` on a clone of `module` under the pass contract and returns the result: it
// verifies; "changed" is honest (text differs iff changed); a second run changes nothing.
inline std::unique_ptr<hlo::Module> RunPass(compiler::Pass& pass, const hlo::Module& module,
                                            bool expect_changed, Compare mode) {
  std::unique_ptr<hlo::Module> result = module.Clone();
  const std::string before = hlo::PrintModule(module);
  const bool changed = pass.Run(*result);
  EXPECT_EQ(changed, expect_changed) << pass.name() << "\n" << hlo::PrintModule(*result);
  EXPECT_NO_THROW(hlo::Verify(*result)) << hlo::PrintModule(*result);
  const std::string after = hlo::PrintModule(*result);
  EXPECT_EQ(changed, before != after) << pass.name() << ": changed flag disagrees with the text";
  EXPECT_FALSE(pass.Run(*result)) << pass.name() << " found more to do on a second run";
  EXPECT_EQ(after, hlo::PrintModule(*result)) << pass.name() << " second run changed the text";
  ExpectSameResults(module, *result, mode);
  return result;
}

}  // namespace simplify_test

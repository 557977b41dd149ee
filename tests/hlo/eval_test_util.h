// Helpers shared by the evaluator tests (eval_elementwise_test, eval_data_movement_test,
// eval_control_test): literals from plain values, running a text module, and a tiny IR builder
// for modules the text form cannot express directly.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "hlo/literal.h"
#include "tests/test_support.h"

namespace eval_test {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// An array literal of `type` and `dims` from values (converted as Literal::SetFromDouble does).
inline Literal Make(PrimitiveType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal literal(Shape::Array(type, std::move(dims)));
  EXPECT_EQ(static_cast<int64_t>(values.size()), literal.element_count());
  for (size_t i = 0; i < values.size(); ++i) literal.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return literal;
}

// Integers of any width from int64 values (wrapping as a convert would).
inline Literal MakeInt(PrimitiveType type, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Literal literal(Shape::Array(type, std::move(dims)));
  EXPECT_EQ(static_cast<int64_t>(values.size()), literal.element_count());
  for (size_t i = 0; i < values.size(); ++i) literal.SetFromInt64(static_cast<int64_t>(i), values[i]);
  return literal;
}

inline Literal Scalar(PrimitiveType type, double value) { return Make(type, {}, {value}); }

inline std::vector<double> Values(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

inline std::vector<int64_t> Ints(const Literal& literal) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsInt64(i));
  return out;
}

// Parses and verifies `text`, evaluates it on `args`.
inline Literal RunHlo(const std::string& text, const std::vector<Literal>& args = {},
                   const hlo::EvaluatorOptions& options = {}) {
  auto module = testing_support::ParseAndVerify(text);
  return hlo::Evaluate(*module, args, options);
}

// Runs the one-instruction module `ROOT r = <result_shape> <op_text>` over parameters of the
// given shapes (named p0, p1, ...).
inline Literal RunOp(const std::string& result_shape, const std::string& op_text,
                     const std::vector<Literal>& args) {
  std::string text = "HloModule m\n\nENTRY e {\n";
  for (size_t i = 0; i < args.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + args[i].shape().ToString(false) + " parameter(" +
            std::to_string(i) + ")\n";
  }
  text += "  ROOT r = " + result_shape + " " + op_text + "\n}\n";
  return RunHlo(text, args);
}

// Bitwise check including NaN and the sign of zero.
inline bool SameFloat(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

#define EXPECT_FLOATS(actual, ...)                                                       \
  do {                                                                                  \
    std::vector<double> expected_values = __VA_ARGS__;                                  \
    std::vector<double> actual_values = ::eval_test::Values(actual);                    \
    ASSERT_EQ(actual_values.size(), expected_values.size());                            \
    for (size_t i_ = 0; i_ < expected_values.size(); ++i_) {                            \
      EXPECT_TRUE(::eval_test::SameFloat(actual_values[i_], expected_values[i_]))       \
          << "element " << i_ << ": got " << actual_values[i_] << ", expected "         \
          << expected_values[i_];                                                       \
    }                                                                                   \
  } while (0)

}  // namespace eval_test

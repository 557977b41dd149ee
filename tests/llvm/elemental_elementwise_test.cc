// Every elementwise opcode on every element type it is defined for, JIT-compiled from the
// emitter and compared element by element with the interpreter on edge values (NaN, ±inf, ±0,
// INT_MIN, -1, shifts >= width, x/0, ...) crossed pairwise, plus random values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlo/shape.h"
#include "tests/llvm/elemental_test_util.h"
#include "tests/test_support.h"

namespace {

using hlo::PrimitiveType;
using llvm_test::CompareWithInterpreter;
using llvm_test::MakeInput;

const std::vector<PrimitiveType> kFloatTypes = {PrimitiveType::kF32, PrimitiveType::kBF16,
                                                PrimitiveType::kF16, PrimitiveType::kF64};
const std::vector<PrimitiveType> kIntegerTypes = {
    PrimitiveType::kS8, PrimitiveType::kS16, PrimitiveType::kS32, PrimitiveType::kS64,
    PrimitiveType::kU8, PrimitiveType::kU16, PrimitiveType::kU32, PrimitiveType::kU64};

std::string Name(PrimitiveType type) { return std::string(hlo::PrimitiveTypeName(type)); }

// A module whose root is a tuple of `ops` applied to parameters p0 (and p1, p2) of T[n].
// Each op is written as "opcode" or "opcode, attributes"; `result_types` gives each op's type.
std::string ModuleText(PrimitiveType type, int64_t n, int arity,
                       const std::vector<std::string>& ops,
                       const std::vector<std::string>& result_types) {
  const std::string shape = Name(type) + "[" + std::to_string(n) + "]";
  std::string text = "HloModule m\n\nENTRY e {\n";
  for (int p = 0; p < arity; ++p) {
    text += "  p" + std::to_string(p) + " = " + shape + " parameter(" + std::to_string(p) + ")\n";
  }
  std::string operands = "p0";
  if (arity >= 2) operands += ", p1";
  if (arity >= 3) operands += ", p2";
  std::string tuple;
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::string op = ops[k];
    const size_t comma = op.find(',');
    const std::string opcode = op.substr(0, comma);
    const std::string attributes = comma == std::string::npos ? "" : op.substr(comma);
    const std::string name = "r" + std::to_string(k);
    text += "  " + name + " = " + result_types[k] + "[" + std::to_string(n) + "] " + opcode + "(" +
            operands + ")" + attributes + "\n";
    tuple += (k ? ", " : "") + name;
  }
  text += "  ROOT t = (";
  for (size_t k = 0; k < ops.size(); ++k)
    text += (k ? ", " : "") + result_types[k] + "[" + std::to_string(n) + "]";
  text += ") tuple(" + tuple + ")\n}\n";
  return text;
}

// Runs `ops` on T for inputs crossing every pair of edge values; returns the mismatch report.
std::string Check(PrimitiveType type, int arity, const std::vector<std::string>& ops,
                  const std::vector<std::string>& result_types, int64_t max_ulp,
                  double max_magnitude = 0.0) {
  const int64_t edges = static_cast<int64_t>(llvm_test::EdgeValues(type).size());
  const int64_t n = edges * edges + 301;  // odd size: all pairs, then random values
  auto module = testing_support::ParseAndVerify(ModuleText(type, n, arity, ops, result_types));
  std::vector<hlo::Literal> arguments;
  const hlo::Shape shape = hlo::Shape::Array(type, {n});
  for (int p = 0; p < arity; ++p)
    arguments.push_back(MakeInput(shape, p % 2, 17 + p, max_magnitude));
  return CompareWithInterpreter(*module, arguments, max_ulp);
}

std::vector<std::string> Same(PrimitiveType type, size_t count) {
  return std::vector<std::string>(count, Name(type));
}

TEST(ElementwiseTest, ExactFloatUnaryOps) {
  const std::vector<std::string> ops = {
      "abs",  "negate", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even",
      "sqrt", "rsqrt",  "copy"};
  for (PrimitiveType type : kFloatTypes) {
    EXPECT_EQ(Check(type, 1, ops, Same(type, ops.size()), 0), "") << Name(type);
  }
}

TEST(ElementwiseTest, ExactFloatBinaryOps) {
  const std::vector<std::string> ops = {"add",       "subtract", "multiply", "divide",
                                        "remainder", "maximum",  "minimum"};
  for (PrimitiveType type : kFloatTypes) {
    EXPECT_EQ(Check(type, 2, ops, Same(type, ops.size()), 0), "") << Name(type);
  }
}

TEST(ElementwiseTest, IntegerOps) {
  const std::vector<std::string> unary = {
      "abs", "negate", "sign", "not", "popcnt", "count-leading-zeros", "copy"};
  const std::vector<std::string> binary = {"add",
                                           "subtract",
                                           "multiply",
                                           "divide",
                                           "remainder",
                                           "maximum",
                                           "minimum",
                                           "and",
                                           "or",
                                           "xor",
                                           "shift-left",
                                           "shift-right-logical",
                                           "shift-right-arithmetic",
                                           "power"};
  for (PrimitiveType type : kIntegerTypes) {
    EXPECT_EQ(Check(type, 1, unary, Same(type, unary.size()), 0), "") << Name(type);
    EXPECT_EQ(Check(type, 2, binary, Same(type, binary.size()), 0), "") << Name(type);
  }
}

TEST(ElementwiseTest, PredOps) {
  EXPECT_EQ(Check(PrimitiveType::kPred, 1, {"not", "copy"}, Same(PrimitiveType::kPred, 2), 0), "");
  const std::vector<std::string> binary = {"and", "or", "xor", "maximum", "minimum"};
  EXPECT_EQ(Check(PrimitiveType::kPred, 2, binary, Same(PrimitiveType::kPred, binary.size()), 0),
            "");
}

TEST(ElementwiseTest, CompareAllDirectionsAndTypes) {
  std::vector<std::string> ops;
  for (const char* direction : {"EQ", "NE", "LT", "LE", "GT", "GE"})
    ops.push_back(std::string("compare, direction=") + direction);
  std::vector<std::string> preds(ops.size(), "pred");
  std::vector<PrimitiveType> all = kFloatTypes;
  all.insert(all.end(), kIntegerTypes.begin(), kIntegerTypes.end());
  all.push_back(PrimitiveType::kPred);
  for (PrimitiveType type : all) EXPECT_EQ(Check(type, 2, ops, preds, 0), "") << Name(type);
  std::vector<std::string> total, reinterpreted;
  for (const std::string& op : ops) {
    total.push_back(op + ", type=TOTALORDER");
    reinterpreted.push_back(op + ", type=UNSIGNED");
  }
  for (PrimitiveType type : kFloatTypes)
    EXPECT_EQ(Check(type, 2, total, preds, 0), "") << Name(type) << " TOTALORDER";
  EXPECT_EQ(Check(PrimitiveType::kS32, 2, reinterpreted, preds, 0), "") << "s32 as UNSIGNED";
}

TEST(ElementwiseTest, SelectClampIsFinite) {
  std::vector<PrimitiveType> all = kFloatTypes;
  all.insert(all.end(), kIntegerTypes.begin(), kIntegerTypes.end());
  for (PrimitiveType type : all) {
    EXPECT_EQ(Check(type, 3, {"clamp"}, {Name(type)}, 0), "") << Name(type);
  }
  for (PrimitiveType type : kFloatTypes) {
    EXPECT_EQ(Check(type, 1, {"is-finite"}, {"pred"}, 0), "") << Name(type);
  }
}

TEST(ElementwiseTest, ConvertBetweenEveryPairOfTypes) {
  std::vector<PrimitiveType> all = kFloatTypes;
  all.insert(all.end(), kIntegerTypes.begin(), kIntegerTypes.end());
  all.push_back(PrimitiveType::kPred);
  for (PrimitiveType from : all) {
    std::vector<std::string> ops, types;
    for (PrimitiveType to : all) {
      ops.push_back("convert");
      types.push_back(Name(to));
    }
    EXPECT_EQ(Check(from, 1, ops, types, 0), "") << "from " << Name(from);
  }
}

TEST(ElementwiseTest, ReducePrecisionMatchesInterpreterBitForBit) {
  const std::vector<std::string> ops = {"reduce-precision, exponent_bits=5, mantissa_bits=10",
                                        "reduce-precision, exponent_bits=8, mantissa_bits=7",
                                        "reduce-precision, exponent_bits=4, mantissa_bits=3",
                                        "reduce-precision, exponent_bits=1, mantissa_bits=0",
                                        "reduce-precision, exponent_bits=11, mantissa_bits=52"};
  for (PrimitiveType type : kFloatTypes) {
    EXPECT_EQ(Check(type, 1, ops, Same(type, ops.size()), 0), "") << Name(type);
  }
}

TEST(ElementwiseTest, BitcastConvertSameWidth) {
  EXPECT_EQ(Check(PrimitiveType::kF32, 1, {"bitcast-convert"}, {"s32"}, 0), "");
  EXPECT_EQ(
      Check(PrimitiveType::kU16, 1, {"bitcast-convert", "bitcast-convert"}, {"bf16", "f16"}, 0),
      "");
  EXPECT_EQ(Check(PrimitiveType::kF64, 1, {"bitcast-convert"}, {"u64"}, 0), "");
}

// Transcendentals: within a few ulp of the interpreter's std:: results (llvm_math.h states
// the emitter's own error against the exact value; the interpreter adds at most about one more).
TEST(ElementwiseTest, TranscendentalsWithinUlp) {
  const std::vector<std::string> ops = {
      "exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic", "erf",
      "cbrt"};
  for (PrimitiveType type : kFloatTypes) {
    const int64_t ulp = type == PrimitiveType::kF64 ? 1 : type == PrimitiveType::kF32 ? 2 : 1;
    EXPECT_EQ(Check(type, 1, ops, Same(type, ops.size()), ulp), "") << Name(type);
    // Trigonometry over the whole range (Payne-Hanek beyond 2^17, llvm_math.cc).
    EXPECT_EQ(Check(type, 1, {"sine", "cosine", "tan"}, Same(type, 3),
                    type == PrimitiveType::kF32 ? 3 : 1),
              "")
        << Name(type);
    EXPECT_EQ(Check(type, 2, {"power", "atan2"}, Same(type, 2), ulp), "") << Name(type);
  }
}

}  // namespace

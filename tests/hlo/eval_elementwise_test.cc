// Elementwise ops of the reference evaluator against hand-computed values: IEEE edge cases
// (NaN, ±inf, -0), bf16/f16 rounding ties, integer wrapping and division rules, shifts past the
// bit width, convert saturation, bitcast-convert, reduce-precision and the error paths.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "hlo/evaluator_types.h"
#include "tests/hlo/eval_test_util.h"

namespace {

using namespace eval_test;
using hlo::PrimitiveType;
constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType BF16 = PrimitiveType::kBF16;
constexpr PrimitiveType F16 = PrimitiveType::kF16;
constexpr PrimitiveType S32 = PrimitiveType::kS32;
constexpr PrimitiveType S8 = PrimitiveType::kS8;
constexpr PrimitiveType U8 = PrimitiveType::kU8;
constexpr PrimitiveType U16 = PrimitiveType::kU16;
constexpr PrimitiveType PRED = PrimitiveType::kPred;
constexpr int64_t kIntMin = std::numeric_limits<int32_t>::min();
constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

TEST(EvalElementwise, FloatDivisionEdgeCases) {
  Literal a = Make(F32, {5}, {1, -1, 0, -0.0, 6});
  Literal b = Make(F32, {5}, {0, 0, 0, 1, -4});
  EXPECT_FLOATS(RunOp("f32[5]", "divide(p0, p1)", {a, b}), {kInf, -kInf, kNaN, -0.0, -1.5});
  EXPECT_FLOATS(RunOp("f32[5]", "add(p0, p1)", {a, b}), {1, -1, 0, 1, 2});
  EXPECT_FLOATS(RunOp("f32[5]", "remainder(p0, p1)", {Make(F32, {5}, {7, -7, 7, 1, kInf}),
                                                      Make(F32, {5}, {3, 3, -3, 0, 1})}),
                {1, -1, 1, kNaN, kNaN});
}

TEST(EvalElementwise, MaximumMinimumPropagateNaN) {
  Literal a = Make(F32, {4}, {kNaN, 1, -kInf, 2});
  Literal b = Make(F32, {4}, {1, kNaN, 3, -0.5});
  EXPECT_FLOATS(RunOp("f32[4]", "maximum(p0, p1)", {a, b}), {kNaN, kNaN, 3, 2});
  EXPECT_FLOATS(RunOp("f32[4]", "minimum(p0, p1)", {a, b}), {kNaN, kNaN, -kInf, -0.5});
}

TEST(EvalElementwise, CompareIeeeAndTotalOrder) {
  Literal a = Make(F32, {4}, {-0.0, kInf, -kInf, kNaN});
  Literal b = Make(F32, {4}, {0.0, kNaN, -1, kNaN});
  EXPECT_EQ(Ints(RunOp("pred[4]", "compare(p0, p1), direction=LT", {a, b})),
            (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(Ints(RunOp("pred[4]", "compare(p0, p1), direction=LT, type=TOTALORDER", {a, b})),
            (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(Ints(RunOp("pred[4]", "compare(p0, p1), direction=EQ", {a, b})),
            (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Ints(RunOp("pred[4]", "compare(p0, p1), direction=NE", {a, b})),
            (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(Ints(RunOp("pred[4]", "compare(p0, p1), direction=EQ, type=TOTALORDER", {a, b})),
            (std::vector<int64_t>{0, 0, 0, 1}));
  // Signed vs unsigned integer order: -1 is the largest u32 bit pattern.
  Literal x = MakeInt(S32, {2}, {-1, 3});
  Literal y = MakeInt(S32, {2}, {2, 3});
  EXPECT_EQ(Ints(RunOp("pred[2]", "compare(p0, p1), direction=GT", {x, y})),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(Ints(RunOp("pred[2]", "compare(p0, p1), direction=GE, type=UNSIGNED", {x, y})),
            (std::vector<int64_t>{1, 1}));
}

TEST(EvalElementwise, IntegerDivisionAndRemainderRules) {
  Literal a = MakeInt(S32, {7}, {7, -7, 7, -7, kIntMin, 5, kIntMin});
  Literal b = MakeInt(S32, {7}, {2, 2, -2, -2, -1, 0, 1});
  EXPECT_EQ(Ints(RunOp("s32[7]", "divide(p0, p1)", {a, b})),
            (std::vector<int64_t>{3, -3, -3, 3, kIntMin, -1, kIntMin}));
  EXPECT_EQ(Ints(RunOp("s32[7]", "remainder(p0, p1)", {a, b})),
            (std::vector<int64_t>{1, -1, 1, -1, 0, 5, 0}));
  Literal ua = MakeInt(U8, {2}, {200, 9});
  Literal ub = MakeInt(U8, {2}, {0, 4});
  EXPECT_EQ(Ints(RunOp("u8[2]", "divide(p0, p1)", {ua, ub})), (std::vector<int64_t>{255, 2}));
  EXPECT_EQ(Ints(RunOp("u8[2]", "remainder(p0, p1)", {ua, ub})), (std::vector<int64_t>{200, 1}));
}

TEST(EvalElementwise, IntegerArithmeticWraps) {
  Literal a = MakeInt(S32, {3}, {kIntMax, 65536, kIntMin});
  Literal b = MakeInt(S32, {3}, {1, 65536, -1});
  EXPECT_EQ(Ints(RunOp("s32[3]", "add(p0, p1)", {a, b})),
            (std::vector<int64_t>{kIntMin, 131072, kIntMax}));
  EXPECT_EQ(Ints(RunOp("s32[3]", "multiply(p0, p1)", {a, b})),
            (std::vector<int64_t>{kIntMax, 0, kIntMin}));
  EXPECT_EQ(Ints(RunOp("s32[3]", "negate(p0)", {a})), (std::vector<int64_t>{-kIntMax, -65536, kIntMin}));
  EXPECT_EQ(Ints(RunOp("s32[3]", "abs(p0)", {a})), (std::vector<int64_t>{kIntMax, 65536, kIntMin}));
  EXPECT_EQ(Ints(RunOp("s8[2]", "add(p0, p1)", {MakeInt(S8, {2}, {127, -128}), MakeInt(S8, {2}, {1, -1})})),
            (std::vector<int64_t>{-128, 127}));
  // 65535 * 65535 = 2^32 - 2^17 + 1, which is 1 modulo 2^16 (and overflows a C++ int).
  EXPECT_EQ(Ints(RunOp("u16[1]", "multiply(p0, p1)", {MakeInt(U16, {1}, {65535}), MakeInt(U16, {1}, {65535})})),
            (std::vector<int64_t>{1}));
}

TEST(EvalElementwise, ShiftsByWidthOrMore) {
  Literal a = MakeInt(S32, {6}, {1, 1, 1, -8, -8, 8});
  Literal b = MakeInt(S32, {6}, {31, 32, -1, 1, 40, 40});
  EXPECT_EQ(Ints(RunOp("s32[6]", "shift-left(p0, p1)", {a, b})),
            (std::vector<int64_t>{kIntMin, 0, 0, -16, 0, 0}));
  EXPECT_EQ(Ints(RunOp("s32[6]", "shift-right-arithmetic(p0, p1)", {a, b})),
            (std::vector<int64_t>{0, 0, 0, -4, -1, 0}));
  Literal c = MakeInt(S32, {3}, {-8, -1, -1});
  Literal d = MakeInt(S32, {3}, {28, 32, 31});
  EXPECT_EQ(Ints(RunOp("s32[3]", "shift-right-logical(p0, p1)", {c, d})),
            (std::vector<int64_t>{15, 0, 1}));
  // Arithmetic shift of an unsigned value fills with its top bit.
  EXPECT_EQ(Ints(RunOp("u8[1]", "shift-right-arithmetic(p0, p1)", {MakeInt(U8, {1}, {0x80}), MakeInt(U8, {1}, {1})})),
            (std::vector<int64_t>{0xC0}));
}

TEST(EvalElementwise, IntegerPower) {
  Literal base = MakeInt(S32, {8}, {2, -1, -1, 1, 2, 0, 3, 2});
  Literal exponent = MakeInt(S32, {8}, {10, -3, -4, -5, -1, 0, 3, 31});
  EXPECT_EQ(Ints(RunOp("s32[8]", "power(p0, p1)", {base, exponent})),
            (std::vector<int64_t>{1024, -1, 1, 1, 0, 1, 27, kIntMin}));
}

TEST(EvalElementwise, BitwiseCountAndSign) {
  Literal a = MakeInt(S32, {4}, {0, -1, 1, 0xF0});
  EXPECT_EQ(Ints(RunOp("s32[4]", "popcnt(p0)", {a})), (std::vector<int64_t>{0, 32, 1, 4}));
  EXPECT_EQ(Ints(RunOp("s32[4]", "count-leading-zeros(p0)", {a})), (std::vector<int64_t>{32, 0, 31, 24}));
  EXPECT_EQ(Ints(RunOp("s32[4]", "not(p0)", {a})), (std::vector<int64_t>{-1, 0, -2, -241}));
  EXPECT_EQ(Ints(RunOp("s32[4]", "sign(p0)", {MakeInt(S32, {4}, {-5, 0, 7, kIntMin})})),
            (std::vector<int64_t>{-1, 0, 1, -1}));
  Literal p = MakeInt(PRED, {4}, {0, 0, 1, 1});
  Literal q = MakeInt(PRED, {4}, {0, 1, 0, 1});
  EXPECT_EQ(Ints(RunOp("pred[4]", "xor(p0, p1)", {p, q})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(Ints(RunOp("pred[4]", "and(p0, p1)", {p, q})), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(Ints(RunOp("pred[4]", "not(p0)", {p})), (std::vector<int64_t>{1, 1, 0, 0}));
}

TEST(EvalElementwise, FloatSignAndRounding) {
  EXPECT_FLOATS(RunOp("f32[6]", "sign(p0)", {Make(F32, {6}, {-2, -0.0, 0, kNaN, kInf, 3})}),
                {-1, -0.0, 0, kNaN, 1, 1});
  Literal halves = Make(F32, {5}, {0.5, 1.5, 2.5, -0.5, -2.5});
  EXPECT_FLOATS(RunOp("f32[5]", "round-nearest-afz(p0)", {halves}), {1, 2, 3, -1, -3});
  EXPECT_FLOATS(RunOp("f32[5]", "round-nearest-even(p0)", {halves}), {0, 2, 2, -0.0, -2});
  EXPECT_FLOATS(RunOp("f32[3]", "floor(p0)", {Make(F32, {3}, {-0.5, 1.5, -0.0})}), {-1, 1, -0.0});
  EXPECT_FLOATS(RunOp("f32[3]", "ceil(p0)", {Make(F32, {3}, {-0.5, 1.5, kInf})}), {-0.0, 2, kInf});
}

TEST(EvalElementwise, Bf16RoundsToNearestEvenOnStore) {
  // bf16 keeps 7 mantissa bits: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> 1 (even);
  // (1 + 2^-7) + 2^-8 is a tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even) -> 1 + 2^-6.
  Literal a = Make(BF16, {3}, {1, 1.0078125, 3e38});
  Literal b = Make(BF16, {3}, {0.00390625, 0.00390625, 3e38});
  EXPECT_FLOATS(RunOp("bf16[3]", "add(p0, p1)", {a, b}), {1, 1.015625, kInf});
  // Every intermediate result is rounded: (1 + 2^-8) rounds to 1 before the subtraction.
  std::string text = R"(HloModule m
ENTRY e {
  a = bf16[1] parameter(0)
  b = bf16[1] parameter(1)
  sum = bf16[1] add(a, b)
  ROOT diff = bf16[1] subtract(sum, a)
})";
  EXPECT_FLOATS(RunHlo(text, {Make(BF16, {1}, {1}), Make(BF16, {1}, {0.00390625})}), {0});
}

// The evaluator's inlined bf16 conversion must agree bit for bit with literal.h's.
TEST(EvalElementwise, InlineBf16ConversionMatchesLiteral) {
  using Traits = hlo::eval::ElementTraits<PrimitiveType::kBF16>;
  auto check = [](uint32_t bits) {
    float value = std::bit_cast<float>(bits);
    ASSERT_EQ(Traits::Store(value), hlo::FloatToBF16(value)) << std::hex << bits;
  };
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65521) check(static_cast<uint32_t>(bits));
  for (uint32_t special : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                           0xffc00001u, 0x7f800001u, 0x7f7fffffu, 0x3f808000u, 0x3f818000u,
                           0x00008000u, 0x00018000u}) {
    check(special);
  }
  for (uint32_t half = 0; half <= 0xffff; ++half) {
    ASSERT_EQ(std::bit_cast<uint32_t>(Traits::Load(static_cast<uint16_t>(half))),
              std::bit_cast<uint32_t>(hlo::BF16ToFloat(static_cast<uint16_t>(half))));
  }
}

TEST(EvalElementwise, F16OverflowsToInfinityAtTheTie) {
  // f16 max is 65504; 65520 is the tie with 65536 (even) which does not exist -> inf.
  Literal a = Make(F16, {2}, {65504, 65504});
  Literal b = Make(F16, {2}, {16, 8});
  EXPECT_FLOATS(RunOp("f16[2]", "add(p0, p1)", {a, b}), {kInf, 65504});
}

TEST(EvalElementwise, ConvertSaturatesAndWraps) {
  Literal f = Make(F32, {7}, {kNaN, kInf, -kInf, 3.9, -3.9, 3e9, -3e9});
  EXPECT_EQ(Ints(RunOp("s32[7]", "convert(p0)", {f})),
            (std::vector<int64_t>{0, kIntMax, kIntMin, 3, -3, kIntMax, kIntMin}));
  EXPECT_EQ(Ints(RunOp("u8[7]", "convert(p0)", {f})), (std::vector<int64_t>{0, 255, 0, 3, 0, 255, 0}));
  EXPECT_EQ(Ints(RunOp("s8[3]", "convert(p0)", {MakeInt(S32, {3}, {300, -129, -1})})),
            (std::vector<int64_t>{44, 127, -1}));
  EXPECT_EQ(Ints(RunOp("u8[1]", "convert(p0)", {MakeInt(S32, {1}, {-1})})), (std::vector<int64_t>{255}));
  EXPECT_EQ(Ints(RunOp("pred[4]", "convert(p0)", {Make(F32, {4}, {0, -0.0, kNaN, 2})})),
            (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_FLOATS(RunOp("f32[2]", "convert(p0)", {MakeInt(PRED, {2}, {1, 0})}), {1, 0});
  EXPECT_FLOATS(RunOp("bf16[3]", "convert(p0)", {Make(F32, {3}, {1.00390625, 1.01171875, -kInf})}),
                {1, 1.015625, -kInf});
  // s64 beyond 2^53 converts to the nearest f32.
  EXPECT_FLOATS(RunOp("f32[1]", "convert(p0)", {MakeInt(PrimitiveType::kS64, {1}, {(int64_t{1} << 40) + 1})}),
                {1099511627776.0});
}

TEST(EvalElementwise, BitcastConvertReinterpretsBytes) {
  EXPECT_EQ(Ints(RunOp("s32[2]", "bitcast-convert(p0)", {Make(F32, {2}, {1.0, -0.0})})),
            (std::vector<int64_t>{0x3f800000, kIntMin}));
  // A narrower type adds a minor dimension holding the little-endian pieces.
  EXPECT_EQ(Ints(RunOp("u16[1,2]", "bitcast-convert(p0)", {Make(F32, {1}, {1.0})})),
            (std::vector<int64_t>{0, 0x3f80}));
  EXPECT_FLOATS(RunOp("f32[1]", "bitcast-convert(p0)", {MakeInt(U16, {1, 2}, {0, 0xbf80})}), {-1});
}

TEST(EvalElementwise, ReducePrecisionMatchesXla) {
  // To bf16's format (8 exponent, 7 mantissa bits): ties round to even.
  Literal x = Make(F32, {4}, {1.00390625, 1.01171875, kNaN, -kInf});
  EXPECT_FLOATS(RunOp("f32[4]", "reduce-precision(p0), exponent_bits=8, mantissa_bits=7", {x}),
                {1, 1.015625, kNaN, -kInf});
  // To f16's format: 65520 rounds up into 2^16, which overflows to inf; below 2^-14 flushes
  // to a signed zero.
  Literal y = Make(F32, {5}, {65520, 65504, std::ldexp(1.0, -14), std::ldexp(1.0, -15), -1e-8});
  EXPECT_FLOATS(RunOp("f32[5]", "reduce-precision(p0), exponent_bits=5, mantissa_bits=10", {y}),
                {kInf, 65504, std::ldexp(1.0, -14), 0, -0.0});
  // NaN stays NaN even with no mantissa bits left (as XLA:CPU does); 3 = 1.5 * 2^1 is a tie
  // between 2 and 4, and XLA's bit trick rounds it to the even biased exponent (2).
  EXPECT_FLOATS(RunOp("f32[2]", "reduce-precision(p0), exponent_bits=8, mantissa_bits=0",
                      {Make(F32, {2}, {kNaN, 3})}),
                {kNaN, 2});
}

TEST(EvalElementwise, Transcendentals) {
  Literal x = Make(F32, {4}, {0, 100, -100, kNaN});
  EXPECT_FLOATS(RunOp("f32[4]", "logistic(p0)", {x}), {0.5, 1, 0, kNaN});
  EXPECT_FLOATS(RunOp("f32[3]", "erf(p0)", {Make(F32, {3}, {0, kInf, -kInf})}), {0, 1, -1});
  EXPECT_FLOATS(RunOp("f32[2]", "cbrt(p0)", {Make(F32, {2}, {-27, 8})}), {-3, 2});
  EXPECT_FLOATS(RunOp("f32[2]", "log-plus-one(p0)", {Make(F32, {2}, {-1, 0})}), {-kInf, 0});
  EXPECT_FLOATS(RunOp("f32[3]", "rsqrt(p0)", {Make(F32, {3}, {4, 0, -1})}), {0.5, kInf, kNaN});
  EXPECT_EQ(Ints(RunOp("pred[4]", "is-finite(p0)", {Make(F32, {4}, {kInf, kNaN, 1, -kInf})})),
            (std::vector<int64_t>{0, 0, 1, 0}));
  // expm1 keeps precision near 0 where exp(x) - 1 would lose it.
  double tiny = RunOp("f32[1]", "exponential-minus-one(p0)", {Make(F32, {1}, {1e-10})}).GetAsDouble(0);
  EXPECT_NEAR(tiny, 1e-10, 1e-16);
  double angle = RunOp("f32[1]", "atan2(p0, p1)", {Make(F32, {1}, {1}), Make(F32, {1}, {-1})}).GetAsDouble(0);
  EXPECT_NEAR(angle, 3 * std::numbers::pi / 4, 1e-6);
  EXPECT_NEAR(RunOp("f32[1]", "tan(p0)", {Make(F32, {1}, {std::numbers::pi / 4})}).GetAsDouble(0), 1.0, 1e-6);
  EXPECT_NEAR(RunOp("f64[1]", "power(p0, p1)", {Make(PrimitiveType::kF64, {1}, {2}),
                                               Make(PrimitiveType::kF64, {1}, {0.5})}).GetAsDouble(0),
              std::sqrt(2.0), 1e-15);
}

TEST(EvalElementwise, SelectAndClamp) {
  Literal pred = MakeInt(PRED, {3}, {1, 0, 1});
  Literal t = Make(F32, {3}, {1, 2, 3});
  Literal f = Make(F32, {3}, {-1, -2, -3});
  EXPECT_FLOATS(RunOp("f32[3]", "select(p0, p1, p2)", {pred, t, f}), {1, -2, 3});
  Literal lo = Make(F32, {4}, {0, 0, 0, 0});
  Literal x = Make(F32, {4}, {-1, 0.5, 7, kNaN});
  Literal hi = Make(F32, {4}, {1, 1, 1, 1});
  EXPECT_FLOATS(RunOp("f32[4]", "clamp(p0, p1, p2)", {lo, x, hi}), {0, 0.5, 1, kNaN});
  // A value equal to a bound takes the bound's sign of zero (XLA:CPU gives +0 here).
  EXPECT_FLOATS(RunOp("f32[2]", "clamp(p0, p1, p2)",
                      {Make(F32, {2}, {0, -1}), Make(F32, {2}, {-0.0, 0}), Make(F32, {2}, {1, -0.0})}),
                {0, -0.0});
  // Scalar bounds are broadcast.
  EXPECT_EQ(Ints(RunOp("s32[3]", "clamp(p0, p1, p2)",
                       {MakeInt(S32, {}, {-2}), MakeInt(S32, {3}, {-5, 1, 9}), MakeInt(S32, {}, {4})})),
            (std::vector<int64_t>{-2, 1, 4}));
}

TEST(EvalElementwise, EmptyShapes) {
  Literal a = Make(F32, {0, 3}, {});
  Literal r = RunOp("f32[0,3]", "add(p0, p1)", {a, a});
  EXPECT_EQ(r.element_count(), 0);
  EXPECT_EQ(r.shape().dims, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(RunOp("s32[0]", "convert(p0)", {Make(F32, {0}, {})}).element_count(), 0);
}

TEST(EvalElementwise, ArgumentShapeMismatchNamesParameterAndShapes) {
  try {
    RunOp("f32[2]", "negate(p0)", {Make(F32, {2}, {1, 2})});  // fine
    std::string text = "HloModule m\nENTRY e {\n  p0 = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p0)\n}\n";
    RunHlo(text, {Make(F32, {3}, {1, 2, 3})});
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("parameter 0"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("f32[3]"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("f32[2]"), std::string::npos) << e.message();
    EXPECT_EQ(e.location().line, 3u);
  }
}

// An op applied to a type it is not defined for is an error located at the instruction, even
// when the module was built without the verifier's help.
TEST(EvalElementwise, UndefinedOpForTypeIsLocatedError) {
  hlo::Module module("m");
  auto computation = std::make_unique<hlo::Computation>("e");
  auto param = std::make_unique<hlo::Instruction>("x", hlo::Opcode::kParameter, Shape::Array(F32, {1}));
  param->set_attrs(hlo::ParameterAttrs{0});
  hlo::Instruction* x = computation->AddInstruction(std::move(param));
  auto op = std::make_unique<hlo::Instruction>("bad_not", hlo::Opcode::kNot, Shape::Array(F32, {1}));
  op->AppendOperand(x);
  op->set_location(hlo::SourceLocation{nullptr, 7, 3});
  computation->set_root(computation->AddInstruction(std::move(op)));
  module.set_entry(module.AddComputation(std::move(computation)));
  try {
    hlo::Evaluate(module, std::vector<Literal>{Make(F32, {1}, {1})});
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("bad_not"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("f32"), std::string::npos) << e.message();
    EXPECT_EQ(e.location().line, 7u);
  }
}

}  // namespace

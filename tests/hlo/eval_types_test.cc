// The element types beyond the classic ones: the 8- and 4-bit floats (every bit pattern of each
// format, rounding, overflow), s4/u4, c64/c128 arithmetic, fft and the oneDNN layer norm, against
// hand-computed values; and their constants through text and proto unchanged. (The same ops are
// checked against XLA:CPU on random inputs by tests/run/types through scripts/run_with_xla.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "hlo/minifloat.h"
#include "hlo/printer.h"
#include "hlo/proto_io.h"
#include "tests/hlo/eval_test_util.h"

namespace {

using namespace eval_test;
using hlo::MinifloatFormat;
using hlo::MinifloatFormatOf;

MinifloatFormat Format(PrimitiveType type) { return *MinifloatFormatOf(type); }

TEST(Minifloat, E4M3FNValuesAndSpecials) {
  const MinifloatFormat f = Format(PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(hlo::MinifloatToDouble(f, 0x7e), 448.0);            // the largest finite
  EXPECT_TRUE(std::isnan(hlo::MinifloatToDouble(f, 0x7f)));     // S.1111.111 is NaN
  EXPECT_EQ(hlo::MinifloatToDouble(f, 0x78), 256.0);            // exponent 15 is finite
  EXPECT_EQ(hlo::MinifloatToDouble(f, 0x08), std::ldexp(1, -6));  // smallest normal
  EXPECT_EQ(hlo::MinifloatToDouble(f, 0x01), std::ldexp(1, -9));  // smallest subnormal
  EXPECT_EQ(hlo::MinifloatToDouble(f, 0xb8), -1.0);
  EXPECT_TRUE(std::signbit(hlo::MinifloatToDouble(f, 0x80)));   // -0 exists
  EXPECT_EQ(hlo::DoubleToMinifloat(f, 464), 0x7e);  // halfway to 480: ties to even (448)
  EXPECT_EQ(hlo::DoubleToMinifloat(f, 465), 0x7f);  // past it: no inf, NaN
  EXPECT_EQ(hlo::DoubleToMinifloat(f, -INFINITY), 0xff);
  EXPECT_EQ(hlo::DoubleToMinifloat(f, 1.0625), 0x38);  // 1 + 1/16: tie between 1 and 1.125 -> 1
  EXPECT_EQ(hlo::DoubleToMinifloat(f, 1.1875), 0x3a);  // tie between 1.125 and 1.25 -> 1.25
  EXPECT_EQ(hlo::DoubleToMinifloat(f, std::ldexp(1.5, -10)), 0x01);  // subnormal rounding
  EXPECT_EQ(hlo::MinifloatMax(f), 448.0);
}

TEST(Minifloat, IeeeFnuzAndE5M2Specials) {
  const MinifloatFormat e5m2 = Format(PrimitiveType::kF8E5M2);
  EXPECT_EQ(hlo::MinifloatMax(e5m2), 57344.0);
  EXPECT_TRUE(std::isinf(hlo::MinifloatToDouble(e5m2, 0x7c)));
  EXPECT_EQ(hlo::DoubleToMinifloat(e5m2, 1e6), 0x7c);   // overflow: +inf
  EXPECT_EQ(hlo::DoubleToMinifloat(e5m2, -1e6), 0xfc);  // -inf
  const MinifloatFormat fnuz = Format(PrimitiveType::kF8E4M3FNUZ);
  EXPECT_EQ(hlo::MinifloatMax(fnuz), 240.0);
  EXPECT_TRUE(std::isnan(hlo::MinifloatToDouble(fnuz, 0x80)));  // the only NaN
  EXPECT_EQ(hlo::DoubleToMinifloat(fnuz, -0.0), 0x00);          // no -0
  EXPECT_EQ(hlo::DoubleToMinifloat(fnuz, 1e6), 0x80);           // overflow: NaN
  EXPECT_EQ(hlo::MinifloatMax(Format(PrimitiveType::kF8E4M3)), 240.0);
  EXPECT_EQ(hlo::MinifloatMax(Format(PrimitiveType::kF8E3M4)), 15.5);
  EXPECT_EQ(hlo::MinifloatMax(Format(PrimitiveType::kF8E5M2FNUZ)), 57344.0);
  EXPECT_EQ(hlo::MinifloatMax(Format(PrimitiveType::kF8E4M3B11FNUZ)), 30.0);
}

TEST(Minifloat, F4AndE8M0) {
  const MinifloatFormat f4 = Format(PrimitiveType::kF4E2M1FN);
  const std::vector<double> positives = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint8_t bits = 0; bits < 8; ++bits) EXPECT_EQ(hlo::MinifloatToDouble(f4, bits), positives[bits]);
  EXPECT_EQ(hlo::DoubleToMinifloat(f4, 7.0), 0x7);        // saturates at 6
  EXPECT_EQ(hlo::DoubleToMinifloat(f4, -INFINITY), 0xf);  // -6
  EXPECT_EQ(hlo::DoubleToMinifloat(f4, 5.0), 0x6);        // tie between 4 and 6 -> 4 (even)
  const MinifloatFormat e8m0 = Format(PrimitiveType::kF8E8M0FNU);
  EXPECT_EQ(hlo::MinifloatToDouble(e8m0, 127), 1.0);
  EXPECT_EQ(hlo::MinifloatToDouble(e8m0, 0), std::ldexp(1, -127));
  EXPECT_TRUE(std::isnan(hlo::MinifloatToDouble(e8m0, 0xff)));
  EXPECT_EQ(hlo::DoubleToMinifloat(e8m0, 1.5), 128);   // ties upward
  EXPECT_EQ(hlo::DoubleToMinifloat(e8m0, 1.49), 127);
  EXPECT_EQ(hlo::DoubleToMinifloat(e8m0, 0.0), 0xff);  // no zero: NaN
  EXPECT_EQ(hlo::DoubleToMinifloat(e8m0, -1.0), 0xff);
}

// Every non-NaN pattern of every format decodes to a value that encodes back to itself, and the
// decoded values increase with the bits of the positive half (a format table error would break
// one of the two).
TEST(Minifloat, EveryPatternRoundTripsAndOrders) {
  for (PrimitiveType type :
       {PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E4M3B11FNUZ,
        PrimitiveType::kF8E5M2FNUZ, PrimitiveType::kF8E4M3FNUZ, PrimitiveType::kF8E4M3,
        PrimitiveType::kF8E3M4, PrimitiveType::kF4E2M1FN, PrimitiveType::kF8E8M0FNU}) {
    SCOPED_TRACE(std::string(hlo::PrimitiveTypeName(type)));
    const MinifloatFormat f = Format(type);
    const int patterns = hlo::BitWidth(type) == 4 ? 16 : 256;
    const int positive_half = f.specials == hlo::MinifloatSpecials::kExponentOnly ? 255 : patterns / 2;
    double previous = -1;
    for (int bits = 0; bits < patterns; ++bits) {
      const double value = hlo::MinifloatToDouble(f, static_cast<uint8_t>(bits));
      if (std::isnan(value)) continue;
      EXPECT_EQ(hlo::DoubleToMinifloat(f, value), bits) << "pattern " << bits << " = " << value;
      if (bits < positive_half && !std::isinf(value)) {
        EXPECT_GT(value, previous) << "pattern " << bits;
        previous = value;
      }
    }
  }
}

TEST(EvalTypes, Fp8ArithmeticRoundsToTheFormat) {
  // 1.125 + 1.125 = 2.25 -> f8e4m3fn has 2, 2.25, 2.5: exact; 1.125 * 1.125 = 1.265625 -> 1.25.
  const Literal a = Make(PrimitiveType::kF8E4M3FN, {2}, {1.125, 300});
  EXPECT_FLOATS(RunOp("f8e4m3fn[2]", "add(p0, p0)", {a}), {2.25, NAN});  // 600 overflows: NaN
  EXPECT_FLOATS(RunOp("f8e4m3fn[2]", "multiply(p0, p0)", {a}), {1.25, NAN});
  const Literal b = Make(PrimitiveType::kF32, {3}, {1000, -0.3, 1e-9});
  EXPECT_FLOATS(RunOp("f8e5m2[3]", "convert(p0)", {b}), {1024, -0.3125, 0});
  EXPECT_FLOATS(RunOp("f4e2m1fn[3]", "convert(p0)", {b}), {6, -0.5, 0});
}

TEST(EvalTypes, FourBitIntegersWrapShiftAndCount) {
  const Literal a = MakeInt(PrimitiveType::kS4, {4}, {7, -8, -1, 3});
  EXPECT_EQ(Ints(RunOp("s4[4]", "add(p0, p0)", {a})), (std::vector<int64_t>{-2, 0, -2, 6}));
  const Literal two = MakeInt(PrimitiveType::kS4, {4}, {2, 2, 2, 2});
  EXPECT_EQ(Ints(RunOp("s4[4]", "shift-right-logical(p0, p1)", {a, two})),
            (std::vector<int64_t>{1, 2, 3, 0}));  // on the 4 bits: 0b1111 >> 2 = 3
  EXPECT_EQ(Ints(RunOp("s4[4]", "shift-right-arithmetic(p0, p1)", {a, two})),
            (std::vector<int64_t>{1, -2, -1, 0}));
  const Literal u = MakeInt(PrimitiveType::kU4, {3}, {1, 8, 0});
  EXPECT_EQ(Ints(RunOp("u4[3]", "count-leading-zeros(p0)", {u})), (std::vector<int64_t>{3, 0, 4}));
  const Literal f = Make(PrimitiveType::kF32, {4}, {100, -100, 6.9, NAN});
  EXPECT_EQ(Ints(RunOp("s4[4]", "convert(p0)", {f})), (std::vector<int64_t>{7, -8, 6, 0}));
  EXPECT_EQ(Ints(RunOp("u4[4]", "convert(p0)", {f})), (std::vector<int64_t>{15, 0, 6, 0}));
  const Literal wide = MakeInt(PrimitiveType::kS32, {2}, {17, -9});
  EXPECT_EQ(Ints(RunOp("s4[2]", "convert(p0)", {wide})), (std::vector<int64_t>{1, 7}));  // wraps
}

std::vector<std::complex<double>> Complexes(const Literal& literal) {
  std::vector<std::complex<double>> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetComplex(i));
  return out;
}

void ExpectComplexNear(const std::vector<std::complex<double>>& actual,
                       const std::vector<std::complex<double>>& expected, double tolerance = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_LE(std::abs(actual[i] - expected[i]), tolerance) << "element " << i << ": " << actual[i];
}

Literal MakeComplex(PrimitiveType type, std::vector<int64_t> dims,
                    const std::vector<std::complex<double>>& values) {
  Literal literal(Shape::Array(type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) literal.SetComplex(static_cast<int64_t>(i), values[i]);
  return literal;
}

TEST(EvalTypes, ComplexArithmetic) {
  const Literal a = MakeComplex(PrimitiveType::kC64, {2}, {{1, 2}, {3, 4}});
  const Literal b = MakeComplex(PrimitiveType::kC64, {2}, {{3, 4}, {0, 1}});
  ExpectComplexNear(Complexes(RunOp("c64[2]", "multiply(p0, p1)", {a, b})), {{-5, 10}, {-4, 3}});
  ExpectComplexNear(Complexes(RunOp("c64[2]", "divide(p0, p1)", {a, b})), {{0.44, 0.08}, {4, -3}});
  EXPECT_FLOATS(RunOp("f32[2]", "abs(p1)", {a, b}), {5, 1});
  EXPECT_FLOATS(RunOp("f32[2]", "real(p0)", {a}), {1, 3});
  EXPECT_FLOATS(RunOp("f32[2]", "imag(p0)", {a}), {2, 4});
  const Literal pi = MakeComplex(PrimitiveType::kC128, {1}, {{0, std::numbers::pi}});
  ExpectComplexNear(Complexes(RunOp("c128[1]", "exponential(p0)", {pi})), {{-1, 0}}, 1e-15);
  const Literal re = Make(PrimitiveType::kF32, {2}, {1, 2});
  const Literal im = Make(PrimitiveType::kF32, {2}, {-1, 0.5});
  ExpectComplexNear(Complexes(RunOp("c64[2]", "complex(p0, p1)", {re, im})), {{1, -1}, {2, 0.5}});
  EXPECT_FLOATS(RunOp("f32[2]", "imag(p0)", {re}), {0, 0});  // imag of a real value is 0
  EXPECT_EQ(Ints(RunOp("pred[2]", "compare(p0, p1), direction=NE", {a, b})),
            (std::vector<int64_t>{1, 1}));
  ExpectComplexNear(Complexes(RunOp("c128[2]", "convert(p0)", {re})), {{1, 0}, {2, 0}});
  // A complex dot: [1+i, 2] . [[i], [1]] = (1+i)i + 2 = 1 + i.
  const Literal l = MakeComplex(PrimitiveType::kC64, {1, 2}, {{1, 1}, {2, 0}});
  const Literal r = MakeComplex(PrimitiveType::kC64, {2, 1}, {{0, 1}, {1, 0}});
  ExpectComplexNear(Complexes(RunOp("c64[1,1]",
                                    "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                                    {l, r})),
                    {{1, 1}});
}

TEST(EvalTypes, ComplexConvertToRealIsRefusedByTheVerifier) {
  const Literal a = MakeComplex(PrimitiveType::kC64, {1}, {{1, 2}});
  try {
    RunOp("f32[1]", "convert(p0)", {a});
    ADD_FAILURE() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("take real or imag"), std::string::npos) << e.message();
  }
}

TEST(EvalTypes, FftForms) {
  const Literal x = MakeComplex(PrimitiveType::kC64, {4}, {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  const std::vector<std::complex<double>> spectrum = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  ExpectComplexNear(Complexes(RunOp("c64[4]", "fft(p0), fft_type=FFT, fft_length={4}", {x})),
                    spectrum);
  const Literal s = MakeComplex(PrimitiveType::kC64, {4}, spectrum);
  ExpectComplexNear(Complexes(RunOp("c64[4]", "fft(p0), fft_type=IFFT, fft_length={4}", {s})),
                    {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  const Literal real = Make(PrimitiveType::kF32, {4}, {1, 2, 3, 4});
  ExpectComplexNear(Complexes(RunOp("c64[3]", "fft(p0), fft_type=RFFT, fft_length={4}", {real})),
                    {{10, 0}, {-2, 2}, {-2, 0}});
  const Literal half = MakeComplex(PrimitiveType::kC64, {3}, {{10, 0}, {-2, 2}, {-2, 0}});
  EXPECT_FLOATS(RunOp("f32[4]", "fft(p0), fft_type=IRFFT, fft_length={4}", {half}), {1, 2, 3, 4});
  // Length 3 (the direct DFT): [1, 0, 0] -> all ones; 2-D over [2,3]: only the DC term is 6.
  const Literal impulse = MakeComplex(PrimitiveType::kC128, {3}, {{1, 0}, {0, 0}, {0, 0}});
  ExpectComplexNear(Complexes(RunOp("c128[3]", "fft(p0), fft_type=FFT, fft_length={3}", {impulse})),
                    {{1, 0}, {1, 0}, {1, 0}}, 1e-15);
  const Literal ones = MakeComplex(PrimitiveType::kC64, {2, 3}, std::vector<std::complex<double>>(6, 1));
  ExpectComplexNear(Complexes(RunOp("c64[2,3]", "fft(p0), fft_type=FFT, fft_length={2,3}", {ones})),
                    {{6, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}});
}

std::string LayerNormCall(const std::string& epsilon_field) {
  return "custom-call(p0, p1, p2), custom_call_target=\"__onednn$layernorm\", "
         "backend_config=\"{\\\"onednn_layer_norm_config\\\":{\\\"rescale\\\":"
         "\\\"SCALE_AND_SHIFT\\\"" + epsilon_field + "}}\"";
}

TEST(EvalTypes, HugeDirectDftIsRefusedNotRun) {
  // 100003 is prime: a direct DFT of 2 lines would take 2e10 multiply-adds.
  const Literal x(Shape::Array(PrimitiveType::kC64, {2, 100003}));
  try {
    RunOp("c64[2,100003]", "fft(p0), fft_type=FFT, fft_length={100003}", {x});
    ADD_FAILURE() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("not a power of two"), std::string::npos) << e.message();
  }
}

TEST(EvalTypes, OneDnnLayerNorm) {
  // No epsilon_typecast: epsilon 0. Rows [1, 3] and [5, 9] both normalize to (-1, 1).
  const Literal x = Make(PrimitiveType::kF32, {2, 2}, {1, 3, 5, 9});
  const Literal scale = Make(PrimitiveType::kF32, {2}, {2, 1});
  const Literal shift = Make(PrimitiveType::kF32, {2}, {0, 10});
  EXPECT_FLOATS(RunOp("f32[2,2]", LayerNormCall(""), {x, scale, shift}), {-2, 11, -2, 11});
  // epsilon_typecast 1048576000 is 0.25 as f32 bits: [0, 0, 0, 2] has mean 0.5 and variance
  // 0.75, so the divisor is sqrt(1) and the result x - 0.5.
  const Literal y = Make(PrimitiveType::kF32, {1, 4}, {0, 0, 0, 2});
  const Literal ones = Make(PrimitiveType::kF32, {4}, {1, 1, 1, 1});
  const Literal zeros = Make(PrimitiveType::kF32, {4}, {0, 0, 0, 0});
  EXPECT_FLOATS(RunOp("f32[1,4]", LayerNormCall(",\\\"epsilon_typecast\\\":1048576000"),
                      {y, ones, zeros}),
                {-0.5, -0.5, -0.5, 1.5});
}

// Constants of every new type print as XLA prints them and come back bit-identical, through
// the text form and through the proto.
TEST(EvalTypes, ConstantsRoundTripThroughTextAndProto) {
  const std::string text = R"(HloModule m
ENTRY e {
  c = c64[2] constant({(1, -2.5), (0, inf)})
  z = c128[1] constant({(0.1, 3)})
  a = f8e4m3fn[3] constant({448, -0.0625, nan})
  b = f8e5m2[2] constant({57344, -inf})
  n = f8e4m3fnuz[2] constant({240, nan})
  f = f4e2m1fn[2] constant({6, -0.5})
  x = f8e8m0fnu[2] constant({1, 0.25})
  s = s4[3] constant({-8, 7, -1})
  u = u4[2] constant({15, 0})
  ROOT t = (c64[2], c128[1], f8e4m3fn[3], f8e5m2[2], f8e4m3fnuz[2], f4e2m1fn[2], f8e8m0fnu[2], s4[3], u4[2]) tuple(c, z, a, b, n, f, x, s, u)
})";
  auto module = testing_support::ParseAndVerify(text);
  const Literal value = hlo::Evaluate(*module, {});
  const std::string printed = hlo::PrintModule(*module);
  EXPECT_NE(printed.find("constant({(1, -2.5), (0, inf)})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("s4[3]{0} constant({-8, 7, -1})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("f8e4m3fn[3]{0} constant({448, -0.0625, nan})"), std::string::npos) << printed;
  auto reparsed = testing_support::ParseAndVerify(printed);
  EXPECT_TRUE(hlo::Evaluate(*reparsed, {}).BitwiseEqual(value));
  auto from_proto = hlo::ReadHloProto(hlo::WriteHloProto(*module), "m.pb");
  EXPECT_TRUE(hlo::Evaluate(*from_proto, {}).BitwiseEqual(value));
}

}  // namespace

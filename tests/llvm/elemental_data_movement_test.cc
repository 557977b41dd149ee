// Data movement, constants, layouts and the harness itself: hand-computed values for a few
// cases, and the interpreter for the rest (non-default layouts, odd, size-1 and size-0 dims).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/llvm/elemental_test_util.h"
#include "tests/llvm/jit_harness.h"
#include "tests/test_support.h"

namespace {

using hlo::PrimitiveType;

// Random arguments for every entry parameter of `module` (edge values first).
std::vector<hlo::Literal> Arguments(const hlo::Module& module, uint64_t seed = 5) {
  std::vector<hlo::Literal> arguments;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    arguments.push_back(llvm_test::MakeInput(parameter->shape(), static_cast<int>(seed % 2), seed));
    ++seed;
  }
  return arguments;
}

std::string Check(const std::string& body) {
  auto module = testing_support::ParseAndVerify("HloModule m\n\nENTRY e {\n" + body + "}\n");
  return llvm_test::CompareWithInterpreter(*module, Arguments(*module));
}

TEST(HarnessTest, AddsTwoVectorsToHandComputedValues) {
  auto module = testing_support::ParseAndVerify(
      "HloModule m\nENTRY e {\n  a = s32[3] parameter(0)\n  b = s32[3] parameter(1)\n"
      "  ROOT r = s32[3] add(a, b)\n}\n");
  std::vector<hlo::Literal> arguments;
  for (int k = 0; k < 2; ++k) {
    arguments.emplace_back(hlo::Shape::Array(PrimitiveType::kS32, {3}));
    for (int i = 0; i < 3; ++i)
      arguments.back().SetFromInt64(i, (k + 1) * 10 + i);  // {10,11,12} {20,21,22}
  }
  hlo::Literal result = llvm_test::RunEntry(*module, arguments);
  EXPECT_EQ(result.GetAsInt64(0), 30);
  EXPECT_EQ(result.GetAsInt64(1), 32);
  EXPECT_EQ(result.GetAsInt64(2), 34);
}

TEST(HarnessTest, PhysicalLayoutRoundTrip) {
  // f32[2,3]{0,1}: column-major, so physical order is a00 a10 a01 a11 a02 a12.
  hlo::Shape shape = hlo::Shape::Array(PrimitiveType::kF32, {2, 3});
  shape.minor_to_major = {0, 1};
  shape.has_layout = true;
  hlo::Literal literal(shape);
  for (int i = 0; i < 6; ++i) literal.SetFromDouble(i, i);  // row-major 0..5
  std::vector<uint8_t> physical = llvm_test::ToPhysical(literal, shape);
  const float* values = reinterpret_cast<const float*>(physical.data());
  EXPECT_EQ(std::vector<float>(values, values + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(llvm_test::FromPhysical(physical, shape).BitwiseEqual(literal));
}

TEST(HarnessTest, UlpDistance) {
  EXPECT_EQ(llvm_test::UlpDistance(PrimitiveType::kF32, 1.0, 1.0), 0);
  EXPECT_EQ(llvm_test::UlpDistance(PrimitiveType::kF32, 0.0, -0.0), 0);
  EXPECT_EQ(llvm_test::UlpDistance(PrimitiveType::kF32, 1.0, 1.0 + 0x1p-23), 1);
  EXPECT_EQ(llvm_test::UlpDistance(PrimitiveType::kBF16, 1.0, 1.0 + 0x1p-7), 1);
  EXPECT_EQ(llvm_test::UlpDistance(PrimitiveType::kF32, 0x1p-149, -0x1p-149), 2);
}

TEST(DataMovementTest, HandComputedTransposeAndPad) {
  // transpose of [[1,2,3],[4,5,6]] is [[1,4],[2,5],[3,6]]; pad lo=1 interior=1 hi=-1 of
  // [7,8,9] with 0 gives [0,7,0,8,0] (the last element, 9, is cut by the negative high pad).
  auto module = testing_support::ParseAndVerify(
      "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  t = f32[3,2] transpose(a), "
      "dimensions={1,0}\n"
      "  v = f32[3] parameter(1)\n  z = f32[] constant(0)\n"
      "  p = f32[5] pad(v, z), padding=1_-1_1\n  ROOT r = (f32[3,2], f32[5]) tuple(t, p)\n}\n");
  std::vector<hlo::Literal> arguments;
  arguments.emplace_back(hlo::Shape::Array(PrimitiveType::kF32, {2, 3}));
  for (int i = 0; i < 6; ++i) arguments[0].SetFromDouble(i, i + 1);
  arguments.emplace_back(hlo::Shape::Array(PrimitiveType::kF32, {3}));
  for (int i = 0; i < 3; ++i) arguments[1].SetFromDouble(i, 7 + i);
  hlo::Literal result = llvm_test::RunEntry(*module, arguments);
  std::vector<double> transposed, padded;
  for (int i = 0; i < 6; ++i) transposed.push_back(result.elements()[0].GetAsDouble(i));
  for (int i = 0; i < 5; ++i) padded.push_back(result.elements()[1].GetAsDouble(i));
  EXPECT_EQ(transposed, (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(padded, (std::vector<double>{0, 7, 0, 8, 0}));
}

TEST(DataMovementTest, BroadcastReshapeTransposeWithLayouts) {
  EXPECT_EQ(
      Check("  p = f32[7,13]{0,1} parameter(0)\n"
            "  b = f32[3,7,13,1]{1,3,0,2} broadcast(p), dimensions={1,2}\n"
            "  r = f32[13,7]{1,0} reshape(p)\n"
            "  t = f32[13,7]{0,1} transpose(p), dimensions={1,0}\n"
            "  ROOT o = (f32[3,7,13,1]{1,3,0,2}, f32[13,7]{1,0}, f32[13,7]{0,1}) tuple(b, r, t)\n"),
      "");
  EXPECT_EQ(Check("  p = bf16[2,1,5] parameter(0)\n  q = bf16[5,2]{0,1} reshape(p)\n"
                  "  ROOT t = bf16[1,5,2]{0,2,1} transpose(p), dimensions={1,2,0}\n"),
            "");
}

TEST(DataMovementTest, BitcastReinterpretsPhysicalLayout) {
  EXPECT_EQ(Check("  p = f32[4,6]{0,1} parameter(0)\n  ROOT b = f32[6,4]{1,0} bitcast(p)\n"), "");
  EXPECT_EQ(Check("  p = s16[2,3,4]{2,1,0} parameter(0)\n  ROOT b = s16[4,6]{0,1} bitcast(p)\n"),
            "");
  EXPECT_EQ(Check("  p = u8[3,5] parameter(0)\n  ROOT b = u8[15] bitcast(p)\n"), "");
}

TEST(DataMovementTest, SliceReverseConcatenate) {
  EXPECT_EQ(
      Check("  p = s32[10,9] parameter(0)\n  s = s32[3,4] slice(p), slice={[1:10:3], [0:8:2]}\n"
            "  r = s32[10,9]{0,1} reverse(p), dimensions={0,1}\n"
            "  ROOT o = (s32[3,4], s32[10,9]{0,1}) tuple(s, r)\n"),
      "");
  EXPECT_EQ(
      Check(
          "  a = f16[2,3] parameter(0)\n  b = f16[2,0] parameter(1)\n  c = f16[2,1] parameter(2)\n"
          "  ROOT r = f16[2,4]{0,1} concatenate(a, b, c), dimensions={1}\n"),
      "");
  EXPECT_EQ(Check("  a = pred[1] parameter(0)\n  b = pred[6] parameter(1)\n"
                  "  ROOT r = pred[7] concatenate(a, b), dimensions={0}\n"),
            "");
}

TEST(DataMovementTest, PadWithInteriorAndNegativePadding) {
  EXPECT_EQ(Check("  p = f32[4,5] parameter(0)\n  z = f32[] parameter(1)\n"
                  "  ROOT r = f32[9,8]{0,1} pad(p, z), padding=2_0_1x-2_1_1\n"),
            "");
  EXPECT_EQ(Check("  p = s8[0,3] parameter(0)\n  z = s8[] parameter(1)\n"
                  "  ROOT r = s8[2,3] pad(p, z), padding=1_1x0_0\n"),
            "");
}

TEST(DataMovementTest, IotaOfEveryKind) {
  EXPECT_EQ(
      Check("  a = s32[4,300] iota(), iota_dimension=1\n  b = bf16[300,2]{0,1} iota(), "
            "iota_dimension=0\n"
            "  c = u8[300] iota(), iota_dimension=0\n  d = f64[3,2] iota(), iota_dimension=1\n"
            "  ROOT o = (s32[4,300], bf16[300,2]{0,1}, u8[300], f64[3,2]) tuple(a, b, c, d)\n"),
      "");
}

TEST(DataMovementTest, DynamicSliceClampsStarts) {
  const std::string body =
      "  p = f32[8,6] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
      "  ROOT r = f32[3,4] dynamic-slice(p, i, j), dynamic_slice_sizes={3,4}\n";
  auto module = testing_support::ParseAndVerify("HloModule m\nENTRY e {\n" + body + "}\n");
  for (auto [i, j] :
       std::vector<std::pair<int, int>>{{0, 0}, {-5, 1}, {7, 100}, {2, -2147483647}, {5, 2}}) {
    std::vector<hlo::Literal> arguments = Arguments(*module);
    arguments[1].SetFromInt64(0, i);
    arguments[2].SetFromInt64(0, j);
    EXPECT_EQ(llvm_test::CompareWithInterpreter(*module, arguments), "") << i << "," << j;
  }
  EXPECT_EQ(
      Check(
          "  p = u16[5,5] parameter(0)\n  i = u32[] constant(4294967295)\n  j = u32[] constant(1)\n"
          "  ROOT r = u16[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}\n"),
      "");
}

TEST(DataMovementTest, ConstantsScalarAndArray) {
  EXPECT_EQ(
      Check(
          "  p = f32[2,3] parameter(0)\n  c = f32[2,3]{0,1} constant({{1, -2, 3.5}, {4, 5, -0}})\n"
          "  s = f32[] constant(0.25)\n  b = f32[2,3] broadcast(s), dimensions={}\n"
          "  m = f32[2,3] multiply(c, b)\n  ROOT r = f32[2,3] add(p, m)\n"),
      "");
  EXPECT_EQ(
      Check(
          "  c = bf16[4] constant({1.5, -2, 3, 0.1})\n  d = pred[3] constant({true, false, true})\n"
          "  e = s8[2,2] constant({{-128, 127}, {0, 5}})\n  f = u64[] "
          "constant(18446744073709551615)\n"
          "  ROOT o = (bf16[4], pred[3], s8[2,2], u64[]) tuple(c, d, e, f)\n"),
      "");
}

TEST(DataMovementTest, ScalarOperandsOfSelectAndClamp) {
  EXPECT_EQ(
      Check("  c = pred[] parameter(0)\n  a = s64[17] parameter(1)\n  b = s64[17] parameter(2)\n"
            "  s = s64[17] select(c, a, b)\n  lo = s64[] constant(-5)\n  hi = s64[] constant(100)\n"
            "  k = s64[17] clamp(lo, a, hi)\n  ROOT o = (s64[17], s64[17]) tuple(s, k)\n"),
      "");
}

TEST(DataMovementTest, BitcastConvertChangingWidth) {
  EXPECT_EQ(Check("  p = f32[5] parameter(0)\n  a = u16[5,2] bitcast-convert(p)\n"
                  "  q = u8[3,8] parameter(1)\n  b = f64[3] bitcast-convert(q)\n"
                  "  ROOT o = (u16[5,2], f64[3]) tuple(a, b)\n"),
            "");
}

TEST(DataMovementTest, EmptyAndSizeOneShapes) {
  EXPECT_EQ(
      Check("  p = f32[0,4] parameter(0)\n  ROOT r = f32[4,0] transpose(p), dimensions={1,0}\n"),
      "");
  EXPECT_EQ(Check("  p = f32[1,1,1] parameter(0)\n  ROOT r = f32[1] reshape(p)\n"), "");
  EXPECT_EQ(Check("  p = f32[] parameter(0)\n  ROOT r = f32[] exponential(p)\n"), "");
}

}  // namespace

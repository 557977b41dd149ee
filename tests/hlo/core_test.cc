// Core IR tests: the opcode and type tables, shapes, literals and bf16/f16 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hlo/ir.h"
#include "hlo/literal.h"

namespace hlo {
namespace {

TEST(OpcodeTable, NamesRoundTrip) {
  for (int i = 0; i < OpcodeCount(); ++i) {
    Opcode op = static_cast<Opcode>(i);
    auto back = OpcodeFromName(OpcodeName(op));
    ASSERT_TRUE(back.has_value()) << OpcodeName(op);
    EXPECT_EQ(*back, op);
  }
  EXPECT_FALSE(OpcodeFromName("no-such-op").has_value());
  EXPECT_EQ(OpcodeArity(Opcode::kAdd), 2);
  EXPECT_EQ(OpcodeArity(Opcode::kTuple), kVariadic);
  EXPECT_TRUE(IsElementwise(Opcode::kSelect));
  EXPECT_FALSE(IsElementwise(Opcode::kDot));
}

TEST(PrimitiveTypes, NamesAndProtoNumbers) {
  EXPECT_EQ(PrimitiveTypeFromName("bf16"), PrimitiveType::kBF16);
  EXPECT_EQ(ProtoNumber(PrimitiveType::kBF16), 16);
  EXPECT_EQ(ProtoNumber(PrimitiveType::kF32), 11);
  EXPECT_EQ(PrimitiveTypeFromProtoNumber(4), PrimitiveType::kS32);
  EXPECT_EQ(ByteSize(PrimitiveType::kF64), 8);
}

TEST(Shape, ToStringAndLayout) {
  Shape s = Shape::Array(PrimitiveType::kF32, {2, 3});
  EXPECT_EQ(s.ToString(), "f32[2,3]");
  s.has_layout = true;
  s.minor_to_major = {0, 1};
  EXPECT_EQ(s.ToString(), "f32[2,3]{0,1}");
  EXPECT_FALSE(s.HasDefaultLayout());
  Shape t = Shape::Tuple({Shape::Scalar(PrimitiveType::kS32), s});
  EXPECT_EQ(t.ToString(false), "(s32[], f32[2,3])");
  EXPECT_EQ(Shape::Array(PrimitiveType::kF32, {int64_t{1} << 40, int64_t{1} << 40}).ElementCount(),
            -1);
}

TEST(BF16, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBF16(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly half way between bf16 1.0 and 1.0078125: ties to even (1.0).
  EXPECT_EQ(FloatToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3*2^-8 is half way between 1.0078125 (odd) and 1.015625 (even): rounds up.
  EXPECT_EQ(FloatToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(BF16ToFloat(FloatToBF16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(BF16ToFloat(FloatToBF16(-0.0f)), 0.0f);
  EXPECT_TRUE(std::signbit(BF16ToFloat(FloatToBF16(-0.0f))));
  EXPECT_EQ(BF16ToFloat(FloatToBF16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  // The largest finite float rounds up to infinity in bf16.
  EXPECT_TRUE(std::isinf(BF16ToFloat(FloatToBF16(std::numeric_limits<float>::max()))));
}

TEST(F16, RoundTripAndRounding) {
  EXPECT_EQ(FloatToF16(1.0f), 0x3c00);
  EXPECT_EQ(FloatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToF16(65520.0f), 0x7c00);  // ties to even -> infinity
  EXPECT_EQ(FloatToF16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToF16(std::ldexp(1.0f, -25)), 0x0000);  // half of it: ties to even (0)
  EXPECT_EQ(F16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F16ToFloat(0xc000), -2.0f);
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    ASSERT_EQ(FloatToF16(F16ToFloat(static_cast<uint16_t>(h))), h);
  }
}

TEST(Literal, ConversionsSaturateAndWrap) {
  Literal s8(Shape::Array(PrimitiveType::kS8, {3}));
  s8.SetFromDouble(0, 1000.0);
  s8.SetFromDouble(1, std::nan(""));
  s8.SetFromInt64(2, 300);  // integer conversion wraps: 300 mod 256 = 44
  EXPECT_EQ(s8.GetAsInt64(0), 127);
  EXPECT_EQ(s8.GetAsInt64(1), 0);
  EXPECT_EQ(s8.GetAsInt64(2), 44);
}

TEST(Literal, CopiesShareBytesUntilOneWrites) {
  Literal original(Shape::Array(PrimitiveType::kF32, {1000}));
  original.SetFromDouble(7, 1.5);
  const int64_t live = LiveLiteralBytes();
  Literal copy = original;
  Literal tuple = Literal::Tuple({original, copy});
  EXPECT_TRUE(copy.SharesBytesWith(original));
  EXPECT_TRUE(tuple.elements()[1].SharesBytesWith(original));
  EXPECT_EQ(LiveLiteralBytes(), live);  // three copies, one array of bytes
  // Each way of writing makes the bytes the writer's own; the others keep the old value.
  copy.SetFromDouble(7, 2.5);
  EXPECT_FALSE(copy.SharesBytesWith(original));
  EXPECT_EQ(original.GetAsDouble(7), 1.5);
  EXPECT_EQ(copy.GetAsDouble(7), 2.5);
  tuple.mutable_elements()[0].mutable_data<float>()[7] = 3.5f;
  EXPECT_EQ(original.GetAsDouble(7), 1.5);
  EXPECT_EQ(tuple.elements()[0].GetAsDouble(7), 3.5);
  Literal bytes_writer = original;
  bytes_writer.mutable_bytes()[0] = 1;
  EXPECT_EQ(original.bytes()[0], 0);
  EXPECT_TRUE(tuple.elements()[1].SharesBytesWith(original));
  EXPECT_TRUE(original.BitwiseEqual(tuple.elements()[1]));
  EXPECT_FALSE(original.BitwiseEqual(copy));
}

// A freed block of 1 MiB or more is kept for the next literal of the same size (no page faults
// for a result computed again), is not counted live, and an allocation of another size frees
// what was kept.
TEST(Literal, LargeBlocksAreReusedForTheSameSize) {
  const Shape two_mib = Shape::Array(PrimitiveType::kF32, {512 * 1024});
  const Shape four_mib = Shape::Array(PrimitiveType::kF32, {1024 * 1024});
  ASSERT_GE(GlobalLimits().max_live_literal_bytes / 16, 8 * 1024 * 1024);
  Literal{four_mib};  // kept when freed
  EXPECT_EQ(detail::ReusableLiteralBlockBytes(), 4u * 1024 * 1024);
  const int64_t live = LiveLiteralBytes();
  const void* address = nullptr;
  {
    Literal first = Literal::ForOverwrite(two_mib);  // no 2 MiB block: the 4 MiB one is freed
    EXPECT_EQ(detail::ReusableLiteralBlockBytes(), 0u);
    address = first.bytes().data();
    EXPECT_EQ(LiveLiteralBytes(), live + 2 * 1024 * 1024);
  }
  EXPECT_EQ(LiveLiteralBytes(), live);
  EXPECT_EQ(detail::ReusableLiteralBlockBytes(), 2u * 1024 * 1024);
  {
    Literal again(two_mib);  // zero-filled as always, in the kept block
    EXPECT_EQ(static_cast<const void*>(again.bytes().data()), address);
    EXPECT_EQ(again.GetAsDouble(123), 0.0);
    EXPECT_EQ(detail::ReusableLiteralBlockBytes(), 0u);
  }
  EXPECT_EQ(detail::ReusableLiteralBlockBytes(), 2u * 1024 * 1024);
  Literal other(Shape::Array(PrimitiveType::kF32, {3 * 256 * 1024}));  // 3 MiB: no block fits
  EXPECT_EQ(detail::ReusableLiteralBlockBytes(), 0u);
  Literal small(Shape::Array(PrimitiveType::kF32, {1000}));
  small = Literal();  // small blocks go straight back to the allocator
  EXPECT_EQ(detail::ReusableLiteralBlockBytes(), 0u);
}

TEST(Literal, AllocationLimitIsAnError) {
  Shape huge = Shape::Array(PrimitiveType::kF32, {1000000, 1000000});
  EXPECT_THROW(Literal{huge}, Error);
}

TEST(Module, CloneIsDeep) {
  Module m("m");
  auto* c = m.AddComputation(std::make_unique<Computation>("main"));
  auto p = std::make_unique<Instruction>("p", Opcode::kParameter, Shape::Scalar(PrimitiveType::kF32));
  p->set_attrs(ParameterAttrs{0});
  Instruction* param = c->AddInstruction(std::move(p));
  auto n = std::make_unique<Instruction>("n", Opcode::kNegate, Shape::Scalar(PrimitiveType::kF32));
  n->AppendOperand(param);
  c->set_root(c->AddInstruction(std::move(n)));
  m.set_entry(c);
  auto clone = m.Clone();
  ASSERT_EQ(clone->entry()->instructions().size(), 2u);
  EXPECT_NE(clone->entry()->root(), c->root());
  EXPECT_EQ(clone->entry()->root()->operand(0), clone->entry()->parameter(0));
  EXPECT_EQ(param->users().size(), 1u);
}

}  // namespace
}  // namespace hlo

#include "hlo/json_text.h"

namespace hlo {
namespace {

TEST(JsonText, StringsAreAlwaysValidJson) {
  EXPECT_EQ(JsonString("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonString(std::string("\n\x01\x7f", 3)), R"("\u000a\u0001\u007f")");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");      // valid UTF-8 kept
  EXPECT_EQ(JsonString("x\xff" "y"), R"("x\ufffdy")");            // invalid byte replaced
  EXPECT_EQ(JsonString("\xe2\x82"), R"("\ufffd\ufffd")");         // truncated sequence
}

TEST(JsonText, NumbersAreShortestExactOrNull) {
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  EXPECT_EQ(JsonNumber(3.0), "3");
  EXPECT_EQ(JsonNumber(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(JsonNumber(std::nan("")), "null");
  EXPECT_EQ(JsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

}  // namespace
}  // namespace hlo

// Field numbers, checked independently of hlo/hlo.proto: the bytes below are encoded by hand
// from the numbers XLA documents (xla/service/hlo.proto, xla/xla_data.proto), with a ten-line
// varint encoder, and must read as the intended module. A wrong number in our schema makes a
// field vanish here (protobuf skips unknown fields), so the value checks catch it.
#include <gtest/gtest.h>

#include <cstring>

#include "hlo/proto_io.h"

namespace {

std::string Varint(uint64_t v) {
  std::string out;
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<char>(v ? byte | 0x80 : byte));
  } while (v);
  return out;
}
std::string Int(int field, int64_t v) { return Varint(uint64_t(field) << 3 | 0) + Varint(uint64_t(v)); }
std::string Bytes(int field, const std::string& s) {
  return Varint(uint64_t(field) << 3 | 2) + Varint(s.size()) + s;
}
std::string Floats(const std::vector<float>& values) {
  std::string raw(values.size() * 4, '\0');
  std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

// ShapeProto: element_type = 2, dimensions = 3, layout = 5 (LayoutProto.minor_to_major = 1).
std::string ArrayShape(int element_type, std::vector<int64_t> dims, std::vector<int64_t> m2m) {
  std::string shape = Int(2, element_type);
  for (int64_t d : dims) shape += Int(3, d);
  std::string layout;
  for (int64_t d : m2m) layout += Int(1, d);
  return shape + Bytes(5, layout);
}

// HloInstructionProto: name = 1, opcode = 2, shape = 3, id = 35, operand_ids = 36.
std::string Instruction(const std::string& name, const std::string& opcode,
                        const std::string& shape, int64_t id, std::vector<int64_t> operands,
                        const std::string& extra = "") {
  std::string out = Bytes(1, name) + Bytes(2, opcode) + Bytes(3, shape) + Int(35, id);
  for (int64_t o : operands) out += Int(36, o);
  return out + extra;
}

constexpr int kF32 = 11, kS32 = 4, kPred = 1, kBF16 = 16;

std::string HandEncodedModule() {
  std::string f32x2 = ArrayShape(kF32, {2}, {0});
  std::string p = Instruction("p", "parameter", f32x2, 7, {}, Int(9, 0));  // parameter_number = 9
  // LiteralProto (field 8): shape = 1, f32s = 8 (packed).
  std::string literal = Bytes(1, f32x2) + Bytes(8, Floats({1.5f, -2.0f}));
  std::string c = Instruction("c", "constant", f32x2, 9, {}, Bytes(8, literal));
  std::string a = Instruction("a", "add", f32x2, 11, {7, 9});
  // compare: comparison_direction = 63.
  std::string lt = Instruction("lt", "compare", ArrayShape(kPred, {2}, {0}), 12, {11, 7},
                               Bytes(63, "LT"));
  // slice: slice_dimensions = 17 {start = 1, limit = 2, stride = 3}.
  std::string s = Instruction("s", "slice", ArrayShape(kF32, {1}, {0}), 13, {11},
                              Bytes(17, Int(1, 1) + Int(2, 2) + Int(3, 1)));
  // dot: dot_dimension_numbers = 30 {lhs_contracting = 1, rhs_contracting = 2}.
  std::string d = Instruction("d", "dot", ArrayShape(kF32, {}, {}), 14, {11, 7},
                              Bytes(30, Int(1, 0) + Int(2, 0)));
  // get-tuple-element tuple_index = 13 on a tuple (element_type 13, tuple_shapes = 4).
  std::string t = Instruction("t", "tuple", Int(2, 13) + Bytes(4, f32x2) + Bytes(4, f32x2), 15,
                              {11, 9});
  std::string g = Instruction("g", "get-tuple-element", f32x2, 16, {15}, Int(13, 1));
  // OpMetadata (field 7): op_type = 1, op_name = 2, source_file = 3, source_line = 4.
  std::string meta = Bytes(7, Bytes(1, "T") + Bytes(2, "N") + Bytes(3, "f.py") + Int(4, 9));
  std::string b = Instruction("b", "convert", ArrayShape(kBF16, {2}, {0}), 17, {16}, meta);
  // HloComputationProto: name = 1, instructions = 2, id = 5, root_id = 6.
  std::string computation = Bytes(1, "main");
  for (const std::string& i : {p, c, a, lt, s, d, t, g, b}) computation += Bytes(2, i);
  computation += Int(5, 3) + Int(6, 17);
  // HloModuleProto: name = 1, computations = 3, entry_computation_id = 6.
  return Bytes(1, "hand") + Bytes(3, computation) + Int(6, 3);
}

void ExpectHandModule(const hlo::Module& m) {
  EXPECT_EQ(m.name(), "hand");
  ASSERT_NE(m.entry(), nullptr);
  EXPECT_EQ(m.entry()->name(), "main");
  EXPECT_EQ(m.entry()->root()->name(), "b");
  const hlo::Instruction* p = m.entry()->FindInstruction("p");
  EXPECT_EQ(p->opcode(), hlo::Opcode::kParameter);
  EXPECT_EQ(p->shape().ToString(), "f32[2]{0}");
  EXPECT_EQ(p->id(), 7);
  const auto& literal = m.entry()->FindInstruction("c")->attr<hlo::ConstantAttrs>().literal;
  EXPECT_EQ(literal.GetAsDouble(0), 1.5);
  EXPECT_EQ(literal.GetAsDouble(1), -2.0);
  const hlo::Instruction* a = m.entry()->FindInstruction("a");
  ASSERT_EQ(a->operand_count(), 2);
  EXPECT_EQ(a->operand(0)->name(), "p");
  EXPECT_EQ(a->operand(1)->name(), "c");
  EXPECT_EQ(m.entry()->FindInstruction("lt")->attr<hlo::CompareAttrs>().direction,
            hlo::ComparisonDirection::kLt);
  hlo::SliceDim expected_slice{1, 2, 1};
  EXPECT_EQ(m.entry()->FindInstruction("s")->attr<hlo::SliceAttrs>().dims.at(0), expected_slice);
  const auto& dot = m.entry()->FindInstruction("d")->attr<hlo::DotAttrs>().dnums;
  EXPECT_EQ(dot.lhs_contracting, std::vector<int64_t>{0});
  EXPECT_EQ(dot.rhs_contracting, std::vector<int64_t>{0});
  EXPECT_EQ(m.entry()->FindInstruction("t")->shape().ToString(), "(f32[2]{0}, f32[2]{0})");
  EXPECT_EQ(m.entry()->FindInstruction("g")->attr<hlo::TupleIndexAttrs>().index, 1);
  const hlo::Instruction* b = m.entry()->FindInstruction("b");
  ASSERT_EQ(b->opaque_attributes().size(), 1u);
  EXPECT_EQ(b->opaque_attributes()[0].name, "metadata");
  EXPECT_EQ(b->opaque_attributes()[0].value,
            "{op_type=\"T\" op_name=\"N\" source_file=\"f.py\" source_line=9}");
}

TEST(ProtoWire, ReadsHandEncodedBareModule) {
  ExpectHandModule(*hlo::ReadHloProto(HandEncodedModule(), "hand.pb"));
}

TEST(ProtoWire, ReadsHandEncodedHloProtoWrapper) {
  // HloProto: hlo_module = 1.
  ExpectHandModule(*hlo::ReadHloProto(Bytes(1, HandEncodedModule()), "hand.pb"));
}

TEST(ProtoWire, UnknownFieldsAreSkipped) {
  // Fields XLA has and we do not declare (e.g. HloModuleProto.is_dynamic = 11, a future
  // field 999 with a nested message) must not disturb reading.
  std::string module = HandEncodedModule() + Int(11, 1) + Bytes(999, Bytes(1, "x"));
  ExpectHandModule(*hlo::ReadHloProto(module, "hand.pb"));
}

TEST(ProtoWire, WrittenBareModuleStartsWithNameField) {
  auto m = hlo::ReadHloProto(HandEncodedModule(), "hand.pb");
  std::string bare = hlo::WriteHloProto(*m, false);
  std::string wrapped = hlo::WriteHloProto(*m, true);
  // Field 1, wire type 2 (0x0a), then the length; the wrapper nests the module in its field 1.
  ASSERT_GE(bare.size(), 6u);
  EXPECT_EQ(bare.substr(0, 6), std::string("\x0a\x04hand", 6));
  EXPECT_EQ(static_cast<uint8_t>(wrapped[0]), 0x0a);
  EXPECT_NE(wrapped.find(bare.substr(0, 6)), std::string::npos);
  ExpectHandModule(*hlo::ReadHloProto(wrapped, "again.pb"));
}

}  // namespace

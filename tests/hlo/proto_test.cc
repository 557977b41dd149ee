// Binary proto I/O on hand-built modules (no text parser involved): every typed attribute
// struct, exact constant bits, opaque attributes mapped to XLA's fields, protos in XLA's own style
// (no Retarget extension), and malformed input. Wire-level field numbers are checked in
// proto_wire_test.cc, the corpus round trip in proto_corpus_test.cc.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "hlo.pb.h"
#include "hlo/proto_io.h"
#include "tests/hlo/proto_test_util.h"
#include "tests/test_support.h"

namespace {

using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;
using proto_test::ComputationBuilder;

template <typename T>
hlo::Literal MakeLiteral(PrimitiveType type, std::vector<int64_t> dims, std::vector<T> values) {
  hlo::Literal literal(Shape::Array(type, std::move(dims)));
  std::memcpy(literal.mutable_bytes().data(), values.data(), values.size() * sizeof(T));
  return literal;
}

hlo::Attrs Constant(hlo::Literal literal, bool elided = false) {
  return hlo::ConstantAttrs{std::move(literal), elided};
}

const Shape kF32Scalar = Shape::Scalar(PrimitiveType::kF32);

// A module that exercises every attribute struct, every element type and the control ops.
std::unique_ptr<hlo::Module> BuildEverythingModule() {
  auto module = std::make_unique<hlo::Module>("everything");
  module->mutable_header_attributes() = {
      {"input_output_alias", "{ {0}: (1, {}, may-alias), {1, 2}: (0, {3}, must-alias) }"},
      {"num_partitions", "4"},
      {"frontend_attributes", "{a=\"1\",b=\"x y\"}"}};
  module->mutable_trailing_tables() = "FileNames\n1 \"a.py\"\n";

  ComputationBuilder add{proto_test::NewComputation(*module, "add_f32")};
  add.computation->set_root(add.Add("sum", Opcode::kAdd, kF32Scalar,
                                    {add.Parameter("x", 0, kF32Scalar),
                                     add.Parameter("y", 1, kF32Scalar)}));

  Shape state = Shape::Tuple({Shape::Scalar(PrimitiveType::kS32), kF32Scalar});
  ComputationBuilder cond{proto_test::NewComputation(*module, "cond")};
  hlo::Instruction* cs = cond.Parameter("cs", 0, state);
  cond.computation->set_root(cond.Add(
      "lt", Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred),
      {cond.Add("i", Opcode::kGetTupleElement, Shape::Scalar(PrimitiveType::kS32), {cs},
                hlo::TupleIndexAttrs{0}),
       cond.Add("ten", Opcode::kConstant, Shape::Scalar(PrimitiveType::kS32), {},
                Constant(MakeLiteral<int32_t>(PrimitiveType::kS32, {}, {10})))},
      hlo::CompareAttrs{hlo::ComparisonDirection::kLt, hlo::ComparisonType::kSigned}));
  cond.computation->mutable_opaque_attributes() = {{"execution_thread", "\"main\""}};

  ComputationBuilder body{proto_test::NewComputation(*module, "body")};
  hlo::Instruction* bs = body.Parameter("bs", 0, state);
  body.computation->set_root(body.Add("next", Opcode::kTuple, state, {bs, bs}));

  ComputationBuilder e{proto_test::NewComputation(*module, "main")};
  Shape p0_shape = Shape::Array(PrimitiveType::kF32, {2, 3});
  p0_shape.has_layout = true;
  p0_shape.minor_to_major = {0, 1};
  hlo::Instruction* p0 = e.Parameter("p0", 0, p0_shape);
  hlo::Instruction* p1 = e.Parameter("p1", 1, Shape::Array(PrimitiveType::kBF16, {4}));
  Shape scalar_with_layout = kF32Scalar;
  scalar_with_layout.has_layout = true;  // `f32[]{}`: an empty but present layout
  hlo::Instruction* zero = e.Add("zero", Opcode::kConstant, scalar_with_layout, {},
                                 Constant(MakeLiteral<float>(PrimitiveType::kF32, {}, {-0.0f})));
  // Bit patterns written by hand: a NaN with payload, -0, +inf, -inf, the smallest denormal.
  e.Add("f32s", Opcode::kConstant, Shape::Array(PrimitiveType::kF32, {5}), {},
        Constant(MakeLiteral<uint32_t>(PrimitiveType::kF32, {5},
                                       {0x7fc00001u, 0x80000000u, 0x7f800000u, 0xff800000u, 1u})));
  e.Add("bf16s", Opcode::kConstant, Shape::Array(PrimitiveType::kBF16, {3}), {},
        Constant(MakeLiteral<uint16_t>(PrimitiveType::kBF16, {3}, {0x7fc1, 0x8000, 0x3f80})));
  e.Add("f16s", Opcode::kConstant, Shape::Array(PrimitiveType::kF16, {2}), {},
        Constant(MakeLiteral<uint16_t>(PrimitiveType::kF16, {2}, {0x7c00, 0x0001})));
  e.Add("f64s", Opcode::kConstant, Shape::Array(PrimitiveType::kF64, {2}), {},
        Constant(MakeLiteral<uint64_t>(PrimitiveType::kF64, {2},
                                       {0x8000000000000000ull, 0x7ff8000000000123ull})));
  e.Add("preds", Opcode::kConstant, Shape::Array(PrimitiveType::kPred, {3}), {},
        Constant(MakeLiteral<uint8_t>(PrimitiveType::kPred, {3}, {1, 0, 1})));
  e.Add("s8s", Opcode::kConstant, Shape::Array(PrimitiveType::kS8, {2}), {},
        Constant(MakeLiteral<int8_t>(PrimitiveType::kS8, {2}, {-128, 127})));
  e.Add("u8s", Opcode::kConstant, Shape::Array(PrimitiveType::kU8, {1}), {},
        Constant(MakeLiteral<uint8_t>(PrimitiveType::kU8, {1}, {255})));
  e.Add("s16s", Opcode::kConstant, Shape::Array(PrimitiveType::kS16, {2}), {},
        Constant(MakeLiteral<int16_t>(PrimitiveType::kS16, {2}, {-32768, 1})));
  e.Add("u16s", Opcode::kConstant, Shape::Array(PrimitiveType::kU16, {1}), {},
        Constant(MakeLiteral<uint16_t>(PrimitiveType::kU16, {1}, {65535})));
  e.Add("u32s", Opcode::kConstant, Shape::Array(PrimitiveType::kU32, {1}), {},
        Constant(MakeLiteral<uint32_t>(PrimitiveType::kU32, {1}, {4294967295u})));
  e.Add("s64s", Opcode::kConstant, Shape::Array(PrimitiveType::kS64, {2}), {},
        Constant(MakeLiteral<int64_t>(PrimitiveType::kS64, {2},
                                      {std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max()})));
  e.Add("u64s", Opcode::kConstant, Shape::Array(PrimitiveType::kU64, {1}), {},
        Constant(MakeLiteral<uint64_t>(PrimitiveType::kU64, {1}, {~0ull})));
  e.Add("empty", Opcode::kConstant, Shape::Array(PrimitiveType::kF32, {0, 3}), {},
        Constant(hlo::Literal(Shape::Array(PrimitiveType::kF32, {0, 3}))));
  std::vector<hlo::Literal> tuple_elements;
  tuple_elements.push_back(MakeLiteral<int32_t>(PrimitiveType::kS32, {}, {-7}));
  tuple_elements.push_back(MakeLiteral<float>(PrimitiveType::kF32, {2}, {0.5f, 2.0f}));
  hlo::Literal tuple_literal = hlo::Literal::Tuple(std::move(tuple_elements));
  Shape tuple_shape = tuple_literal.shape();  // copied before the literal is moved below
  e.Add("tuple_constant", Opcode::kConstant, tuple_shape, {}, Constant(std::move(tuple_literal)));
  e.Add("elided", Opcode::kConstant, Shape::Array(PrimitiveType::kF32, {2}), {},
        Constant(MakeLiteral<float>(PrimitiveType::kF32, {2}, {0.25f, -0.75f}), true));

  Shape f32_2x3 = Shape::Array(PrimitiveType::kF32, {2, 3});
  e.Add("iota", Opcode::kIota, Shape::Array(PrimitiveType::kS32, {4}), {}, hlo::IotaAttrs{0});
  e.Add("bcast", Opcode::kBroadcast, f32_2x3, {zero}, hlo::DimensionsAttrs{{}});
  e.Add("reduce", Opcode::kReduce, Shape::Array(PrimitiveType::kF32, {2}), {p0, zero},
        hlo::DimensionsAttrs{{1}})
      ->mutable_called_computations() = {add.computation};
  e.Add("slice", Opcode::kSlice, Shape::Array(PrimitiveType::kF32, {1, 2}), {p0},
        hlo::SliceAttrs{{{1, 2, 1}, {0, 3, 2}}});
  e.Add("dslice", Opcode::kDynamicSlice, Shape::Array(PrimitiveType::kF32, {1, 3}), {p0},
        hlo::DynamicSliceAttrs{{1, 3}});
  e.Add("pad", Opcode::kPad, Shape::Array(PrimitiveType::kF32, {3, 7}), {p0, zero},
        hlo::PadAttrs{{{1, 0, 0}, {-1, 2, 1}}});
  e.Add("dot", Opcode::kDot, Shape::Array(PrimitiveType::kF32, {2, 2}), {p0, p0},
        hlo::DotAttrs{{{}, {1}, {}, {1}}, {{hlo::Precision::kHigh, hlo::Precision::kHighest}}});
  hlo::ConvolutionAttrs conv;
  conv.window.dims = {{3, 2, 1, 1, 1, 2, true}};
  conv.dnums = {0, 2, {1}, 1, 0, {2}, 0, 2, {1}};
  conv.feature_group_count = 2;
  conv.batch_group_count = 1;
  e.Add("conv", Opcode::kConvolution, f32_2x3, {p0, p0}, conv);
  e.Add("rwin", Opcode::kReduceWindow, f32_2x3, {p0, zero},
        hlo::WindowAttrs{{{{2, 1, 0, 1, 1, 1, false}, {1, 1, 0, 0, 1, 1, false}}}})
      ->mutable_called_computations() = {add.computation};
  hlo::GatherAttrs gather;
  gather.dnums = {{1}, {0}, {0}, {}, {}, 1};
  gather.slice_sizes = {1, 3};
  gather.indices_are_sorted = true;
  e.Add("gather", Opcode::kGather, f32_2x3, {p0, p1}, gather);
  hlo::ScatterAttrs scatter;
  scatter.dnums = {{1}, {0}, {0}, {2}, {3}, 1};
  scatter.unique_indices = true;
  e.Add("scatter", Opcode::kScatter, f32_2x3, {p0, p1, p0}, scatter)
      ->mutable_called_computations() = {add.computation};
  hlo::Instruction* init = e.Add("init", Opcode::kTuple, state, {});
  hlo::Instruction* loop = e.Add("loop", Opcode::kWhile, state, {init});
  loop->mutable_called_computations() = {cond.computation, body.computation};
  e.Add("gte", Opcode::kGetTupleElement, kF32Scalar, {loop}, hlo::TupleIndexAttrs{1});
  e.Add("fusion", Opcode::kFusion, kF32Scalar, {zero, zero}, hlo::FusionAttrs{hlo::FusionKind::kInput})
      ->mutable_called_computations() = {add.computation};
  e.Add("cc", Opcode::kCustomCall, kF32Scalar, {p0},
        hlo::CustomCallAttrs{"te_fused_attn_forward_ffi", 4, "{attn_heads = 32 : i64}", true});
  e.Add("cc_quoted", Opcode::kCustomCall, kF32Scalar, {p0},
        hlo::CustomCallAttrs{"Foo", 0, "\"opaque\\n\"", false});
  e.Add("sort", Opcode::kSort, p0_shape, {p0}, hlo::SortAttrs{1, true})
      ->mutable_called_computations() = {cond.computation};
  e.Add("topk", Opcode::kTopK, p0_shape, {p0}, hlo::TopKAttrs{10, false});
  e.Add("bn", Opcode::kBatchNormInference, f32_2x3, {p0, p1, p1, p1, p1},
        hlo::BatchNormAttrs{0.001f, 1});
  e.Add("rp", Opcode::kReducePrecision, f32_2x3, {p0}, hlo::ReducePrecisionAttrs{5, 10});
  hlo::CollectiveAttrs all_gather;
  all_gather.replica_groups = {{0, 1}, {2, 3}};
  all_gather.dimension = 1;
  all_gather.channel_id = 7;
  all_gather.use_global_device_ids = true;
  e.Add("ag", Opcode::kAllGather, f32_2x3, {p0}, all_gather);
  hlo::CollectiveAttrs permute;
  permute.source_target_pairs = {{0, 1}, {1, 0}};
  e.Add("cp", Opcode::kCollectivePermute, f32_2x3, {p0}, permute);
  e.Add("rng", Opcode::kRng, f32_2x3, {zero, zero}, hlo::RngAttrs{hlo::RngDistribution::kNormal});
  hlo::Instruction* cmp = e.Add("cmp", Opcode::kCompare, Shape::Array(PrimitiveType::kPred, {2, 3}),
                                {p0, p0}, hlo::CompareAttrs{hlo::ComparisonDirection::kNe,
                                                            hlo::ComparisonType::kTotalOrder});
  // Opaque attributes: some map to XLA fields exactly, some only survive in the extension.
  cmp->mutable_opaque_attributes() = {
      {"sharding", "{devices=[4,1]<=[4]}"},
      {"metadata", "{op_type=\"lt\" op_name=\"jit(f)/lt\" source_file=\"a \\\"b\\\".py\" source_line=12}"},
      {"backend_config", "\"cfg\""},
      {"frontend_attributes", "{_xla_compute_type=\"host\"}"},
      {"operand_layout_constraints", "{f32[2,3]{1,0}}"},
      {"metadata", "{op_name=\"second\"}"}};
  hlo::Instruction* root = e.Add("root", Opcode::kAdd, f32_2x3, {cmp, p0});
  root->mutable_opaque_attributes() = {{"metadata", "{op_name=\"x\"   source_line=3}"},
                                       {"sharding", "{replicated}"}};
  e.computation->set_root(root);
  module->set_entry(e.computation);
  return module;
}

hlo::Error CatchError(std::string_view bytes, const std::string& filename = "bad.pb") {
  try {
    hlo::ReadHloProto(bytes, filename);
  } catch (const hlo::Error& error) {
    return error;
  }
  ADD_FAILURE() << "expected an hlo::Error";
  return hlo::Error("none");
}

void ExpectErrorContains(std::string_view bytes, const std::string& text) {
  hlo::Error error = CatchError(bytes);
  EXPECT_NE(error.message().find(text), std::string::npos) << error.message();
  ASSERT_TRUE(error.location().file);
  EXPECT_EQ(*error.location().file, "bad.pb");
  EXPECT_EQ(error.location().line, 0u);
}

xla::HloModuleProto ToProto(const hlo::Module& module) {
  xla::HloModuleProto proto;
  EXPECT_TRUE(proto.ParseFromString(hlo::WriteHloProto(module, false)));
  return proto;
}

std::string Serialize(const xla::HloModuleProto& proto) {
  std::string out;
  proto.SerializeToString(&out);
  return out;
}

TEST(ProtoIo, EverythingRoundTripsBareAndWrapped) {
  auto module = BuildEverythingModule();
  for (bool wrap : {false, true}) {
    SCOPED_TRACE(wrap ? "HloProto wrapper" : "bare HloModuleProto");
    auto back = hlo::ReadHloProto(hlo::WriteHloProto(*module, wrap), "m.pb");
    proto_test::ExpectSameModule(*module, *back);
  }
}

TEST(ProtoIo, ConstantBitsSurviveExactly) {
  auto back = hlo::ReadHloProto(hlo::WriteHloProto(*BuildEverythingModule()), "m.pb");
  const hlo::Computation* main = back->entry();
  auto data = [&](const char* name) {
    return main->FindInstruction(name)->attr<hlo::ConstantAttrs>().literal.bytes();
  };
  auto f32 = data("f32s");
  uint32_t first;
  std::memcpy(&first, f32.data(), 4);
  EXPECT_EQ(first, 0x7fc00001u);  // the NaN payload is kept, not canonicalized
  auto bf16 = data("bf16s");
  EXPECT_EQ(bf16[0], 0xc1);  // little endian 0x7fc1
  EXPECT_EQ(bf16[1], 0x7f);
  EXPECT_EQ(data("empty").size(), 0u);
  const auto& elided = main->FindInstruction("elided")->attr<hlo::ConstantAttrs>();
  EXPECT_TRUE(elided.elided);
  EXPECT_EQ(elided.literal.GetAsDouble(1), -0.75);
  const auto& tuple = main->FindInstruction("tuple_constant")->attr<hlo::ConstantAttrs>().literal;
  ASSERT_EQ(tuple.elements().size(), 2u);
  EXPECT_EQ(tuple.elements()[0].GetAsInt64(0), -7);
  EXPECT_EQ(tuple.elements()[1].GetAsDouble(1), 2.0);
}

TEST(ProtoIo, WritesXlaFieldsForInterop) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  EXPECT_EQ(proto.entry_computation_name(), "main");
  const xla::HloComputationProto& main = proto.computations(3);
  EXPECT_EQ(proto.entry_computation_id(), main.id());
  EXPECT_EQ(proto.host_program_shape().parameters_size(), 2);
  // The program shape always carries a layout, even where the IR has none (p1).
  EXPECT_EQ(proto.host_program_shape().parameters(1).layout().minor_to_major_size(), 1);
  auto find = [&](const std::string& name) -> const xla::HloInstructionProto& {
    for (const auto& i : main.instructions()) {
      if (i.name() == name) return i;
    }
    throw std::runtime_error("no instruction " + name);
  };
  const auto& loop = find("loop");
  // XLA orders while computations {body, condition}.
  EXPECT_EQ(loop.called_computation_ids(0), proto.computations(2).id());
  EXPECT_EQ(loop.called_computation_ids(1), proto.computations(1).id());
  const auto& cmp = find("cmp");
  EXPECT_EQ(cmp.comparison_direction(), "NE");
  EXPECT_EQ(cmp.comparison_type(), "TOTALORDER");
  EXPECT_EQ(cmp.metadata().op_type(), "lt");
  EXPECT_EQ(cmp.metadata().source_file(), "a \"b\".py");
  EXPECT_EQ(cmp.metadata().source_line(), 12);
  EXPECT_EQ(cmp.sharding().type(), xla::OpSharding::OTHER);
  EXPECT_EQ(std::vector<int64_t>(cmp.sharding().tile_assignment_dimensions().begin(),
                                 cmp.sharding().tile_assignment_dimensions().end()),
            (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(cmp.sharding().iota_reshape_dims(0), 4);
  EXPECT_EQ(cmp.backend_config(), "cfg");
  EXPECT_EQ(cmp.frontend_attributes().map().at("_xla_compute_type"), "host");
  // Mapped exactly -> no verbatim copy; no XLA field or second use -> verbatim.
  ASSERT_EQ(cmp.retarget_opaque_attributes_size(), 6);
  EXPECT_FALSE(cmp.retarget_opaque_attributes(0).has_value());
  EXPECT_FALSE(cmp.retarget_opaque_attributes(1).has_value());
  EXPECT_TRUE(cmp.retarget_opaque_attributes(4).has_value());
  EXPECT_TRUE(cmp.retarget_opaque_attributes(5).has_value());
  // Extra spaces do not regenerate identically: the text is kept verbatim, the field still set.
  const auto& root = find("root");
  EXPECT_EQ(root.metadata().source_line(), 3);
  EXPECT_TRUE(root.retarget_opaque_attributes(0).has_value());
  EXPECT_EQ(root.sharding().type(), xla::OpSharding::REPLICATED);
  const auto& cc = find("cc");
  EXPECT_EQ(cc.custom_call_target(), "te_fused_attn_forward_ffi");
  EXPECT_EQ(cc.custom_call_api_version(), xla::API_VERSION_TYPED_FFI);
  EXPECT_EQ(cc.backend_config(), "{attn_heads = 32 : i64}");
  EXPECT_EQ(find("cc_quoted").backend_config(), "opaque\n");
  EXPECT_EQ(find("ag").dimensions(0), 1);
  EXPECT_EQ(find("ag").replica_groups(1).replica_ids(0), 2);
  EXPECT_EQ(find("iota").dimensions(0), 0);
  EXPECT_EQ(find("fusion").fusion_kind(), "kInput");
  EXPECT_EQ(proto.input_output_alias().entries(1).kind(), xla::HloInputOutputAliasProto::MUST_ALIAS);
  EXPECT_EQ(proto.input_output_alias().entries(1).parameter_shape_index(0), 3);
  EXPECT_EQ(proto.frontend_attributes().map().at("b"), "x y");
}

TEST(ProtoIo, NamesRepeatedAcrossComputationsAreUniqueForXlaAndRestored) {
  hlo::Module module("dups");
  for (const char* name : {"f", "g", "main"}) {
    ComputationBuilder b{proto_test::NewComputation(module, name)};
    b.computation->set_root(b.Add("a", Opcode::kNegate, kF32Scalar, {b.Parameter("a.1", 0, kF32Scalar)}));
  }
  module.set_entry(module.computations().back().get());
  xla::HloModuleProto proto = ToProto(module);
  std::vector<std::string> names;
  for (const auto& c : proto.computations()) {
    for (const auto& i : c.instructions()) names.push_back(i.name());
  }
  // "a.1" is taken by a parameter, so the repeats of "a" become a.2 and a.3.
  EXPECT_EQ(names, (std::vector<std::string>{"a.1", "a", "a.1.1", "a.2", "a.1.2", "a.3"}));
  auto back = hlo::ReadHloProto(Serialize(proto), "dups.pb");
  proto_test::ExpectSameModule(module, *back);
}

// Protobuf refuses `string` fields with invalid UTF-8 on parse; such text must stay verbatim
// only, or we would write protos we cannot read back.
TEST(ProtoIo, NonUtf8AttributeTextStaysVerbatim) {
  hlo::Module module("bytes");
  ComputationBuilder b{proto_test::NewComputation(module, "main")};
  hlo::Instruction* p = b.Parameter("p", 0, kF32Scalar);
  p->mutable_opaque_attributes() = {{"metadata", "{op_name=\"\\377\\300\\200\"}"},
                                    {"frontend_attributes", "{k=\"\\355\\240\\200\"}"},
                                    {"metadata", "{op_name=\"caf\\303\\251\"}"}};
  b.computation->set_root(p);
  module.set_entry(b.computation);
  xla::HloModuleProto proto = ToProto(module);
  const xla::HloInstructionProto& written = proto.computations(0).instructions(0);
  // The first metadata does not map; the second (valid UTF-8 "café") is the one XLA gets.
  EXPECT_EQ(written.metadata().op_name(), "caf\xc3\xa9");
  EXPECT_FALSE(written.has_frontend_attributes());
  proto_test::ExpectSameModule(module, *hlo::ReadHloProto(Serialize(proto), "bytes.pb"));
}

// A proto as XLA writes it: no Retarget extension fields at all.
TEST(ProtoIo, ReadsXlaStyleProtoWithoutExtensions) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  proto.clear_retarget_written();
  proto.clear_retarget_header_attributes();
  proto.clear_retarget_trailing_tables();
  for (auto& c : *proto.mutable_computations()) {
    c.clear_retarget_opaque_attributes();
    for (auto& i : *c.mutable_instructions()) {
      i.clear_retarget_opaque_attributes();
      i.clear_retarget_elided_constant();
      i.clear_retarget_backend_config_text();
    }
  }
  auto module = hlo::ReadHloProto(Serialize(proto), "xla.pb");
  const hlo::Instruction* cmp = module->entry()->FindInstruction("cmp");
  std::vector<hlo::OpaqueAttribute> expected = {
      {"sharding", "{devices=[4,1]<=[4]}"},
      {"frontend_attributes", "{_xla_compute_type=\"host\"}"},
      {"metadata", "{op_type=\"lt\" op_name=\"jit(f)/lt\" source_file=\"a \\\"b\\\".py\" source_line=12}"},
      {"backend_config", "\"cfg\""}};
  EXPECT_EQ(cmp->opaque_attributes(), expected);
  EXPECT_EQ(module->header_attributes()[0].value,
            "{ {0}: (1, {}, may-alias), {1,2}: (0, {3}, must-alias) }");
  const hlo::Instruction* loop = module->entry()->FindInstruction("loop");
  EXPECT_EQ(proto_test::Names(loop->called_computations()),
            (std::vector<std::string>{"cond", "body"}));
  EXPECT_EQ(module->entry()->FindInstruction("cc_quoted")->attr<hlo::CustomCallAttrs>().backend_config,
            "\"opaque\\n\"");
}

// The stack-frame tables become XLA's StackFrameIndexProto (so XLA resolves metadata's
// stack_frame_id), with the parent ids XLA's printer shows one above the proto's; an XLA proto's
// index prints back as the same tables. The expected fields are what jaxlib 0.10.2 writes for
// this module (protoc --decode_raw of its serialized HloModuleProto).
TEST(ProtoIo, StackFrameTablesBecomeXlasIndexAndBack) {
  const std::string tables = R"(FileNames
1 "/tmp/sf.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=4 end_line=4 column=10 end_column=39}
2 {file_name_id=1 function_name_id=2 line=3 end_line=3 column=17 end_column=21}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
)";
  const std::string text = "HloModule m\n\n" + tables +
                           "\n\nENTRY e {\n  p = f32[3]{0} parameter(0)\n"
                           "  ROOT s = f32[3]{0} sine(p), metadata={op_name=\"sin\" "
                           "stack_frame_id=2}\n}\n";
  auto module = testing_support::ParseAndVerify(text);
  xla::HloModuleProto proto = ToProto(*module);
  ASSERT_TRUE(proto.has_stack_frame_index());
  const xla::StackFrameIndexProto& index = proto.stack_frame_index();
  ASSERT_EQ(index.file_names_size(), 1);
  EXPECT_EQ(index.file_names(0), "/tmp/sf.py");
  ASSERT_EQ(index.function_names_size(), 2);
  EXPECT_EQ(index.function_names(1), "f");
  ASSERT_EQ(index.file_locations_size(), 2);
  EXPECT_EQ(index.file_locations(1).function_name_id(), 2);
  EXPECT_EQ(index.file_locations(1).line(), 3);
  EXPECT_EQ(index.file_locations(1).column(), 17);
  EXPECT_EQ(index.file_locations(1).end_column(), 21);
  ASSERT_EQ(index.stack_frames_size(), 2);
  EXPECT_EQ(index.stack_frames(0).parent_frame_id(), 0);  // printed 1: no parent
  EXPECT_EQ(index.stack_frames(1).file_location_id(), 2);
  EXPECT_EQ(index.stack_frames(1).parent_frame_id(), 1);  // printed 2: frame 1
  // As XLA writes it (no Retarget extensions), the index is all there is of the tables.
  proto.clear_retarget_written();
  proto.clear_retarget_leading_tables();
  auto back = hlo::ReadHloProto(Serialize(proto), "xla.pb");
  EXPECT_EQ(back->leading_tables(), tables);
  // Tables XLA would not print (an id out of order) stay in the extension only.
  std::string odd = text;
  odd.replace(odd.find("2 {file_location_id=2"), 1, "7");
  EXPECT_FALSE(ToProto(*testing_support::ParseAndVerify(odd)).has_stack_frame_index());
}

TEST(ProtoIo, LiteralInColumnMajorLayoutIsReadInLogicalOrder) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  for (auto& i : *proto.mutable_computations(3)->mutable_instructions()) {
    if (i.name() != "p0") continue;
    // Turn parameter p0 (f32[2,3]) into a constant whose data XLA stored column-major:
    // logical [[1,2,3],[4,5,6]] is physically 1,4,2,5,3,6 in layout {0,1}.
    i.set_opcode("constant");
    xla::LiteralProto* literal = i.mutable_literal();
    *literal->mutable_shape() = i.shape();
    for (float v : {1.f, 4.f, 2.f, 5.f, 3.f, 6.f}) literal->add_f32s(v);
  }
  auto module = hlo::ReadHloProto(Serialize(proto), "xla.pb");
  const auto& literal = module->entry()->FindInstruction("p0")->attr<hlo::ConstantAttrs>().literal;
  std::vector<double> values;
  for (int64_t i = 0; i < 6; ++i) values.push_back(literal.GetAsDouble(i));
  EXPECT_EQ(values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

// ----- malformed input ----------------------------------------------------------------------------

xla::HloInstructionProto* FindInstruction(xla::HloModuleProto& proto, const std::string& name) {
  for (auto& c : *proto.mutable_computations()) {
    for (auto& i : *c.mutable_instructions()) {
      if (i.name() == name) return &i;
    }
  }
  throw std::runtime_error("no instruction " + name);
}

TEST(ProtoIoErrors, GarbageBytes) {
  ExpectErrorContains("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff garbage", "not a valid");
}

TEST(ProtoIoErrors, EmptyInputHasNoComputations) {
  ExpectErrorContains("", "no computations");
}

TEST(ProtoIoErrors, EveryTruncationFailsCleanly) {
  auto module = BuildEverythingModule();
  std::string bytes = hlo::WriteHloProto(*module, true);
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    EXPECT_THROW(hlo::ReadHloProto(std::string_view(bytes).substr(0, cut), "cut.pb"), hlo::Error)
        << "cut at " << cut;
  }
}

// Random byte flips must end in a module or an hlo::Error: never a crash, a std:: exception or
// a huge allocation (the sanitizer/fuzzer build runs this harder; see fuzz/).
TEST(ProtoIoErrors, RandomByteFlipsFailCleanly) {
  std::string original = hlo::WriteHloProto(*BuildEverythingModule(), true);
  uint64_t state = 0x9e3779b97f4a7c15ull;  // xorshift: deterministic across platforms
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int parsed = 0, rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = original;
    for (int flips = 1 + static_cast<int>(next() % 4); flips > 0; --flips) {
      bytes[next() % bytes.size()] = static_cast<char>(next());
    }
    try {
      hlo::ReadHloProto(bytes, "flipped.pb");
      ++parsed;
    } catch (const hlo::Error&) {
      ++rejected;
    }
  }
  EXPECT_EQ(parsed + rejected, 3000);
  EXPECT_GT(rejected, 0);
}

TEST(ProtoIoErrors, DanglingOperandId) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "root")->add_operand_ids(99999);
  ExpectErrorContains(Serialize(proto), "instruction 'root' in computation 'main' uses operand id 99999");
}

TEST(ProtoIoErrors, DanglingComputationId) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "loop")->set_called_computation_ids(0, 4242);
  ExpectErrorContains(Serialize(proto), "'loop' in computation 'main' calls computation id 4242");
}

TEST(ProtoIoErrors, UnknownOpcodeNamesInstruction) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "dot")->set_opcode("frobnicate");
  ExpectErrorContains(Serialize(proto), "instruction 'dot' in computation 'main': unknown opcode 'frobnicate'");
}

TEST(ProtoIoErrors, MissingShape) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "slice")->clear_shape();
  ExpectErrorContains(Serialize(proto), "'slice' in computation 'main': missing shape");
}

TEST(ProtoIoErrors, LiteralSizeMismatch) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "f32s")->mutable_literal()->add_f32s(1.0f);
  ExpectErrorContains(Serialize(proto), "literal has 6 values, shape f32[5] needs 5");
  proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "bf16s")->mutable_literal()->set_bf16s("abc");
  ExpectErrorContains(Serialize(proto), "literal has 3 data bytes");
}

TEST(ProtoIoErrors, AbsurdConstantIsRefusedBeforeAllocating) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  xla::HloInstructionProto* c = FindInstruction(proto, "u8s");
  for (xla::ShapeProto* s : {c->mutable_shape(), c->mutable_literal()->mutable_shape()}) {
    s->clear_dimensions();
    s->add_dimensions(1000000);
    s->add_dimensions(1000000);
    s->clear_layout();
  }
  ExpectErrorContains(Serialize(proto), "too many elements");
}

TEST(ProtoIoErrors, NegativeDimensionAndBadLayout) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "iota")->mutable_shape()->set_dimensions(0, -4);
  ExpectErrorContains(Serialize(proto), "negative dimension -4");
  proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "p0")->mutable_shape()->mutable_layout()->set_minor_to_major(0, 1);
  ExpectErrorContains(Serialize(proto), "not a permutation");
}

TEST(ProtoIoErrors, DuplicateIdsMissingRootAndCycles) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "slice")->set_id(FindInstruction(proto, "dot")->id());
  ExpectErrorContains(Serialize(proto), "duplicate instruction id");

  proto = ToProto(*BuildEverythingModule());
  proto.mutable_computations(0)->set_root_id(123456);
  ExpectErrorContains(Serialize(proto), "computation 'add_f32': root id 123456");

  proto = ToProto(*BuildEverythingModule());
  xla::HloInstructionProto* x = FindInstruction(proto, "x");
  x->add_operand_ids(FindInstruction(proto, "sum")->id());  // x <- sum <- x
  ExpectErrorContains(Serialize(proto), "cycle");

  proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "sum")->add_called_computation_ids(proto.computations(0).id());
  ExpectErrorContains(Serialize(proto), "calls itself");
}

TEST(ProtoIoErrors, UnknownEnumStrings) {
  xla::HloModuleProto proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "cmp")->set_comparison_direction("SIDEWAYS");
  ExpectErrorContains(Serialize(proto), "unknown comparison_direction 'SIDEWAYS'");
  proto = ToProto(*BuildEverythingModule());
  FindInstruction(proto, "fusion")->set_fusion_kind("kWeird");
  ExpectErrorContains(Serialize(proto), "unknown fusion_kind 'kWeird'");
}

}  // namespace

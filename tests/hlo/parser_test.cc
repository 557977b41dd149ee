// Tests of the HLO text parser: syntax variants, typed attributes, literals, elided constants and
// errors with their exact line:column. Expected values are written out by hand.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/proto_io.h"

namespace {

using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;

std::unique_ptr<Module> Parse(const std::string& text, std::vector<std::string>* warnings = nullptr) {
  hlo::ParseOptions options;
  options.warn = [warnings](const std::string& message) {
    if (warnings) warnings->push_back(message);
  };
  return hlo::ParseHloText(text, "test.hlo", options);
}

// Parses `text` expecting an error; checks its line, column and that the message contains `part`.
void ExpectError(const std::string& text, uint32_t line, uint32_t column, const std::string& part) {
  try {
    Parse(text);
    ADD_FAILURE() << "expected an error containing '" << part << "' for:\n" << text;
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.location().line, line) << e.message();
    EXPECT_EQ(e.location().column, column) << e.message();
    EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
    ASSERT_TRUE(e.location().file);
    EXPECT_EQ(*e.location().file, "test.hlo");
  }
}

const Instruction& Find(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (Instruction* i = c->FindInstruction(name)) return *i;
  }
  throw std::runtime_error("no instruction " + name);
}

// Wraps one instruction line (and optional helper computations) into a module.
std::string WithEntry(const std::string& body, const std::string& helpers = "") {
  return "HloModule m\n" + helpers + "\nENTRY main {\n" + body + "\n}\n";
}

const char* kAdd = "add_f32 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";

// ----- structure -------------------------------------------------------------------------------

TEST(ParserTest, BothOperandStylesGiveTheSameModule) {
  auto modern = Parse(WithEntry("  a.1 = f32[2,3]{1,0} parameter(0)\n  b.2 = f32[2,3]{1,0} parameter(1)\n"
                                "  ROOT c = f32[2,3]{1,0} add(a.1, b.2)"));
  auto old = Parse(
      "HloModule m, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n"
      "ENTRY %main (a.1: f32[2,3], b.2: f32[2,3]) -> f32[2,3] {\n"
      "  %a.1 = f32[2,3]{1,0} parameter(0)\n  %b.2 = f32[2,3]{1,0} parameter(1)\n"
      "  ROOT %c = f32[2,3]{1,0} add(f32[2,3]{1,0} %a.1, f32[2,3]{1,0} %b.2)\n}\n");
  EXPECT_EQ(hlo::PrintModule(*modern), hlo::PrintModule(*old));
  const Instruction& c = Find(*old, "c");
  ASSERT_EQ(c.operand_count(), 2);
  EXPECT_EQ(c.operand(0)->name(), "a.1");
  EXPECT_EQ(c.operand(1)->name(), "b.2");
  EXPECT_EQ(old->entry()->root(), &c);
  EXPECT_EQ(c.location().line, 6u);
  EXPECT_EQ(c.location().column, 8u);  // the name after "  ROOT "
}

TEST(ParserTest, MissingLayoutsRootAndEntryTakeDefaults) {
  auto m = Parse("HloModule m\nhelper {\n  p = f32[] parameter(0)\n}\nmain {\n  x = f32[4,5] parameter(0)\n"
                 "  y = f32[4,5] negate(x)\n}\n");
  ASSERT_EQ(m->computations().size(), 2u);
  EXPECT_EQ(m->entry()->name(), "main");  // last computation
  EXPECT_EQ(m->entry()->root()->name(), "y");  // last instruction
  const Instruction& x = Find(*m, "x");
  EXPECT_FALSE(x.shape().has_layout);
  EXPECT_EQ(x.shape().dims, (std::vector<int64_t>{4, 5}));
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find("x = f32[4,5]{1,0} parameter(0)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("ROOT y = f32[4,5]{1,0} negate(x)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("entry_computation_layout={(f32[4,5]{1,0})->f32[4,5]{1,0}}"), std::string::npos);
}

TEST(ParserTest, CommentsAreIgnoredEverywhere) {
  auto m = Parse("/* leading */ HloModule m // module\n"
                 "ENTRY main { // body\n"
                 "  p0 = (f32[], /*index=1*/s32[2]{0}) parameter(0) /* after */\n"
                 "  a = f32[] get-tuple-element(p0), /*x*/ index=0\n"
                 "  ROOT t = (f32[], f32[]) tuple(a, /*index=1*/ a)\n}\n");
  const Instruction& t = Find(*m, "t");
  EXPECT_EQ(t.operand_count(), 2);
  EXPECT_EQ(Find(*m, "a").attr<hlo::TupleIndexAttrs>().index, 0);
  EXPECT_EQ(Find(*m, "p0").shape().tuple_shapes.size(), 2u);
}

TEST(ParserTest, ForwardReferencesAreSortedTopologically) {
  auto m = Parse(WithEntry("  ROOT r = f32[] add(b, a)\n  b = f32[] negate(a)\n  a = f32[] parameter(0)"));
  const auto& insts = m->entry()->instructions();
  ASSERT_EQ(insts.size(), 3u);
  EXPECT_EQ(insts[0]->name(), "a");
  EXPECT_EQ(insts[1]->name(), "b");
  EXPECT_EQ(insts[2]->name(), "r");
  EXPECT_EQ(m->entry()->root()->name(), "r");
}

TEST(ParserTest, MultiLineInstructionsAndComputationReferencesWithPercent) {
  auto m = Parse(std::string("HloModule m\n") + "%fused {\n  %a = f32[8] parameter(0)\n  ROOT %n = f32[8] negate(%a)\n}\n" +
                 "ENTRY e {\n  %p = f32[8] parameter(0)\n  ROOT %f = f32[8] fusion(%p),\n"
                 "    kind=kCustom, calls=%fused,\n    backend_config={\"x\": {kind: \"y\"}}\n}\n");
  const Instruction& f = Find(*m, "f");
  EXPECT_EQ(f.attr<hlo::FusionAttrs>().kind, hlo::FusionKind::kCustom);
  ASSERT_EQ(f.called_computations().size(), 1u);
  EXPECT_EQ(f.called_computations()[0]->name(), "fused");
  ASSERT_EQ(f.opaque_attributes().size(), 1u);
  EXPECT_EQ(f.opaque_attributes()[0].name, "backend_config");
  EXPECT_EQ(f.opaque_attributes()[0].value, "{\"x\": {kind: \"y\"}}");
}

// Current XLA prints the stack-frame tables before the computations (TORAX's dump); both places
// may hold some, with blank lines between tables, and each stays where it was.
TEST(ParserTest, StackFrameTablesBeforeTheComputationsAreKeptInPlace) {
  const std::string leading =
      "FileNames\n1 \"a.py\"\n2 \"b.py\"\n\nFunctionNames\n1 \"f\"\n\nStackFrames\n"
      "1 {file_location_id=1 parent_frame_id=1}";
  const std::string trailing = "FileLocations\n1 {file_name_id=1 function_name_id=1 line=3}";
  auto m = Parse("HloModule m\n\n" + leading + "\n\nFileNames {\n  ROOT c = f32[] constant(1)\n}\n\n"
                 "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n\n" + trailing + "\n");
  EXPECT_EQ(m->leading_tables(), leading);
  EXPECT_EQ(m->trailing_tables(), trailing);
  // A computation may be named like a table: its body follows the name.
  ASSERT_EQ(m->computations().size(), 2u);
  EXPECT_EQ(m->computations()[0]->name(), "FileNames");
  const std::string printed = hlo::PrintModule(*m);
  EXPECT_LT(printed.find(leading), printed.find("ENTRY"));
  EXPECT_GT(printed.find(trailing), printed.find("ENTRY"));
  EXPECT_EQ(hlo::PrintModule(*Parse(printed)), printed);
}

TEST(ParserTest, HeaderAttributesAndTrailingTablesAreKeptVerbatim) {
  std::string tables =
      "FileNames\n1 \"a.py\"\nFunctionNames\n1 \"f\"\nFileLocations\n"
      "1 {file_name_id=1 function_name_id=1 line=3}\nStackFrames\n1 {file_location_id=1 parent_frame_id=0}";
  auto m = Parse("HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, "
                 "entry_computation_layout={(f32[])->f32[]}, frontend_attributes={a=\"b\"}\n"
                 "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n\n" + tables + "\n\n");
  const auto& header = m->header_attributes();
  ASSERT_EQ(header.size(), 3u);
  EXPECT_EQ(header[0].name, "is_scheduled");
  EXPECT_EQ(header[1].value, "{ {0}: (0, {}, may-alias) }");
  EXPECT_EQ(header[2].value, "{a=\"b\"}");
  EXPECT_EQ(m->trailing_tables(), tables);
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find(tables), std::string::npos);
  EXPECT_EQ(hlo::PrintModule(*Parse(printed)), printed);
}

TEST(ParserTest, ComputationAttributesAndOldConstantSpelling) {
  auto m = Parse("HloModule m\nside {\n  ROOT q = f32[] parameter(0)\n}, execution_thread=\"other\"\n"
                 "ENTRY e {\n  ROOT c = f32[2] constant(f32[2]{0} {1, 2})\n}\n");
  const auto& attrs = m->computations()[0]->opaque_attributes();
  ASSERT_EQ(attrs.size(), 1u);
  EXPECT_EQ(attrs[0].name, "execution_thread");
  EXPECT_EQ(attrs[0].value, "\"other\"");
  EXPECT_EQ(Find(*m, "c").attr<hlo::ConstantAttrs>().literal.data<float>()[1], 2.0f);
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find("}, execution_thread=\"other\"\n"), std::string::npos) << printed;
  EXPECT_EQ(hlo::PrintModule(*Parse(printed)), printed);
}

TEST(ParserTest, OpaqueAttributesKeepEscapesAndBraces) {
  auto m = Parse(WithEntry(
      "  ROOT p = f32[2] parameter(0), sharding={devices=[2]<=[2]}, "
      "metadata={op_name=\"a{b}\\\"c\" source_line=3}, frontend_attributes={k=\"v\"}"));
  const auto& opaque = Find(*m, "p").opaque_attributes();
  ASSERT_EQ(opaque.size(), 3u);
  EXPECT_EQ(opaque[0].value, "{devices=[2]<=[2]}");
  EXPECT_EQ(opaque[1].value, "{op_name=\"a{b}\\\"c\" source_line=3}");
  EXPECT_EQ(opaque[2].name, "frontend_attributes");
}

// ----- typed attributes ------------------------------------------------------------------------

TEST(ParserAttributesTest, DataMovement) {
  auto m = Parse(WithEntry(
      "  p = f32[10,8] parameter(0)\n  i = s32[] parameter(1)\n  z = f32[] constant(0)\n"
      "  b = f32[3,10,8] broadcast(p), dimensions={1,2}\n"
      "  s = f32[5,2] slice(p), slice={[0:10:2], [6:8]}\n"
      "  d = f32[2,8] dynamic-slice(p, i, i), dynamic_slice_sizes={2,8}\n"
      "  pd = f32[19,7] pad(p, z), padding=0_0_1x-1_0\n"
      "  io = s32[4,3] iota(), iota_dimension=1\n"
      "  ROOT t = f32[8,10] transpose(p), dimensions={1,0}"));
  EXPECT_EQ(Find(*m, "b").attr<hlo::DimensionsAttrs>().dimensions, (std::vector<int64_t>{1, 2}));
  const auto& slice = Find(*m, "s").attr<hlo::SliceAttrs>().dims;
  ASSERT_EQ(slice.size(), 2u);
  EXPECT_EQ(slice[0], (hlo::SliceDim{0, 10, 2}));
  EXPECT_EQ(slice[1], (hlo::SliceDim{6, 8, 1}));
  EXPECT_EQ(Find(*m, "d").attr<hlo::DynamicSliceAttrs>().sizes, (std::vector<int64_t>{2, 8}));
  const auto& pad = Find(*m, "pd").attr<hlo::PadAttrs>().dims;
  ASSERT_EQ(pad.size(), 2u);
  EXPECT_EQ(pad[0], (hlo::PadDim{0, 0, 1}));
  EXPECT_EQ(pad[1], (hlo::PadDim{-1, 0, 0}));
  EXPECT_EQ(Find(*m, "io").attr<hlo::IotaAttrs>().dimension, 1);
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find("slice={[0:10:2], [6:8]}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("padding=0_0_1x-1_0"), std::string::npos) << printed;
}

TEST(ParserAttributesTest, DotAndConvolution) {
  auto m = Parse(WithEntry(
      "  a = f32[4,2,3] parameter(0)\n  b = f32[4,3,5] parameter(1)\n"
      "  d = f32[4,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}, operand_precision={high,HIGHEST}\n"
      "  x = f32[1,9,9,4] parameter(2)\n  k = f32[3,3,4,8] parameter(3)\n"
      "  ROOT c = f32[1,5,5,8] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x0_2 "
      "lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, "
      "feature_group_count=2, batch_group_count=1"));
  const auto& dot = Find(*m, "d").attr<hlo::DotAttrs>();
  EXPECT_EQ(dot.dnums.lhs_batch, (std::vector<int64_t>{0}));
  EXPECT_EQ(dot.dnums.lhs_contracting, (std::vector<int64_t>{2}));
  EXPECT_EQ(dot.dnums.rhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_EQ(dot.precision.operand_precision,
            (std::vector<hlo::Precision>{hlo::Precision::kHigh, hlo::Precision::kHighest}));
  const auto& conv = Find(*m, "c").attr<hlo::ConvolutionAttrs>();
  ASSERT_EQ(conv.window.dims.size(), 2u);
  EXPECT_EQ(conv.window.dims[0], (hlo::WindowDim{3, 2, 1, 1, 1, 2, false}));
  EXPECT_EQ(conv.window.dims[1], (hlo::WindowDim{3, 2, 0, 2, 2, 1, true}));
  // b01f: batch 0, spatial dims at positions 1 and 2, feature 3; 01io: spatial 0,1, in 2, out 3.
  EXPECT_EQ(conv.dnums.input_batch, 0);
  EXPECT_EQ(conv.dnums.input_feature, 3);
  EXPECT_EQ(conv.dnums.input_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(conv.dnums.kernel_input_feature, 2);
  EXPECT_EQ(conv.dnums.kernel_output_feature, 3);
  EXPECT_EQ(conv.dnums.kernel_spatial, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(conv.dnums.output_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(conv.feature_group_count, 2);
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find("window={size=3x3 stride=2x2 pad=1_1x0_2 lhs_dilate=1x2 rhs_dilate=2x1 "
                         "rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=2"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("operand_precision={high,highest}"), std::string::npos);
}

TEST(ParserAttributesTest, DimLabelsWithFeatureFirst) {
  auto m = Parse(WithEntry("  x = f32[1,4,8,8] parameter(0)\n  k = f32[4,1,3,3] parameter(1)\n"
                           "  ROOT c = f32[1,4,8,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
                           "dim_labels=bf01_oi01->bf01, feature_group_count=4"));
  const auto& d = Find(*m, "c").attr<hlo::ConvolutionAttrs>().dnums;
  EXPECT_EQ(d.input_feature, 1);
  EXPECT_EQ(d.kernel_output_feature, 0);
  EXPECT_EQ(d.kernel_input_feature, 1);
  EXPECT_EQ(d.kernel_spatial, (std::vector<int64_t>{2, 3}));
}

TEST(ParserAttributesTest, CompareGatherScatterAndTupleIndex) {
  auto m = Parse(WithEntry(
      "  a = f32[5,4] parameter(0)\n  i = s32[3,1] parameter(1)\n  u = f32[3,4] parameter(2)\n"
      "  c = pred[5,4] compare(a, a), direction=LT, type=TOTALORDER\n"
      "  g = f32[3,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true\n"
      "  sc = f32[5,4] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add_f32\n"
      "  t = (f32[5,4], pred[5,4]) tuple(a, c)\n  ROOT e = pred[5,4] get-tuple-element(t), index=1",
      kAdd));
  const auto& c = Find(*m, "c").attr<hlo::CompareAttrs>();
  EXPECT_EQ(c.direction, hlo::ComparisonDirection::kLt);
  EXPECT_EQ(c.type, hlo::ComparisonType::kTotalOrder);
  const auto& g = Find(*m, "g").attr<hlo::GatherAttrs>();
  EXPECT_EQ(g.dnums.offset_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(g.dnums.index_vector_dim, 1);
  EXPECT_EQ(g.slice_sizes, (std::vector<int64_t>{1, 4}));
  EXPECT_TRUE(g.indices_are_sorted);
  const Instruction& s = Find(*m, "sc");
  EXPECT_EQ(s.attr<hlo::ScatterAttrs>().dnums.scatter_dims_to_operand_dims, (std::vector<int64_t>{0}));
  EXPECT_TRUE(s.attr<hlo::ScatterAttrs>().unique_indices);
  EXPECT_FALSE(s.attr<hlo::ScatterAttrs>().indices_are_sorted);
  ASSERT_EQ(s.called_computations().size(), 1u);
  EXPECT_EQ(s.called_computations()[0]->name(), "add_f32");
  EXPECT_EQ(Find(*m, "e").attr<hlo::TupleIndexAttrs>().index, 1);
}

TEST(ParserAttributesTest, ReductionsSortTopKAndWindows) {
  auto m = Parse(WithEntry(
      "  a = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
      "  r = f32[4] reduce(a, z), dimensions={1}, to_apply=add_f32\n"
      "  w = f32[2,3] reduce-window(a, z), window={size=2x2 stride=2x2}, to_apply=add_f32\n"
      "  so = f32[4,6] sort(a), dimensions={1}, is_stable=true, to_apply=lt\n"
      "  tk = (f32[4,2], s32[4,2]) topk(a), k=2, largest=false\n"
      "  ROOT ss = f32[4,6] select-and-scatter(a, w, z), window={size=2x2 stride=2x2}, select=ge, "
      "scatter=add_f32",
      std::string(kAdd) +
          "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
          "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n"));
  EXPECT_EQ(Find(*m, "r").attr<hlo::DimensionsAttrs>().dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(Find(*m, "w").attr<hlo::WindowAttrs>().window.dims[1], (hlo::WindowDim{2, 2, 0, 0, 1, 1, false}));
  EXPECT_EQ(Find(*m, "so").attr<hlo::SortAttrs>(), (hlo::SortAttrs{1, true}));
  EXPECT_EQ(Find(*m, "tk").attr<hlo::TopKAttrs>(), (hlo::TopKAttrs{2, false}));
  const Instruction& ss = Find(*m, "ss");
  ASSERT_EQ(ss.called_computations().size(), 2u);
  EXPECT_EQ(ss.called_computations()[0]->name(), "ge");
  EXPECT_EQ(ss.called_computations()[1]->name(), "add_f32");
}

TEST(ParserAttributesTest, ControlFlowCalls) {
  std::string helpers =
      "cond {\n  c = (s32[]) parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
      "body {\n  ROOT b = (s32[]) parameter(0)\n}\n"
      "br0 {\n  ROOT x = s32[] parameter(0)\n}\nbr1 {\n  y = s32[] parameter(0)\n  ROOT n = s32[] negate(y)\n}\n";
  auto m = Parse(WithEntry(
      "  p = (s32[]) parameter(0)\n  w = (s32[]) while(p), condition=cond, body=body\n"
      "  v = s32[] get-tuple-element(w), index=0\n  pr = pred[] constant(false)\n  ix = s32[] constant(1)\n"
      "  c1 = s32[] conditional(pr, v, v), true_computation=br0, false_computation=br1\n"
      "  c2 = s32[] conditional(ix, v, v, v), branch_computations={br1, br0, br1}\n"
      "  ROOT k = s32[] call(c2), to_apply=br1",
      helpers));
  const Instruction& w = Find(*m, "w");
  ASSERT_EQ(w.called_computations().size(), 2u);
  EXPECT_EQ(w.called_computations()[0]->name(), "cond");
  EXPECT_EQ(w.called_computations()[1]->name(), "body");
  const auto& c1 = Find(*m, "c1").called_computations();
  ASSERT_EQ(c1.size(), 2u);
  EXPECT_EQ(c1[0]->name(), "br0");
  EXPECT_EQ(c1[1]->name(), "br1");
  EXPECT_EQ(Find(*m, "c2").called_computations().size(), 3u);
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find("true_computation=br0, false_computation=br1"), std::string::npos) << printed;
  EXPECT_NE(printed.find("branch_computations={br1, br0, br1}"), std::string::npos) << printed;
}

TEST(ParserAttributesTest, CustomCallBatchNormReducePrecisionRng) {
  auto m = Parse(WithEntry(
      "  a = f32[2,3] parameter(0)\n  f = f32[3] parameter(1)\n"
      "  cc = f32[2,3] custom-call(a), custom_call_target=\"my\\\"target\", api_version=API_VERSION_TYPED_FFI, "
      "backend_config={x = 1 : i64}, custom_call_has_side_effect=true, called_computations={add_f32}\n"
      "  bn = (f32[2,3], f32[3], f32[3]) batch-norm-training(a, f, f), epsilon=0.001, feature_index=1\n"
      "  rp = f32[2,3] reduce-precision(a), exponent_bits=5, mantissa_bits=10\n"
      "  lo = f32[] parameter(2)\n"
      "  ROOT rn = f32[2,3] rng(lo, lo), distribution=rng_normal",
      kAdd));
  const auto& cc = Find(*m, "cc").attr<hlo::CustomCallAttrs>();
  EXPECT_EQ(cc.target, "my\"target");
  EXPECT_EQ(cc.api_version, 4);
  EXPECT_EQ(cc.backend_config, "{x = 1 : i64}");
  EXPECT_TRUE(cc.has_side_effect);
  EXPECT_EQ(Find(*m, "cc").called_computations().size(), 1u);
  EXPECT_EQ(Find(*m, "bn").attr<hlo::BatchNormAttrs>().epsilon, 0.001f);
  EXPECT_EQ(Find(*m, "bn").attr<hlo::BatchNormAttrs>().feature_index, 1);
  EXPECT_EQ(Find(*m, "rp").attr<hlo::ReducePrecisionAttrs>(), (hlo::ReducePrecisionAttrs{5, 10}));
  EXPECT_EQ(Find(*m, "rn").attr<hlo::RngAttrs>().distribution, hlo::RngDistribution::kNormal);
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find("custom_call_target=\"my\\\"target\""), std::string::npos) << printed;
  EXPECT_NE(printed.find("epsilon=0.001, feature_index=1"), std::string::npos) << printed;
}

TEST(ParserAttributesTest, Collectives) {
  auto m = Parse(WithEntry(
      "  a = f32[8] parameter(0)\n"
      "  r1 = f32[8] all-reduce(a), channel_id=3, replica_groups=[1,4]<=[4], use_global_device_ids=true, "
      "to_apply=add_f32\n"
      "  r2 = f32[8] all-reduce(a), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add_f32\n"
      "  g = f32[32] all-gather(a), replica_groups={{0,1},{2,3}}, dimensions={0}\n"
      "  ROOT cp = f32[8] collective-permute(a), channel_id=4, source_target_pairs={{0,1},{1,2},{2,0}}",
      kAdd));
  const auto& r1 = Find(*m, "r1").attr<hlo::CollectiveAttrs>();
  EXPECT_EQ(r1.replica_groups, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}}));
  EXPECT_EQ(r1.channel_id, 3);
  EXPECT_TRUE(r1.use_global_device_ids);
  EXPECT_EQ(r1.dimension, -1);
  // Devices [[0,1],[2,3]] transposed are [[0,2],[1,3]].
  EXPECT_EQ(Find(*m, "r2").attr<hlo::CollectiveAttrs>().replica_groups,
            (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(Find(*m, "g").attr<hlo::CollectiveAttrs>().dimension, 0);
  const auto& cp = Find(*m, "cp").attr<hlo::CollectiveAttrs>();
  EXPECT_EQ(cp.source_target_pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}, {2, 0}}));
}

// ----- literals ---------------------------------------------------------------------------------

uint32_t F32Bits(const Instruction& i, int64_t k = 0) {
  return std::bit_cast<uint32_t>(i.attr<hlo::ConstantAttrs>().literal.data<float>()[k]);
}

TEST(ParserLiteralTest, ScalarsArraysTuplesAndSpecialValues) {
  auto m = Parse(WithEntry(
      "  a = f32[] constant(-0)\n  b = f32[4] constant({inf, -inf, nan, -nan})\n"
      "  c = s32[2,3] constant({ {1, -2, 3}, {4, 5, -2147483648} })\n"
      "  d = pred[3] constant({true, false, 1})\n  e = u64[] constant(18446744073709551615)\n"
      "  f = f64[] constant(0.1)\n  g = f32[] constant(1.5e-3)\n  h = f32[0] constant({})\n"
      "  ROOT t = (s8[], f32[2]) constant((-128, {1, 2.5}))"));
  EXPECT_EQ(F32Bits(Find(*m, "a")), 0x80000000u);
  const Instruction& b = Find(*m, "b");
  EXPECT_EQ(F32Bits(b, 0), 0x7f800000u);
  EXPECT_EQ(F32Bits(b, 1), 0xff800000u);
  EXPECT_TRUE(std::isnan(b.attr<hlo::ConstantAttrs>().literal.data<float>()[2]));
  EXPECT_FALSE(std::signbit(b.attr<hlo::ConstantAttrs>().literal.data<float>()[2]));
  EXPECT_TRUE(std::signbit(b.attr<hlo::ConstantAttrs>().literal.data<float>()[3]));
  auto c = Find(*m, "c").attr<hlo::ConstantAttrs>().literal.data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(c.begin(), c.end()), (std::vector<int32_t>{1, -2, 3, 4, 5, INT32_MIN}));
  auto d = Find(*m, "d").attr<hlo::ConstantAttrs>().literal.data<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(d.begin(), d.end()), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(Find(*m, "e").attr<hlo::ConstantAttrs>().literal.data<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(Find(*m, "f").attr<hlo::ConstantAttrs>().literal.data<double>()[0], 0.1);
  EXPECT_EQ(F32Bits(Find(*m, "g")), std::bit_cast<uint32_t>(0.0015f));
  EXPECT_EQ(Find(*m, "h").attr<hlo::ConstantAttrs>().literal.element_count(), 0);
  const auto& t = Find(*m, "t").attr<hlo::ConstantAttrs>().literal;
  ASSERT_EQ(t.elements().size(), 2u);
  EXPECT_EQ(t.elements()[0].data<int8_t>()[0], -128);
  EXPECT_EQ(t.elements()[1].data<float>()[1], 2.5f);
  std::string printed = hlo::PrintModule(*m);
  EXPECT_NE(printed.find("constant({inf, -inf, nan, -nan})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("constant({ {1, -2, 3}, {4, 5, -2147483648} })"), std::string::npos) << printed;
  EXPECT_NE(printed.find("constant(-0)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("constant((-128, {1, 2.5}))"), std::string::npos) << printed;
}

TEST(ParserLiteralTest, HalfPrecisionRoundsToNearestEven) {
  // bf16 keeps 8 significant bits: 1 + 2^-8 is halfway between 1 (0x3f80) and 1 + 2^-7 (0x3f81)
  // and goes to the even 0x3f80; 1 + 3*2^-8 is halfway between 0x3f81 and 0x3f82 -> 0x3f82.
  // f16: 65519 rounds down to the max 65504 (0x7bff), 65520 rounds up to inf (0x7c00).
  auto m = Parse(WithEntry("  a = bf16[3] constant({1.00390625, 1.01171875, -2})\n"
                           "  ROOT b = f16[3] constant({65519, 65520, 0.5})"));
  auto a = Find(*m, "a").attr<hlo::ConstantAttrs>().literal.data<uint16_t>();
  EXPECT_EQ(std::vector<uint16_t>(a.begin(), a.end()), (std::vector<uint16_t>{0x3f80, 0x3f82, 0xc000}));
  auto b = Find(*m, "b").attr<hlo::ConstantAttrs>().literal.data<uint16_t>();
  EXPECT_EQ(std::vector<uint16_t>(b.begin(), b.end()), (std::vector<uint16_t>{0x7bff, 0x7c00, 0x3800}));
}

TEST(ParserLiteralTest, FloatsPrintBitExactly) {
  // A linear congruential walk over bit patterns (finite values only), printed and parsed back.
  std::string f32s, f64s;
  std::vector<uint32_t> bits32;
  std::vector<uint64_t> bits64;
  uint64_t state = 12345;
  for (int i = 0; i < 64; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t b32 = static_cast<uint32_t>(state >> 32);
    if (std::isnan(std::bit_cast<float>(b32)) || std::isinf(std::bit_cast<float>(b32))) b32 &= 0xbfffffffu;
    uint64_t b64 = state;
    if (std::isnan(std::bit_cast<double>(b64)) || std::isinf(std::bit_cast<double>(b64))) b64 &= 0xbfffffffffffffffull;
    bits32.push_back(b32);
    bits64.push_back(b64);
  }
  hlo::Literal l32(hlo::Shape::Array(hlo::PrimitiveType::kF32, {64}));
  hlo::Literal l64(hlo::Shape::Array(hlo::PrimitiveType::kF64, {64}));
  std::memcpy(l32.mutable_bytes().data(), bits32.data(), 64 * 4);
  std::memcpy(l64.mutable_bytes().data(), bits64.data(), 64 * 8);
  auto m = Parse(WithEntry("  a = f32[64] constant(" + hlo::PrintLiteral(l32) + ")\n  ROOT b = f64[64] constant(" +
                           hlo::PrintLiteral(l64) + ")"));
  EXPECT_TRUE(Find(*m, "a").attr<hlo::ConstantAttrs>().literal.BitwiseEqual(l32));
  EXPECT_TRUE(Find(*m, "b").attr<hlo::ConstantAttrs>().literal.BitwiseEqual(l64));
}

TEST(ParserLiteralTest, ElidedConstantsAreDeterministicAndWarnOncePerModule) {
  std::string text = WithEntry("  a = f32[64] constant({...})\n  b = s32[64] constant({...})\n"
                               "  c = pred[4] constant({...})\n  ROOT d = bf16[8] constant({ ... })");
  std::vector<std::string> warnings;
  auto m1 = Parse(text, &warnings);
  auto m2 = Parse(text);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("4 constant"), std::string::npos) << warnings[0];
  for (const char* name : {"a", "b", "c", "d"}) {
    const auto& attrs = Find(*m1, name).attr<hlo::ConstantAttrs>();
    EXPECT_TRUE(attrs.elided);
    EXPECT_TRUE(attrs.literal.BitwiseEqual(Find(*m2, name).attr<hlo::ConstantAttrs>().literal)) << name;
  }
  const hlo::Literal& a = Find(*m1, "a").attr<hlo::ConstantAttrs>().literal;
  std::set<float> distinct;
  for (float v : a.data<float>()) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 8u);  // not a constant fill
  for (int32_t v : Find(*m1, "b").attr<hlo::ConstantAttrs>().literal.data<int32_t>()) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 8);
  }
  auto c = Find(*m1, "c").attr<hlo::ConstantAttrs>().literal.data<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(c.begin(), c.end()), (std::vector<uint8_t>{0, 1, 0, 1}));
  std::string printed = hlo::PrintModule(*m1);
  EXPECT_NE(printed.find("a = f32[64]{0} constant({...})"), std::string::npos) << printed;
  // A differently named constant gets different values.
  auto other = Parse(WithEntry("  ROOT z = f32[64] constant({...})"));
  EXPECT_FALSE(Find(*other, "z").attr<hlo::ConstantAttrs>().literal.BitwiseEqual(a));
}

TEST(ParserLiteralTest, DefaultWarningGoesToStderrOncePerModule) {
  testing::internal::CaptureStderr();
  hlo::ParseHloText(WithEntry("  a = f32[2] constant({...})\n  ROOT b = f32[2] constant({...})"), "w.hlo");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "w.hlo: warning: 2 constant(s) have elided values ({...}); filled deterministically\n");
}

TEST(PrinterTest, LiteralSpellings) {
  auto m = Parse(WithEntry("  a = bf16[3] constant({0.01001, -0, 3.5})\n  b = f64[] constant(1e-300)\n"
                           "  c = pred[2,2] constant({ {true, false}, {false, true} })\n"
                           "  d = u8[0] constant({})\n  ROOT e = f32[] constant(500000)"));
  // bf16 0.01001 is stored as 0.010009765625; the shortest spelling that maps back is 0.01.
  EXPECT_EQ(hlo::PrintLiteral(Find(*m, "a").attr<hlo::ConstantAttrs>().literal), "{0.01, -0, 3.5}");
  EXPECT_EQ(hlo::PrintLiteral(Find(*m, "b").attr<hlo::ConstantAttrs>().literal), "1e-300");
  EXPECT_EQ(hlo::PrintLiteral(Find(*m, "c").attr<hlo::ConstantAttrs>().literal),
            "{ {true, false}, {false, true} }");
  EXPECT_EQ(hlo::PrintLiteral(Find(*m, "d").attr<hlo::ConstantAttrs>().literal), "{}");
  EXPECT_EQ(hlo::PrintLiteral(Find(*m, "e").attr<hlo::ConstantAttrs>().literal), "500000");
  EXPECT_EQ(hlo::PrintInstruction(Find(*m, "e")), "ROOT e = f32[] constant(500000)");
  EXPECT_EQ(hlo::PrintInstruction(Find(*m, "c")), "c = pred[2,2]{1,0} constant({ {true, false}, {false, true} })");
  hlo::PrintOptions no_layouts;
  no_layouts.print_layouts = false;
  EXPECT_EQ(hlo::PrintInstruction(Find(*m, "c"), no_layouts), "c = pred[2,2] constant({ {true, false}, {false, true} })");
}

TEST(PrinterTest, CanonicalModuleText) {
  auto m = Parse("HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\n"
                 "%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
                 "  ROOT %s = f32[] add(f32[] %x, f32[] %y), metadata={op_name=\"a\"}\n}\n"
                 "ENTRY %main {\n  %p = f32[8,2]{0,1} parameter(0)\n  %z = f32[] constant(0)\n"
                 "  ROOT %r = f32[2]{0} reduce(%p, %z), dimensions={0}, to_apply=%add\n}\n");
  EXPECT_EQ(hlo::PrintModule(*m),
            "HloModule m, entry_computation_layout={(f32[8,2]{0,1})->f32[2]{0}}, "
            "input_output_alias={ {}: (0, {}, may-alias) }\n\n"
            "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(x, y), metadata={op_name=\"a\"}\n}\n\n"
            "ENTRY main {\n  p = f32[8,2]{0,1} parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT r = f32[2]{0} reduce(p, z), dimensions={0}, to_apply=add\n}\n");
}

// ----- errors -----------------------------------------------------------------------------------

TEST(ParserErrorTest, ReportsTheOffendingTokenPosition) {
  const std::string head = "HloModule m\nENTRY e {\n";
  ExpectError(head + "  p = f32[] parameter(0), bogus_attr=1\n}\n", 3, 27, "unknown attribute 'bogus_attr'");
  ExpectError(head + "  p = f32[] frobnicate(0)\n}\n", 3, 13, "unknown opcode 'frobnicate'");
  ExpectError(head + "  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n}\n", 4, 3, "duplicate instruction name 'p'");
  ExpectError(head + "  ROOT n = f32[] negate(q)\n}\n", 3, 25, "undefined instruction 'q'");
  ExpectError(head + "  p = f32[2] parameter(0)\n  b = f32[3,2] broadcast(p)\n}\n", 4, 16,
              "broadcast requires attribute 'dimensions'");
  ExpectError(head + "  p = f33[2] parameter(0)\n}\n", 3, 7, "unknown element type 'f33'");
  ExpectError(head + "  p = f32[2,3]{0,0} parameter(0)\n}\n", 3, 15, "layout is not a permutation");
  ExpectError(head + "  p = f32[99999999999999999999] parameter(0)\n}\n", 3, 11, "does not fit in 64 bits");
  ExpectError(head + "  p = f32[-2] parameter(0)\n}\n", 3, 11, "negative dimension");
  ExpectError(head + "  p = f32[] parameter(0)\n", 4, 1, "unexpected end of input");
  ExpectError(head + "  p = f32[] parameter(0)\n  \x01\n}\n", 4, 3, "byte 0x01");
  ExpectError(head + "  p = f32[] parameter(0), dimensions={0}\n}\n", 3, 27, "'dimensions' is not valid for parameter");
  ExpectError(head + "  p = f32[] parameter(0), metadata={a=1}, metadata={b=2}\n}\n", 3, 43, "duplicate attribute");
  ExpectError(head + "  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=nowhere\n}\n", 4, 36,
              "undefined computation 'nowhere'");
  ExpectError(head + "  p = pred[] parameter(0)\n  c = pred[] compare(p, p), direction=XX\n}\n", 4, 39,
              "invalid value 'XX' for 'direction'");
  ExpectError(head + "  c = s8[] constant(128)\n}\n", 3, 21, "out-of-range s8 value '128'");
  ExpectError(head + "  c = f32[3] constant({1, 2})\n}\n", 3, 23, "has 2 elements, the shape says 3");
  ExpectError(head + "  p = f32[] parameter(0)\n  a = f32[] negate(b)\n  b = f32[] negate(a)\n}\n", 5, 3, "cycle");
  ExpectError(head + "  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n", 4, 8, "more than one ROOT");
  ExpectError("HloModule m\nENTRY a {\n  p = f32[] parameter(0)\n}\nENTRY b {\n  p = f32[] parameter(0)\n}\n", 5, 7,
              "more than one ENTRY");
  ExpectError("", 1, 1, "expected 'HloModule'");
  ExpectError("HloModule m\n", 2, 1, "at least one computation");
  ExpectError(head + "  p = f32[] parameter(0) /* never closed\n}\n", 3, 26, "unterminated /* comment");
  ExpectError(head + "  p = f32[] parameter(0), metadata={op_name=\"x\n", 3, 45, "unterminated string");
}

TEST(ParserErrorTest, AttributeValueErrorsPointIntoTheValue) {
  const std::string head = "HloModule m\nENTRY e {\n  a = f32[4,4] parameter(0)\n  z = f32[] constant(0)\n";
  auto expect = [&](const std::string& line, uint32_t column, const std::string& part) {
    ExpectError(head + line + "\n}\n" + kAdd, 5, column, part);
  };
  // Columns are 1-based positions in `line`, counted by hand.
  expect("  w = f32[2,2] reduce-window(a, z), window={size=2x2 stride=2}, to_apply=add_f32", 54,
         "window field 'stride' has 1 entries, size has 2");
  expect("  w = f32[2,2] reduce-window(a, z), window={stride=2x2}, to_apply=add_f32", 45,
         "window 'size' must come first");
  expect("  c = f32[4,4] convolution(a, a), dim_labels=bf01_oi01->bf0", 46, "invalid value 'bf01_oi01->bf0'");
  expect("  r = f32[4,4] all-reduce(a), replica_groups=[2,3]<=[4], to_apply=add_f32", 46,
         "invalid value '[2,3]<=[4]' for 'replica_groups'");
  expect("  r = f32[4,4] all-reduce(a), replica_groups=[2,2]<=[2,2]T(0,0), to_apply=add_f32", 46,
         "a permutation of the reshape dims");
  expect("  t = f32[4,4] get-tuple-element(a), index=-1", 44, "'index' must not be negative");
  expect("  s = f32[2,4] slice(a), slice={[0:2], [0:4:1}", 46, "expected ']' to close a slice dimension");
  expect("  d = f32[4,4] dot(a, a), lhs_contracting_dims={1,x}", 51, "expected an integer, found 'x'");
}

TEST(ParserErrorTest, RejectsAbsurdShapesAndDeepNesting) {
  const std::string head = "HloModule m\nENTRY e {\n";
  ExpectError(head + "  c = f32[1000000,1000000] constant({...})\n}\n", 3, 37, "too many elements");
  ExpectError(head + "  c = f32[100000000] constant({1})\n}\n", 3, 31, "input ends first");
  std::string dims;
  for (int i = 0; i < 65; ++i) dims += i ? ",1" : "1";
  ExpectError(head + "  p = f32[" + dims + "] parameter(0)\n}\n", 3, 139, "rank exceeds the limit of 64");
  std::string deep(10000, '(');
  try {
    Parse(head + "  p = " + deep + "f32[] parameter(0)\n}\n");
    ADD_FAILURE() << "deep nesting accepted";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("nested too deeply"), std::string::npos) << e.message();
  }
}

TEST(ParserErrorTest, TruncatedInputAlwaysFailsCleanly) {
  // Every prefix of a valid module either parses or throws hlo::Error (never crashes or hangs).
  std::string text = WithEntry(
      "  a = f32[2,2]{1,0} parameter(0), metadata={op_name=\"x\"}\n"
      "  c = f32[2,2] constant({ {1, 2}, {3, 4} })\n"
      "  ROOT d = f32[2,2] dot(a, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      kAdd);
  int errors = 0;
  for (size_t n = 0; n < text.size(); ++n) {
    try {
      Parse(text.substr(0, n));
    } catch (const hlo::Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, static_cast<int>(text.size()) - 5);
}

}  // namespace

namespace hlo {
namespace {

// Elided constants are filled at parse time, so a short file could ask for unbounded memory by
// repeating large `constant({...})` lines; the module-wide budget refuses that.
TEST(ParserLimits, ElidedConstantsHaveAModuleWideBudget) {
  Limits saved = GlobalLimits();
  GlobalLimits().max_elided_constant_bytes_per_module = 1000;
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[128] constant({...})
  b = f32[128] constant({...})
  ROOT t = (f32[128], f32[128]) tuple(a, b)
})";
  try {
    ParseHloText(text, "budget.hlo", ParseOptions{[](const std::string&) {}});
    GlobalLimits() = saved;
    FAIL() << "expected the elided-constant budget to be exceeded";
  } catch (const Error& e) {
    GlobalLimits() = saved;
    EXPECT_EQ(e.location().line, 4u);
    EXPECT_NE(e.message().find("elided constants"), std::string::npos) << e.message();
  }
  // One 512-byte constant fits.
  EXPECT_NO_THROW(ParseHloText("HloModule m\nENTRY e {\n  ROOT a = f32[128] constant({...})\n}",
                               "ok.hlo", ParseOptions{[](const std::string&) {}}));
  GlobalLimits() = saved;
}

}  // namespace
}  // namespace hlo

// ----- layout details ---------------------------------------------------------------------------

namespace {

// What XLA prints after a layout's dimensions — tiles, tail padding, element size, memory space
// — is read, printed back as it was, and carried through the proto; an item it does not know is
// an error naming the place.
TEST(ParserLayoutTest, TilesElementSizeAndMemorySpaceRoundTrip) {
  const std::string text = WithEntry(
      "  p = f32[8,256]{1,0:T(8,128)(2,1)} parameter(0)\n"
      "  q = s4[16]{0:E(4)} parameter(1)\n"
      "  h = f32[4]{0:S(5)} custom-call(), custom_call_target=\"AllocateBuffer\"\n"
      "  s = f32[]{:S(5)} parameter(2)\n"
      "  w = f32[1024]{0:T(1024)L(1024)} parameter(3)\n"
      "  ROOT t = (f32[8,256]{1,0:T(8,128)(2,1)}, s4[16]{0:E(4)}, f32[4]{0:S(5)}, f32[]{:S(5)}, "
      "f32[1024]{0:T(1024)L(1024)}) tuple(p, q, h, s, w)");
  auto module = Parse(text);
  EXPECT_EQ(Find(*module, "p").shape().layout_details.tiles,
            (std::vector<std::vector<int64_t>>{{8, 128}, {2, 1}}));
  EXPECT_EQ(Find(*module, "q").shape().layout_details.element_size_in_bits, 4);
  EXPECT_EQ(Find(*module, "h").shape().layout_details.memory_space, hlo::kHostMemorySpace);
  EXPECT_EQ(Find(*module, "s").shape().layout_details.memory_space, hlo::kHostMemorySpace);
  EXPECT_EQ(Find(*module, "w").shape().layout_details.tail_padding_alignment, 1024);
  const std::string printed = hlo::PrintModule(*module);
  for (const char* spelling : {"f32[8,256]{1,0:T(8,128)(2,1)} parameter(0)", "s4[16]{0:E(4)}",
                               "f32[4]{0:S(5)} custom-call()", "f32[]{:S(5)} parameter(2)",
                               "f32[1024]{0:T(1024)L(1024)}"}) {
    EXPECT_NE(printed.find(spelling), std::string::npos) << spelling << "\n" << printed;
  }
  EXPECT_EQ(hlo::PrintModule(*Parse(printed)), printed);  // a fixed point
  auto from_proto = hlo::ReadHloProto(hlo::WriteHloProto(*module), "m.pb");
  EXPECT_EQ(Find(*from_proto, "p").shape().layout_details, Find(*module, "p").shape().layout_details);
  EXPECT_EQ(Find(*from_proto, "s").shape().layout_details.memory_space, hlo::kHostMemorySpace);
  EXPECT_EQ(Find(*from_proto, "w").shape().layout_details.tail_padding_alignment, 1024);
}

TEST(ParserLayoutTest, UnknownLayoutItemIsALocatedError) {
  ExpectError(WithEntry("  ROOT p = f32[4]{0:D(C)} parameter(0)"), 4, 21,
              "unsupported layout attribute after ':'");
}

}  // namespace

// Tests for bench_util: the FLOP counts that turn benchmark times into GFLOP/s, and the
// deterministic benchmark arguments. Modules are built with the IR API (no parser), and expected
// FLOP counts are written out by hand as products of the problem sizes.
#include "bench/bench_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

// Adds `parameter(number)` of `shape` to `computation`.
hlo::Instruction* AddParameter(hlo::Computation& computation, int64_t number, Shape shape) {
  // Built with += rather than "p" + to_string(): GCC 12 warns falsely (-Wrestrict) on the latter.
  std::string name = "p";
  name += std::to_string(number);
  auto inst = std::make_unique<hlo::Instruction>(name, Opcode::kParameter, std::move(shape));
  inst->set_attrs(hlo::ParameterAttrs{number});
  return computation.AddInstruction(std::move(inst));
}

hlo::Instruction* AddOp(hlo::Computation& computation, const std::string& name, Opcode opcode,
                        Shape shape, std::vector<hlo::Instruction*> operands, hlo::Attrs attrs) {
  auto inst = std::make_unique<hlo::Instruction>(name, opcode, std::move(shape));
  for (hlo::Instruction* operand : operands) inst->AppendOperand(operand);
  inst->set_attrs(std::move(attrs));
  return computation.AddInstruction(std::move(inst));
}

hlo::Computation* AddEntry(hlo::Module& module, const std::string& name) {
  hlo::Computation* entry = module.AddComputation(std::make_unique<hlo::Computation>(name));
  module.set_entry(entry);
  return entry;
}

TEST(ContractionFlops, BatchedDotCountsTwoFlopsPerMultiplyAdd) {
  // [b=3, m=4, k=5] x [b=3, k=5, n=6]: 3*4*6 outputs, each a length-5 dot product.
  hlo::Module module("m");
  hlo::Computation* entry = AddEntry(module, "main");
  auto* lhs = AddParameter(*entry, 0, Shape::Array(PrimitiveType::kF32, {3, 4, 5}));
  auto* rhs = AddParameter(*entry, 1, Shape::Array(PrimitiveType::kF32, {3, 5, 6}));
  hlo::DotAttrs dot;
  dot.dnums.lhs_batch = {0};
  dot.dnums.rhs_batch = {0};
  dot.dnums.lhs_contracting = {2};
  dot.dnums.rhs_contracting = {1};
  entry->set_root(AddOp(*entry, "dot", Opcode::kDot,
                        Shape::Array(PrimitiveType::kF32, {3, 4, 6}), {lhs, rhs}, dot));
  EXPECT_DOUBLE_EQ(bench::ContractionFlops(module), 2.0 * 3 * 4 * 6 * 5);  // 720
}

TEST(ContractionFlops, ConvolutionCountsWindowTimesInputFeatures) {
  // NHWC 1x8x8x4 * HWIO 3x3x4x16 (same padding) -> 1x8x8x16: each output sums 3*3*4 products.
  hlo::Module module("m");
  hlo::Computation* entry = AddEntry(module, "main");
  auto* input = AddParameter(*entry, 0, Shape::Array(PrimitiveType::kF32, {1, 8, 8, 4}));
  auto* kernel = AddParameter(*entry, 1, Shape::Array(PrimitiveType::kF32, {3, 3, 4, 16}));
  hlo::ConvolutionAttrs conv;
  conv.dnums = {.input_batch = 0, .input_feature = 3, .input_spatial = {1, 2},
                .kernel_input_feature = 2, .kernel_output_feature = 3, .kernel_spatial = {0, 1},
                .output_batch = 0, .output_feature = 3, .output_spatial = {1, 2}};
  entry->set_root(AddOp(*entry, "conv", Opcode::kConvolution,
                        Shape::Array(PrimitiveType::kF32, {1, 8, 8, 16}), {input, kernel}, conv));
  EXPECT_DOUBLE_EQ(bench::ContractionFlops(module), 2.0 * (8 * 8 * 16) * (3 * 3 * 4));
}

TEST(ContractionFlops, DepthwiseConvolutionUsesTheKernelsInputFeatureSize) {
  // feature_group_count=4: the kernel's input feature dimension is 1, so each output element
  // sums only its 3x3 window.
  hlo::Module module("m");
  hlo::Computation* entry = AddEntry(module, "main");
  auto* input = AddParameter(*entry, 0, Shape::Array(PrimitiveType::kF32, {1, 8, 8, 4}));
  auto* kernel = AddParameter(*entry, 1, Shape::Array(PrimitiveType::kF32, {3, 3, 1, 4}));
  hlo::ConvolutionAttrs conv;
  conv.feature_group_count = 4;
  conv.dnums = {.input_batch = 0, .input_feature = 3, .input_spatial = {1, 2},
                .kernel_input_feature = 2, .kernel_output_feature = 3, .kernel_spatial = {0, 1},
                .output_batch = 0, .output_feature = 3, .output_spatial = {1, 2}};
  entry->set_root(AddOp(*entry, "conv", Opcode::kConvolution,
                        Shape::Array(PrimitiveType::kF32, {1, 8, 8, 4}), {input, kernel}, conv));
  EXPECT_DOUBLE_EQ(bench::ContractionFlops(module), 2.0 * (8 * 8 * 4) * 9);
}

TEST(ContractionFlops, CalleeIsCountedOncePerCallSiteAndEmptyDotIsZero) {
  hlo::Module module("m");
  // callee: [2,3] x [3,2] -> 2*2*2*3 = 24 flops.
  hlo::Computation* callee = module.AddComputation(std::make_unique<hlo::Computation>("mm"));
  auto* a = AddParameter(*callee, 0, Shape::Array(PrimitiveType::kF32, {2, 3}));
  auto* b = AddParameter(*callee, 1, Shape::Array(PrimitiveType::kF32, {3, 2}));
  hlo::DotAttrs dot;
  dot.dnums.lhs_contracting = {1};
  dot.dnums.rhs_contracting = {0};
  callee->set_root(AddOp(*callee, "d", Opcode::kDot, Shape::Array(PrimitiveType::kF32, {2, 2}),
                         {a, b}, dot));
  hlo::Computation* entry = AddEntry(module, "main");
  auto* x = AddParameter(*entry, 0, Shape::Array(PrimitiveType::kF32, {2, 3}));
  auto* y = AddParameter(*entry, 1, Shape::Array(PrimitiveType::kF32, {3, 2}));
  auto* call1 = AddOp(*entry, "c1", Opcode::kCall, Shape::Array(PrimitiveType::kF32, {2, 2}),
                      {x, y}, hlo::NoAttrs{});
  call1->mutable_called_computations().push_back(callee);
  auto* call2 = AddOp(*entry, "c2", Opcode::kCall, Shape::Array(PrimitiveType::kF32, {2, 2}),
                      {x, y}, hlo::NoAttrs{});
  call2->mutable_called_computations().push_back(callee);
  // An empty dot ([0,3] x [3,2]) adds nothing.
  auto* empty = AddParameter(*entry, 2, Shape::Array(PrimitiveType::kF32, {0, 3}));
  AddOp(*entry, "e", Opcode::kDot, Shape::Array(PrimitiveType::kF32, {0, 2}), {empty, y}, dot);
  entry->set_root(call2);
  EXPECT_DOUBLE_EQ(bench::ContractionFlops(module), 48.0);
}

TEST(MakeArguments, FloatsInHalfOpenRangeDeterministicIntegersZero) {
  hlo::Module module("m");
  hlo::Computation* entry = AddEntry(module, "main");
  AddParameter(*entry, 0, Shape::Array(PrimitiveType::kF32, {1000}));
  AddParameter(*entry, 1, Shape::Array(PrimitiveType::kS32, {3}));
  AddParameter(*entry, 2, Shape::Tuple({Shape::Array(PrimitiveType::kBF16, {4}),
                                        Shape::Scalar(PrimitiveType::kPred)}));
  entry->set_root(entry->parameter(0));
  const std::vector<hlo::Literal> first = bench::MakeArguments(module, 7);
  const std::vector<hlo::Literal> again = bench::MakeArguments(module, 7);
  ASSERT_EQ(first.size(), 3u);
  for (float v : first[0].data<float>()) {
    EXPECT_GE(v, 0.5f);
    EXPECT_LT(v, 1.5f);
    EXPECT_TRUE(std::isfinite(v));
  }
  EXPECT_TRUE(first[0].BitwiseEqual(again[0]));
  for (int32_t v : first[1].data<int32_t>()) EXPECT_EQ(v, 0);
  ASSERT_TRUE(first[2].IsTuple());
  ASSERT_EQ(first[2].elements().size(), 2u);
  for (int64_t i = 0; i < 4; ++i) {
    const double v = first[2].elements()[0].GetAsDouble(i);
    EXPECT_GE(v, 0.5);
    EXPECT_LE(v, 1.5);  // bf16 rounding may reach 1.5 exactly
  }
  EXPECT_EQ(first[2].elements()[1].GetAsInt64(0), 0);
}

TEST(MakeArguments, MissingParameterNumberIsAnError) {
  hlo::Module module("m");
  hlo::Computation* entry = AddEntry(module, "main");
  AddParameter(*entry, 1, Shape::Scalar(PrimitiveType::kF32));  // parameter 0 missing
  entry->set_root(entry->parameter(1));
  try {
    bench::MakeArguments(module);
    FAIL() << "expected hlo::Error";
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.message(), "entry parameters are not dense");
  }
}

TEST(ReadFileOrThrow, MissingFileNamesThePath) {
  try {
    bench::ReadFileOrThrow("/nonexistent/dir/x.hlo");
    FAIL() << "expected hlo::Error";
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.message(), "/nonexistent/dir/x.hlo: cannot open");
  }
}

}  // namespace

// DotCanonicalizer, ConvCanonicalizer (+ depthwise detection) and BatchNormExpander: structural
// results checked against hand-derived shapes/dimension numbers, values against the
// interpreter on the original module.
#include <gtest/gtest.h>

#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/conv_canonicalizer.h"
#include "compiler/passes/dot_canonicalizer.h"
#include "tests/compiler/simplify_test_util.h"

namespace {

using simplify_test::Compare;
using simplify_test::CountOpcode;
using simplify_test::Entry;
using simplify_test::RunPass;

std::vector<const hlo::Instruction*> Find(const hlo::Module& m, hlo::Opcode opcode) {
  std::vector<const hlo::Instruction*> found;
  for (const auto& c : m.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == opcode) found.push_back(inst.get());
    }
  }
  return found;
}

// ----- DotCanonicalizer ---------------------------------------------------------------------

struct DotCase {
  const char* what;
  const char* body;
  std::vector<int64_t> canonical_result_dims;  // dims of the canonical dot
};

const DotCase kDotCases[] = {
    {"transposed lhs [k,m]", R"(p0 = f32[3,2] parameter(0)
  p1 = f32[3,4] parameter(1)
  ROOT r = f32[2,4] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0})", {2, 4}},
    {"batch dim in the middle", R"(p0 = f32[3,2,4] parameter(0)
  p1 = f32[4,2,5] parameter(1)
  ROOT r = f32[2,3,5] dot(p0, p1), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0})", {2, 3, 5}},
    {"two contracting and two free dims", R"(p0 = f32[2,3,4,5] parameter(0)
  p1 = f32[5,6,3] parameter(1)
  ROOT r = f32[2,4,6] dot(p0, p1), lhs_contracting_dims={3,1}, rhs_contracting_dims={0,2})", {8, 6}},
    {"matrix-vector", R"(p0 = f32[3,4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT r = f32[3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0})", {3, 1}},
    {"vector-vector", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT r = f32[] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0})", {1, 1}},
    {"outer product", R"(p0 = f32[3] parameter(0)
  p1 = f32[5] parameter(1)
  ROOT r = f32[3,5] dot(p0, p1))", {3, 5}},
    {"bf16 operands, f32 result", R"(p0 = bf16[8,2] parameter(0)
  p1 = bf16[8,3] parameter(1)
  ROOT r = f32[2,3] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0})", {2, 3}},
    {"two batch dims, listed out of order", R"(p0 = f32[2,3,4,5] parameter(0)
  p1 = f32[3,2,5,6] parameter(1)
  ROOT r = f32[3,2,4,6] dot(p0, p1), lhs_batch_dims={1,0}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2})", {3, 2, 4, 6}},
};

class DotTest : public ::testing::TestWithParam<DotCase> {};

TEST_P(DotTest, BecomesCanonical) {
  auto module = testing_support::ParseAndVerify(Entry(GetParam().body));
  compiler::DotCanonicalizer pass;
  auto result = RunPass(pass, *module, /*expect_changed=*/true, Compare::kTolerance);
  auto dots = Find(*result, hlo::Opcode::kDot);
  ASSERT_EQ(dots.size(), 1u);
  EXPECT_TRUE(compiler::IsCanonicalDot(*dots[0])) << hlo::PrintInstruction(*dots[0]);
  EXPECT_EQ(dots[0]->shape().dims, GetParam().canonical_result_dims);
  EXPECT_EQ(result->entry()->root()->shape(), module->entry()->root()->shape());
}

INSTANTIATE_TEST_SUITE_P(Shapes, DotTest, ::testing::ValuesIn(kDotCases));

TEST(DotCanonicalizer, LeavesCanonicalDotsAlone) {
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = f32[2,3,4] parameter(0)
  p1 = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  p2 = f32[5,6] parameter(2)
  ROOT m = f32[2,3,6] dot(d, p2), lhs_contracting_dims={2}, rhs_contracting_dims={0})"));
  // The second dot is [2,3,5] x [5,6]: not canonical (two free lhs dims), the first one is.
  compiler::DotCanonicalizer pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kDot), 2);
  EXPECT_NE(result->entry()->FindInstruction("d"), nullptr);  // untouched
  auto canonical = testing_support::ParseAndVerify(Entry(R"(p0 = f32[2,3,4] parameter(0)
  p1 = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1})"));
  RunPass(pass, *canonical, false, Compare::kNone);
}

TEST(DotCanonicalizer, OperandsAreTransposedBatchFreeContracting) {
  // lhs f32[2,3,4,5] contracting {3,1}: transpose to free {0,2} then contracting in list
  // order {3,1} -> permutation {0,2,3,1}; reshape to [2*4, 5*3].
  auto module = testing_support::ParseAndVerify(Entry(kDotCases[2].body));
  compiler::DotCanonicalizer pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  const hlo::Instruction* dot = Find(*result, hlo::Opcode::kDot)[0];
  const hlo::Instruction* lhs = dot->operand(0);
  ASSERT_EQ(lhs->opcode(), hlo::Opcode::kReshape);
  EXPECT_EQ(lhs->shape().dims, (std::vector<int64_t>{8, 15}));
  ASSERT_EQ(lhs->operand(0)->opcode(), hlo::Opcode::kTranspose);
  EXPECT_EQ(lhs->operand(0)->attr<hlo::DimensionsAttrs>().dimensions,
            (std::vector<int64_t>{0, 2, 3, 1}));
  // rhs f32[5,6,3] contracting {0,2} then free {1}: permutation {0,2,1}; reshape to [15, 6].
  const hlo::Instruction* rhs = dot->operand(1);
  EXPECT_EQ(rhs->shape().dims, (std::vector<int64_t>{15, 6}));
  EXPECT_EQ(rhs->operand(0)->attr<hlo::DimensionsAttrs>().dimensions,
            (std::vector<int64_t>{0, 2, 1}));
}

TEST(DotCanonicalizer, WeightStoredOutputMajorIsReshapedThenTransposedInItsLastTwoDims) {
  // rhs f32[2,6,5] contracting {2}: laid out [free..., contracting], so it becomes
  // reshape to [12, 5] and transpose {1,0} to [5, 12] (not a rotation {2,0,1} then a reshape),
  // which a backend reads as a transposed matrix.
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = f32[3,5] parameter(0)
  p1 = f32[2,6,5] parameter(1)
  ROOT r = f32[3,2,6] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={2})"));
  compiler::DotCanonicalizer pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  const hlo::Instruction* rhs = Find(*result, hlo::Opcode::kDot)[0]->operand(1);
  ASSERT_EQ(rhs->opcode(), hlo::Opcode::kTranspose);
  EXPECT_EQ(rhs->shape().dims, (std::vector<int64_t>{5, 12}));
  EXPECT_EQ(rhs->attr<hlo::DimensionsAttrs>().dimensions, (std::vector<int64_t>{1, 0}));
  ASSERT_EQ(rhs->operand(0)->opcode(), hlo::Opcode::kReshape);
  EXPECT_EQ(rhs->operand(0)->shape().dims, (std::vector<int64_t>{12, 5}));
  EXPECT_EQ(rhs->operand(0)->operand(0)->opcode(), hlo::Opcode::kParameter);
}

// ----- ConvCanonicalizer ----------------------------------------------------------------------

const char* kDepthwise = R"(x = bf16[1,8,6,6] parameter(0)
  k = bf16[8,1,3,3] parameter(1)
  ROOT c = bf16[1,8,6,6] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=8)";

TEST(ConvCanonicalizer, DepthwiseBf01ToB01f) {
  auto module = testing_support::ParseAndVerify(Entry(kDepthwise));
  EXPECT_TRUE(compiler::IsDepthwiseConvolution(*module->entry()->root()));
  compiler::ConvCanonicalizer pass("b01f_01io->b01f");
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  auto convs = Find(*result, hlo::Opcode::kConvolution);
  ASSERT_EQ(convs.size(), 1u);
  const hlo::ConvDimensionNumbers& d = convs[0]->attr<hlo::ConvolutionAttrs>().dnums;
  EXPECT_EQ(d.input_batch, 0);
  EXPECT_EQ(d.input_feature, 3);
  EXPECT_EQ(d.input_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(d.kernel_spatial, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(d.kernel_input_feature, 2);
  EXPECT_EQ(d.kernel_output_feature, 3);
  EXPECT_EQ(convs[0]->shape().dims, (std::vector<int64_t>{1, 6, 6, 8}));
  EXPECT_EQ(convs[0]->operand(0)->shape().dims, (std::vector<int64_t>{1, 6, 6, 8}));
  EXPECT_EQ(convs[0]->operand(1)->shape().dims, (std::vector<int64_t>{3, 3, 1, 8}));
  EXPECT_TRUE(compiler::IsDepthwiseConvolution(*convs[0]));  // still recognizable
  EXPECT_EQ(result->entry()->root()->opcode(), hlo::Opcode::kTranspose);
  EXPECT_EQ(result->entry()->root()->attr<hlo::DimensionsAttrs>().dimensions,
            (std::vector<int64_t>{0, 3, 1, 2}));
}

TEST(ConvCanonicalizer, FeatureMajorInputAndSpatialMajorOutput) {
  // fb01_io01->01bf (as in resnet50's weight-gradient convolutions) to b01f_01io->b01f.
  auto module = testing_support::ParseAndVerify(Entry(R"(x = f32[3,2,5,5] parameter(0)
  k = f32[3,4,2,2] parameter(1)
  ROOT c = f32[4,4,2,4] convolution(x, k), window={size=2x2}, dim_labels=fb01_io01->01bf)"));
  compiler::ConvCanonicalizer pass("b01f_01io->b01f");
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  const hlo::Instruction* conv = Find(*result, hlo::Opcode::kConvolution)[0];
  EXPECT_EQ(conv->shape().dims, (std::vector<int64_t>{2, 4, 4, 4}));  // b=2, 4x4, f=4
  EXPECT_EQ(result->entry()->root()->shape().dims, (std::vector<int64_t>{4, 4, 2, 4}));
}

TEST(ConvCanonicalizer, OneDimensionalConvUsesThePreferredOrder) {
  auto module = testing_support::ParseAndVerify(Entry(R"(x = f32[2,3,7] parameter(0)
  k = f32[4,3,3] parameter(1)
  ROOT c = f32[2,4,5] convolution(x, k), window={size=3}, dim_labels=bf0_oi0->bf0)"));
  compiler::ConvCanonicalizer pass("b01f_01io->b01f");
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  const hlo::Instruction* conv = Find(*result, hlo::Opcode::kConvolution)[0];
  const hlo::ConvDimensionNumbers& d = conv->attr<hlo::ConvolutionAttrs>().dnums;
  EXPECT_EQ(d.input_feature, 2);
  EXPECT_EQ(d.kernel_input_feature, 1);
  EXPECT_EQ(d.kernel_output_feature, 2);
  EXPECT_EQ(conv->shape().dims, (std::vector<int64_t>{2, 5, 4}));
}

TEST(ConvCanonicalizer, NoPreferenceOrAlreadyPreferredIsNoChange) {
  auto module = testing_support::ParseAndVerify(Entry(kDepthwise));
  compiler::ConvCanonicalizer none("");
  RunPass(none, *module, false, Compare::kNone);
  compiler::ConvCanonicalizer same("bf01_oi01->bf01");
  RunPass(same, *module, false, Compare::kNone);
}

TEST(ConvCanonicalizer, MalformedPreferredLabelsAreAnError) {
  auto module = testing_support::ParseAndVerify(Entry(kDepthwise));
  compiler::ConvCanonicalizer pass("b01f-01io");
  try {
    pass.Run(*module);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("malformed preferred_conv_dim_labels 'b01f-01io'"), std::string::npos)
        << e.message();
  }
}

TEST(ConvCanonicalizer, LabelsToDimensionNumbers) {
  auto d = compiler::ConvDimensionNumbersFromLabels("b01f_01io->b01f", 3);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->input_feature, 4);
  EXPECT_EQ(d->input_spatial, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(d->kernel_input_feature, 3);
  EXPECT_EQ(d->output_spatial, (std::vector<int64_t>{1, 2, 3}));
  auto e = compiler::ConvDimensionNumbersFromLabels("fb10_io10->10bf", 2);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->input_batch, 1);
  EXPECT_EQ(e->input_spatial, (std::vector<int64_t>{3, 2}));  // digit 0 sits at position 3
  EXPECT_EQ(e->output_feature, 3);
  EXPECT_FALSE(compiler::ConvDimensionNumbersFromLabels("bb01_01io->b01f", 2));
  EXPECT_FALSE(compiler::ConvDimensionNumbersFromLabels("b0f1_01io->b01f", 3));  // split digits
  EXPECT_FALSE(compiler::ConvDimensionNumbersFromLabels("b01f", 2));
}

TEST(ConvCanonicalizer, DepthwiseDetection) {
  auto grouped = testing_support::ParseAndVerify(Entry(R"(x = f32[1,8,6,6] parameter(0)
  k = f32[8,4,3,3] parameter(1)
  ROOT c = f32[1,8,4,4] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2)"));
  EXPECT_FALSE(compiler::IsDepthwiseConvolution(*grouped->entry()->root()));  // 2 groups of 4
  auto plain = testing_support::ParseAndVerify(Entry(R"(x = f32[1,1,6,6] parameter(0)
  k = f32[8,1,3,3] parameter(1)
  ROOT c = f32[1,8,4,4] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01)"));
  EXPECT_FALSE(compiler::IsDepthwiseConvolution(*plain->entry()->root()));  // one group
  auto multiplier = testing_support::ParseAndVerify(Entry(R"(x = f32[1,4,6,6] parameter(0)
  k = f32[8,1,3,3] parameter(1)
  ROOT c = f32[1,8,4,4] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=4)"));
  EXPECT_TRUE(compiler::IsDepthwiseConvolution(*multiplier->entry()->root()));  // multiplier 2
}

// ----- BatchNormExpander ----------------------------------------------------------------------

TEST(BatchNormExpander, HandComputedValues) {
  // eps = 0.5, var = 3.5: rsqrt(4) = 0.5, true_scale = 2 * 0.5 = 1, true_shift = 0.5 - 2 = -1.5,
  // so y = x - 1.5: {1, 3} -> {-0.5, 1.5}; all exact in f32.
  auto module = testing_support::ParseAndVerify(Entry(R"(x = f32[2,1] constant({ {1}, {3} })
  s = f32[1] constant({2})
  o = f32[1] constant({0.5})
  m = f32[1] constant({2})
  v = f32[1] constant({3.5})
  ROOT bn = f32[2,1] batch-norm-inference(x, s, o, m, v), epsilon=0.5, feature_index=1)"));
  compiler::BatchNormExpander pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kBatchNormInference), 0);
  hlo::Literal y = hlo::Evaluate(*result, {});
  EXPECT_EQ(y.GetAsDouble(0), -0.5);
  EXPECT_EQ(y.GetAsDouble(1), 1.5);
}

TEST(BatchNormExpander, FeatureDimensionInTheMiddleF32) {
  auto module = testing_support::ParseAndVerify(Entry(R"(x = f32[2,3,4,5] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  m = f32[3] parameter(3)
  v0 = f32[3] parameter(4)
  v = f32[3] abs(v0)
  ROOT bn = f32[2,3,4,5] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=1)"));
  compiler::BatchNormExpander pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kBatchNormInference), 0);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kRsqrt), 1);  // once per feature vector, not per element
}

TEST(BatchNormExpander, LastFeatureDimensionBf16) {
  auto module = testing_support::ParseAndVerify(Entry(R"(x = bf16[2,4,3] parameter(0)
  s = bf16[3] parameter(1)
  o = bf16[3] parameter(2)
  m = bf16[3] parameter(3)
  v0 = bf16[3] parameter(4)
  v = bf16[3] abs(v0)
  ROOT bn = bf16[2,4,3] batch-norm-inference(x, s, o, m, v), epsilon=0.01, feature_index=2)"));
  compiler::BatchNormExpander pass;
  RunPass(pass, *module, true, Compare::kTolerance);
}

TEST(BatchNormExpander, TrainingHandComputedValues) {
  // x = {1, 3}: mean 2, biased variance 1; eps 0 so rsqrt(1) = 1; y = (x - 2) * 2 + 0.5.
  auto module = testing_support::ParseAndVerify(Entry(R"(x = f32[2,1] constant({ {1}, {3} })
  s = f32[1] constant({2})
  o = f32[1] constant({0.5})
  ROOT bn = (f32[2,1], f32[1], f32[1]) batch-norm-training(x, s, o), epsilon=0, feature_index=1)"));
  compiler::BatchNormExpander pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kBatchNormTraining), 0);
  hlo::Literal out = hlo::Evaluate(*result, {});
  ASSERT_EQ(out.elements().size(), 3u);
  EXPECT_EQ(out.elements()[0].GetAsDouble(0), -1.5);
  EXPECT_EQ(out.elements()[0].GetAsDouble(1), 2.5);
  EXPECT_EQ(out.elements()[1].GetAsDouble(0), 2.0);
  EXPECT_EQ(out.elements()[2].GetAsDouble(0), 1.0);
  // The reducer is defined before the entry that calls it.
  ASSERT_NE(result->FindComputation("batch_norm_add_f32"), nullptr);
  EXPECT_EQ(result->computations().front()->name(), "batch_norm_add_f32");
}

TEST(BatchNormExpander, GradHandComputedValues) {
  // x = {0, 3, 6}, mean 3, var 3, eps 1 (inv = 0.5), scale 2, dy = {1, 2, 6}, N = 3:
  //   c = {-3, 0, 3}; grad_offset = 9; sum(dy*c) = 15; grad_scale = 15 * 0.5 = 7.5;
  //   grad_x = 2 * 0.5 * (dy - 9/3 - c * 15 / (4 * 3)) = {1.75, -1, -0.75}.
  auto module = testing_support::ParseAndVerify(Entry(R"(x = f32[3,1] constant({ {0}, {3}, {6} })
  s = f32[1] constant({2})
  m = f32[1] constant({3})
  v = f32[1] constant({3})
  dy = f32[3,1] constant({ {1}, {2}, {6} })
  ROOT bn = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=1, feature_index=1)"));
  compiler::BatchNormExpander pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kBatchNormGrad), 0);
  hlo::Literal out = hlo::Evaluate(*result, {});
  EXPECT_EQ(out.elements()[0].GetAsDouble(0), 1.75);
  EXPECT_EQ(out.elements()[0].GetAsDouble(1), -1.0);
  EXPECT_EQ(out.elements()[0].GetAsDouble(2), -0.75);
  EXPECT_EQ(out.elements()[1].GetAsDouble(0), 7.5);
  EXPECT_EQ(out.elements()[2].GetAsDouble(0), 9.0);
}

TEST(BatchNormExpander, TrainingAndGradRandomF32AndBf16) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m

batch_norm_add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,3,4,5] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  t = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
  y = f32[2,3,4,5] get-tuple-element(t), index=0
  mean = f32[3] get-tuple-element(t), index=1
  var = f32[3] get-tuple-element(t), index=2
  dy = f32[2,3,4,5] parameter(3)
  g = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-grad(x, s, mean, var, dy), epsilon=0.001, feature_index=1
  xb = bf16[4,2,3] parameter(4)
  sb = bf16[3] parameter(5)
  ob = bf16[3] parameter(6)
  tb = (bf16[4,2,3], bf16[3], bf16[3]) batch-norm-training(xb, sb, ob), epsilon=0.01, feature_index=2
  ROOT r = ((f32[2,3,4,5], f32[3], f32[3]), f32[2,3,4,5], (bf16[4,2,3], bf16[3], bf16[3])) tuple(g, y, tb)
})");
  compiler::BatchNormExpander pass;
  auto result = RunPass(pass, *module, true, Compare::kTolerance);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kBatchNormTraining), 0);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kBatchNormGrad), 0);
  // The name batch_norm_add_f32 was taken: the new reducer gets a suffix.
  EXPECT_NE(result->FindComputation("batch_norm_add_f32.1"), nullptr);
}

TEST(BatchNormExpander, NothingToExpand) {
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = f32[8] parameter(0)
  ROOT r = f32[8] negate(p0))"));
  compiler::BatchNormExpander pass;
  RunPass(pass, *module, false, Compare::kNone);
}

}  // namespace

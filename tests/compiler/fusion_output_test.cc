// Output fusion (kOutput) of dot/convolution with the epilogues a target accepts — bias, scale,
// relu, GELU — and nothing on targets without epilogues; plus how fused modules print.
#include <gtest/gtest.h>

#include "tests/compiler/fusion_test_util.h"
#include "targets/descriptions.h"

namespace {
using fusion_test::AllFusionPasses;
using fusion_test::CountInBody;
using fusion_test::CountTopLevel;
using fusion_test::FuseAndCheck;
using fusion_test::Fusions;
using fusion_test::KindOf;
using fusion_test::kReducers;
using fusion_test::Softmax;
using hlo::FusionKind;
using hlo::Opcode;

constexpr char kDotBiasRelu[] = R"(
HloModule dot_bias_relu
ENTRY e {
  a = f32[2,3] parameter(0)
  w = f32[3,4] parameter(1)
  bias = f32[4] parameter(2)
  d = f32[2,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[2,4] broadcast(bias), dimensions={1}
  add = f32[2,4] add(d, bb)
  zero = f32[] constant(0)
  zb = f32[2,4] broadcast(zero), dimensions={}
  ROOT relu = f32[2,4] maximum(add, zb)
}
)";

TEST(OutputFusion, DotBiasReluIsOneKOutputFusionOnCpuAndGpu) {
  for (const compiler::TargetDescription* target : {&targets::CpuDescription(), &targets::GpuDescription()}) {
    SCOPED_TRACE(target->name);
    auto after = FuseAndCheck(kDotBiasRelu, AllFusionPasses(), *target);
    const auto fusions = Fusions(*after);
    ASSERT_EQ(fusions.size(), 1u);
    const hlo::Instruction& f = *fusions[0];
    EXPECT_EQ(KindOf(f), FusionKind::kOutput);
    EXPECT_EQ(CountInBody(f, Opcode::kDot), 1);
    EXPECT_EQ(CountInBody(f, Opcode::kAdd), 1);
    EXPECT_EQ(CountInBody(f, Opcode::kMaximum), 1);
    EXPECT_EQ(f.operand_count(), 3);  // a, w, bias
    EXPECT_EQ(CountTopLevel(*after, Opcode::kDot), 0);
  }
}

TEST(OutputFusion, InterpFormsNoFusionAndReportsNoChange) {
  auto module = testing_support::ParseAndVerify(kDotBiasRelu);
  const std::string before = hlo::PrintModule(*module);
  for (const std::string& name : AllFusionPasses()) {
    EXPECT_FALSE(compiler::MakePass(name, targets::InterpDescription())->Run(*module)) << name;
  }
  EXPECT_EQ(hlo::PrintModule(*module), before);
}

TEST(OutputFusion, EpilogueTheTargetLacksStaysOutside) {
  compiler::TargetDescription bias_only = targets::CpuDescription();
  bias_only.contraction_epilogues = {compiler::Epilogue::kBiasAdd};
  auto after = FuseAndCheck(kDotBiasRelu, {"output-fusion"}, bias_only);
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kMaximum), 0);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kAdd), 1);
  EXPECT_EQ(after->entry()->root()->opcode(), Opcode::kMaximum);
}

TEST(OutputFusion, BiasAlongTheWrongDimensionIsNotAnEpilogue) {
  const std::string text = R"(
HloModule wrong_bias
ENTRY e {
  a = f32[2,3] parameter(0)
  w = f32[3,4] parameter(1)
  bias = f32[2] parameter(2)
  d = f32[2,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[2,4] broadcast(bias), dimensions={0}
  ROOT add = f32[2,4] add(d, bb)
}
)";
  auto after = FuseAndCheck(text, {"output-fusion"}, targets::CpuDescription());
  EXPECT_TRUE(Fusions(*after).empty());
}

TEST(OutputFusion, ConvolutionWithPerChannelBiasAndScale) {
  const std::string text = R"(
HloModule conv_bias
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,3] parameter(1)
  bias = f32[3] parameter(2)
  c = f32[1,5,5,3] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[1,5,5,3] broadcast(bias), dimensions={3}
  add = f32[1,5,5,3] add(c, bb)
  two = f32[] constant(2)
  twob = f32[1,5,5,3] broadcast(two), dimensions={}
  ROOT scaled = f32[1,5,5,3] multiply(add, twob)
}
)";
  auto after = FuseAndCheck(text, AllFusionPasses(), targets::CpuDescription());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(KindOf(*fusions[0]), FusionKind::kOutput);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kConvolution), 1);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kMultiply), 1);
}

TEST(Fusion, PrintsAsXlaDoesWithCalleesFirst) {
  auto after = FuseAndCheck(kDotBiasRelu, AllFusionPasses(), targets::CpuDescription());
  const std::string text = hlo::PrintModule(*after);
  EXPECT_NE(text.find("fusion(a, w, bias), kind=kOutput, calls=fused_computation"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("fused_computation {"), text.find("ENTRY"));
  EXPECT_NE(text.find("param_0 = f32[2,3]{1,0} parameter(0)"), std::string::npos) << text;
  // Instructions inside keep their original names.
  EXPECT_NE(text.find("ROOT relu = f32[2,4]{1,0} maximum(add, zb)"), std::string::npos) << text;
}

TEST(Fusion, ExplainsAMissingEpilogue) {
  compiler::TargetDescription bias_only = targets::CpuDescription();
  bias_only.contraction_epilogues = {compiler::Epilogue::kBiasAdd};
  auto after = FuseAndCheck(kDotBiasRelu, AllFusionPasses(), bias_only);
  const auto decisions = compiler::ExplainFusion(*after, bias_only);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].reason, "target has no kOutput epilogue for relu");
}

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) with x = dot + bias.
std::string DotBiasGelu() {
  return R"(
HloModule dot_bias_gelu

ENTRY main {
  a = f32[2,3] parameter(0)
  w = f32[3,4] parameter(1)
  bias = f32[4] parameter(2)
  d = f32[2,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[2,4] broadcast(bias), dimensions={1}
  x = f32[2,4] add(d, bb)
  c3 = f32[] constant(3)
  c3b = f32[2,4] broadcast(c3), dimensions={}
  x3 = f32[2,4] power(x, c3b)
  k = f32[] constant(0.044715)
  kb = f32[2,4] broadcast(k), dimensions={}
  kx3 = f32[2,4] multiply(kb, x3)
  inner = f32[2,4] add(x, kx3)
  s = f32[] constant(0.7978846)
  sb = f32[2,4] broadcast(s), dimensions={}
  arg = f32[2,4] multiply(sb, inner)
  t = f32[2,4] tanh(arg)
  one = f32[] constant(1)
  oneb = f32[2,4] broadcast(one), dimensions={}
  onept = f32[2,4] add(oneb, t)
  half = f32[] constant(0.5)
  halfb = f32[2,4] broadcast(half), dimensions={}
  hx = f32[2,4] multiply(halfb, x)
  ROOT g = f32[2,4] multiply(hx, onept)
}
)";
}

TEST(OutputFusion, GeluJoinsTheContractionOnlyWhereTheTargetHasTheEpilogue) {
  const std::string text = DotBiasGelu();
  ASSERT_FALSE(text.empty());
  auto on_gpu = fusion_test::FuseAndCheck(text, fusion_test::AllFusionPasses(),
                                          targets::GpuDescription());
  auto gpu_fusions = fusion_test::Fusions(*on_gpu);
  ASSERT_EQ(gpu_fusions.size(), 1u);
  EXPECT_EQ(fusion_test::KindOf(*gpu_fusions[0]), hlo::FusionKind::kOutput);
  EXPECT_EQ(fusion_test::CountInBody(*gpu_fusions[0], Opcode::kTanh), 1);

  auto on_cpu = fusion_test::FuseAndCheck(text, fusion_test::AllFusionPasses(),
                                          targets::CpuDescription());
  auto cpu_fusions = fusion_test::Fusions(*on_cpu);
  ASSERT_EQ(cpu_fusions.size(), 2u);  // kOutput (dot + bias) and kLoop (the GELU)
  const auto decisions = compiler::ExplainFusion(*on_cpu, targets::CpuDescription());
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].reason, "target has no kOutput epilogue for gelu");
}

}  // namespace

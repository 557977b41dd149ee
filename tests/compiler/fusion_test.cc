// Fusion passes on small modules whose expected fusion structure is known by hand: softmax and
// layer norm rows (kInput), dot + bias + relu (kOutput), loop fusion's duplication and size
// bounds, sibling multi-output fusion, naming/printing, and "no change" on targets without
// fusion. Every fused module is also evaluated against the original.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/compiler/fusion_test_util.h"

namespace {

using compiler::CpuTarget;
using compiler::GpuTarget;
using compiler::InterpTarget;
using fusion_test::AllFusionPasses;
using fusion_test::CountInBody;
using fusion_test::CountTopLevel;
using fusion_test::FuseAndCheck;
using fusion_test::Fusions;
using fusion_test::KindOf;
using hlo::FusionKind;
using hlo::Opcode;

constexpr char kReducers[] = R"(
max_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string Softmax() {
  return std::string("HloModule softmax\n") + kReducers + R"(
ENTRY e {
  x = f32[4,8] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max_r
  mxb = f32[4,8] broadcast(mx), dimensions={0}
  sub = f32[4,8] subtract(x, mxb)
  ex = f32[4,8] exponential(sub)
  zero = f32[] constant(0)
  sum = f32[4] reduce(ex, zero), dimensions={1}, to_apply=add_r
  sumb = f32[4,8] broadcast(sum), dimensions={0}
  ROOT div = f32[4,8] divide(ex, sumb)
}
)";
}

std::string LayerNorm() {
  return std::string("HloModule layer_norm\n") + kReducers + R"(
ENTRY e {
  x = f32[4,8] parameter(0)
  g = f32[8] parameter(1)
  b = f32[8] parameter(2)
  zero = f32[] constant(0)
  s = f32[4] reduce(x, zero), dimensions={1}, to_apply=add_r
  n = f32[] constant(8)
  nb = f32[4] broadcast(n), dimensions={}
  mean = f32[4] divide(s, nb)
  meanb = f32[4,8] broadcast(mean), dimensions={0}
  c = f32[4,8] subtract(x, meanb)
  sq = f32[4,8] multiply(c, c)
  ss = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add_r
  var = f32[4] divide(ss, nb)
  eps = f32[] constant(1e-05)
  epsb = f32[4] broadcast(eps), dimensions={}
  ve = f32[4] add(var, epsb)
  rs = f32[4] rsqrt(ve)
  rsb = f32[4,8] broadcast(rs), dimensions={0}
  norm = f32[4,8] multiply(c, rsb)
  gb = f32[4,8] broadcast(g), dimensions={1}
  scaled = f32[4,8] multiply(norm, gb)
  bb = f32[4,8] broadcast(b), dimensions={1}
  ROOT y = f32[4,8] add(scaled, bb)
}
)";
}

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

TEST(InputFusion, SoftmaxRowBecomesOneKInputFusion) {
  auto after = FuseAndCheck(Softmax(), AllFusionPasses(), CpuTarget());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  const hlo::Instruction& f = *fusions[0];
  EXPECT_EQ(KindOf(f), FusionKind::kInput);
  EXPECT_EQ(after->entry()->root(), &f);
  EXPECT_EQ(CountInBody(f, Opcode::kReduce), 2);
  EXPECT_EQ(CountInBody(f, Opcode::kExp), 1);
  EXPECT_EQ(CountInBody(f, Opcode::kDivide), 1);
  EXPECT_EQ(CountInBody(f, Opcode::kParameter), 1);  // x, read once
  EXPECT_EQ(after->entry()->instructions().size(), 2u);  // x and the fusion
}

TEST(InputFusion, LayerNormRowBecomesOneKInputFusion) {
  auto after = FuseAndCheck(LayerNorm(), AllFusionPasses(), CpuTarget());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(KindOf(*fusions[0]), FusionKind::kInput);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kReduce), 2);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kRsqrt), 1);
  // x, gamma and beta are the only values read from memory.
  EXPECT_EQ(fusions[0]->operand_count(), 3);
  EXPECT_EQ(after->entry()->instructions().size(), 4u);
}

TEST(InputFusion, ReductionOverOtherDimsStartsANewGroup) {
  // The column sum of a row-softmax reduces dim 0: a different row signature, so it must not
  // join the softmax fusion (its rows are the softmax's columns).
  const std::string text = std::string("HloModule two_groups\n") + kReducers + R"(
ENTRY e {
  x = f32[4,8] parameter(0)
  zero = f32[] constant(0)
  rs = f32[4] reduce(x, zero), dimensions={1}, to_apply=add_r
  rsb = f32[4,8] broadcast(rs), dimensions={0}
  d = f32[4,8] divide(x, rsb)
  ROOT cs = f32[8] reduce(d, zero), dimensions={0}, to_apply=add_r
}
)";
  auto after = FuseAndCheck(text, AllFusionPasses(), CpuTarget());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 2u);
  for (const hlo::Instruction* f : fusions) {
    EXPECT_EQ(KindOf(*f), FusionKind::kInput);
    EXPECT_EQ(CountInBody(*f, Opcode::kReduce), 1);
  }
}

TEST(OutputFusion, DotBiasReluIsOneKOutputFusionOnCpuAndGpu) {
  for (const compiler::TargetDescription* target : {&CpuTarget(), &GpuTarget()}) {
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
    EXPECT_FALSE(compiler::MakePass(name, InterpTarget())->Run(*module)) << name;
  }
  EXPECT_EQ(hlo::PrintModule(*module), before);
}

TEST(OutputFusion, EpilogueTheTargetLacksStaysOutside) {
  compiler::TargetDescription bias_only = CpuTarget();
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
  auto after = FuseAndCheck(text, {"output-fusion"}, CpuTarget());
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
  auto after = FuseAndCheck(text, AllFusionPasses(), CpuTarget());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(KindOf(*fusions[0]), FusionKind::kOutput);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kConvolution), 1);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kMultiply), 1);
}

// m has two users; each consumer roots its own loop fusion.
constexpr char kSharedMultiply[] = R"(
HloModule shared
ENTRY e {
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  m = f32[16] multiply(x, y)
  a = f32[16] add(m, x)
  s = f32[16] subtract(m, y)
  ROOT t = (f32[16], f32[16]) tuple(a, s)
}
)";

TEST(LoopFusion, DuplicatesACheapProducerWithinTheBudget) {
  // Work: m, a, s = 3 x 16 = 48; factor 1.5 allows 24 more, enough to compute m twice.
  auto after = FuseAndCheck(kSharedMultiply, {"loop-fusion"}, CpuTarget());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 2u);
  for (const hlo::Instruction* f : fusions) EXPECT_EQ(CountInBody(*f, Opcode::kMultiply), 1);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kMultiply), 0);
}

TEST(LoopFusion, DuplicationFactorOneRecomputesNothing) {
  compiler::TargetDescription no_recompute = CpuTarget();
  no_recompute.max_duplication_factor = 1.0;
  auto after = FuseAndCheck(kSharedMultiply, {"loop-fusion"}, no_recompute);
  EXPECT_TRUE(Fusions(*after).empty());
  EXPECT_EQ(CountTopLevel(*after, Opcode::kMultiply), 1);
  const auto decisions = compiler::ExplainFusion(*after, no_recompute);
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].reason,
            "duplicating multiply exceeds the duplication budget (max_duplication_factor 1.00)");
}

TEST(LoopFusion, NeverDuplicatesAnExpensiveProducer) {
  std::string text = kSharedMultiply;
  text.replace(text.find("multiply(x, y)"), 14, "exponential(x)");
  compiler::TargetDescription generous = CpuTarget();
  generous.max_duplication_factor = 100.0;
  auto after = FuseAndCheck(text, {"loop-fusion"}, generous);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kExp), 1);
  const auto decisions = compiler::ExplainFusion(*after, generous);
  ASSERT_FALSE(decisions.empty());
  EXPECT_EQ(decisions[0].producer, "m");
  EXPECT_EQ(decisions[0].reason, "would duplicate 2 users of an expensive producer (exponential)");
}

TEST(LoopFusion, RespectsTheFusionSizeLimit) {
  std::string text = "HloModule chain\nENTRY e {\n  n0 = f32[8] parameter(0)\n";
  for (int i = 1; i <= 9; ++i) {
    text += std::string(i == 9 ? "  ROOT " : "  ") + "n" + std::to_string(i) +
            " = f32[8] negate(n" + std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  compiler::TargetDescription small = CpuTarget();
  small.max_fusion_instructions = 4;
  auto after = FuseAndCheck(text, {"loop-fusion"}, small);
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 2u);  // n6..n9 and n2..n5; n1 is left alone
  for (const hlo::Instruction* f : fusions) EXPECT_EQ(CountInBody(*f, Opcode::kNegate), 4);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kNegate), 1);
  for (const auto& d : compiler::ExplainFusion(*after, small)) {
    EXPECT_EQ(d.reason, "fusion size limit 4") << d.producer << " -> " << d.consumer;
  }
}

TEST(LoopFusion, DataMovementChainsAndSmallConstantsFuse) {
  const std::string text = R"(
HloModule movement
ENTRY e {
  x = f32[4,6] parameter(0)
  t = f32[6,4] transpose(x), dimensions={1,0}
  s = f32[3,4] slice(t), slice={[0:3], [0:4]}
  big = f32[3,4] constant({{1,2,3,4},{5,6,7,8},{9,10,11,12}})
  a = f32[3,4] add(s, big)
  r = f32[12] reshape(a)
  c = f32[24] concatenate(r, r), dimensions={0}
  z = f32[] constant(0)
  ROOT p = f32[26] pad(c, z), padding=1_1
}
)";
  auto after = FuseAndCheck(text, AllFusionPasses(), CpuTarget());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(KindOf(*fusions[0]), FusionKind::kLoop);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kTranspose), 1);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kPad), 1);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kConstant), 0);  // 12 elements: small, fused
}

TEST(MultiOutputFusion, SiblingsReadingTheSameOperandShareOneFusion) {
  const std::string text = R"(
HloModule siblings
ENTRY e {
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  a = f32[16] add(x, y)
  a2 = f32[16] negate(a)
  s = f32[16] subtract(x, y)
  s2 = f32[16] abs(s)
  ROOT t = (f32[16], f32[16]) tuple(a2, s2)
}
)";
  auto on_gpu = FuseAndCheck(text, AllFusionPasses(), GpuTarget());
  const auto fusions = Fusions(*on_gpu);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_TRUE(fusions[0]->shape().IsTuple());
  EXPECT_EQ(fusions[0]->operand_count(), 2);
  EXPECT_EQ(CountTopLevel(*on_gpu, Opcode::kGetTupleElement), 2);
  // The cpu target has no multi-output fusion: two loop fusions.
  auto on_cpu = FuseAndCheck(text, AllFusionPasses(), CpuTarget());
  EXPECT_EQ(Fusions(*on_cpu).size(), 2u);
}

TEST(Fusion, PrintsAsXlaDoesWithCalleesFirst) {
  auto after = FuseAndCheck(kDotBiasRelu, AllFusionPasses(), CpuTarget());
  const std::string text = hlo::PrintModule(*after);
  EXPECT_NE(text.find("fusion(a, w, bias), kind=kOutput, calls=fused_computation"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("fused_computation {"), text.find("ENTRY"));
  EXPECT_NE(text.find("param_0 = f32[2,3]{1,0} parameter(0)"), std::string::npos) << text;
  // Instructions inside keep their original names.
  EXPECT_NE(text.find("ROOT relu = f32[2,4]{1,0} maximum(add, zb)"), std::string::npos) << text;
}

TEST(Fusion, NeverFusesCustomCallsAndExplainsWhy) {
  const std::string text = R"(
HloModule cc
ENTRY e {
  x = f32[8] parameter(0)
  e1 = f32[8] exponential(x)
  c = f32[8] custom-call(e1), custom_call_target="foo"
  ROOT n = f32[8] negate(c)
}
)";
  auto module = testing_support::ParseAndVerify(text);
  fusion_test::RunPasses(*module, AllFusionPasses(), CpuTarget());
  EXPECT_TRUE(Fusions(*module).empty());
  const auto decisions = compiler::ExplainFusion(*module, CpuTarget());
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].reason, "consumer is a custom-call");
  EXPECT_EQ(decisions[1].reason, "producer is a custom-call");
  EXPECT_EQ(compiler::FormatFusionDecisions(decisions),
            "e: e1 -> c: consumer is a custom-call\ne: c -> n: producer is a custom-call\n");
}

TEST(Fusion, ExplainsAMissingEpilogue) {
  compiler::TargetDescription bias_only = CpuTarget();
  bias_only.contraction_epilogues = {compiler::Epilogue::kBiasAdd};
  auto after = FuseAndCheck(kDotBiasRelu, AllFusionPasses(), bias_only);
  const auto decisions = compiler::ExplainFusion(*after, bias_only);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].reason, "target has no kOutput epilogue for relu");
}

TEST(Fusion, DoesNotEnterCustomFusionsOrReducers) {
  const std::string text = R"(
HloModule custom
inner {
  a = f32[8] parameter(0)
  ROOT n = f32[8] negate(a)
}
ENTRY e {
  x = f32[8] parameter(0)
  e1 = f32[8] exponential(x)
  f = f32[8] fusion(e1), kind=kCustom, calls=inner
  ROOT r = f32[8] abs(f)
}
)";
  auto after = FuseAndCheck(text, AllFusionPasses(), GpuTarget());
  EXPECT_EQ(Fusions(*after).size(), 1u);  // only the kCustom one
  EXPECT_EQ(CountTopLevel(*after, Opcode::kExp), 1);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kAbs), 1);
}

}  // namespace

namespace {

TEST(Fusion, KeepsARootThatHasUsers) {
  // `a` is the root and also feeds a dead `b`: fusing `a` into `b`'s group must not delete it.
  const std::string text = R"(
HloModule root_with_users
ENTRY e {
  x = f32[8] parameter(0)
  ROOT a = f32[8] negate(x)
  b = f32[8] abs(a)
}
)";
  auto after = fusion_test::FuseAndCheck(text, fusion_test::AllFusionPasses(),
                                         compiler::CpuTarget());
  ASSERT_NE(after->entry()->root(), nullptr);
  EXPECT_EQ(after->entry()->root()->name(), "a");
}

TEST(Fusion, FusesInsideWhileBodies) {
  const std::string text = R"(
HloModule loop
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v = f32[8] get-tuple-element(p), index=1
  h = f32[] constant(0.5)
  hb = f32[8] broadcast(h), dimensions={}
  m = f32[8] multiply(v, hb)
  ROOT t = (s32[], f32[8]) tuple(i2, m)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, x)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
)";
  auto after = fusion_test::FuseAndCheck(text, fusion_test::AllFusionPasses(),
                                         compiler::GpuTarget());
  const hlo::Computation* body = after->FindComputation("body");
  ASSERT_NE(body, nullptr);
  int fusions = 0;
  for (const auto& inst : body->instructions()) fusions += inst->opcode() == Opcode::kFusion;
  EXPECT_EQ(fusions, 2);  // multiply(v, broadcast(0.5)) and add(i, 1)
  // The condition is a control-flow computation too: compare(i, 3) takes its constant along.
  const hlo::Computation* cond = after->FindComputation("cond");
  EXPECT_EQ(cond->instructions().size(), 3u);
  EXPECT_EQ(cond->root()->opcode(), Opcode::kFusion);
}

}  // namespace

namespace {

TEST(LoopFusion, MergesExistingLoopFusions) {
  // A first run with a tiny size limit leaves two fusions and a lone negate; a second run with
  // the cpu limit (64) fuses them all into one, inlining the existing fusions.
  std::string text = "HloModule chain\nENTRY e {\n  n0 = f32[8] parameter(0)\n";
  for (int i = 1; i <= 9; ++i) {
    text += std::string(i == 9 ? "  ROOT " : "  ") + "n" + std::to_string(i) +
            " = f32[8] negate(n" + std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  auto before = testing_support::ParseAndVerify(text);
  auto after = before->Clone();
  compiler::TargetDescription small = compiler::CpuTarget();
  small.max_fusion_instructions = 4;
  compiler::LoopFusion(small).Run(*after);
  ASSERT_EQ(fusion_test::Fusions(*after).size(), 2u);
  EXPECT_TRUE(compiler::LoopFusion(compiler::CpuTarget()).Run(*after));
  hlo::Verify(*after);
  const auto fusions = fusion_test::Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusion_test::CountInBody(*fusions[0], Opcode::kNegate), 9);
  EXPECT_EQ(after->computations().size(), 2u);  // the inlined fused computations are gone
  fusion_test::ExpectSameResults(*before, *after);
}

// Evaluates before and after fusion on the given arguments; expects bitwise-equal results
// (fusion clones instructions, so even NaN payloads and signed zeros must not change).
void ExpectBitwiseSame(const std::string& text, const std::vector<hlo::Literal>& args) {
  auto before = testing_support::ParseAndVerify(text);
  auto after = before->Clone();
  fusion_test::RunPasses(*after, fusion_test::AllFusionPasses(), compiler::GpuTarget());
  EXPECT_FALSE(fusion_test::Fusions(*after).empty());
  const hlo::Literal expected = hlo::Evaluate(*before, args);
  const hlo::Literal actual = hlo::Evaluate(*after, args);
  EXPECT_TRUE(expected.BitwiseEqual(actual)) << expected.ToString() << " vs " << actual.ToString();
}

hlo::Literal F32(std::vector<int64_t> dims, const std::vector<float>& values) {
  hlo::Literal literal(hlo::Shape::Array(hlo::PrimitiveType::kF32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) literal.mutable_data<float>()[i] = values[i];
  return literal;
}

TEST(InputFusion, SoftmaxKeepsNanInfAndSignedZeroBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0: +inf makes the row NaN (inf - inf); row 1: NaN propagates through max; row 2: all
  // -inf gives NaN (0/0 after exp(-inf - -inf) = exp(NaN)); row 3: ordinary values with -0.
  std::vector<hlo::Literal> args;
  args.push_back(F32({4, 8}, {inf, 1, 2, 3, 4, 5, 6, 7,       1, nan, 0, 0, 0, 0, 0, 0,
                              -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,
                              -0.0f, 0, 1, -1, 2, -2, 3, -3}));
  ExpectBitwiseSame(Softmax(), args);
  // And the values themselves (computed by hand): row 3's entry for -0 is e^0 / sum(e^x).
  auto module = testing_support::ParseAndVerify(Softmax());
  fusion_test::RunPasses(*module, fusion_test::AllFusionPasses(), compiler::CpuTarget());
  const hlo::Literal out = hlo::Evaluate(*module, args);
  double sum = 0;
  for (double v : {0.0, 0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0}) sum += std::exp(v - 3.0);
  EXPECT_NEAR(out.GetAsDouble(24), std::exp(-3.0) / sum, 1e-6);
  EXPECT_TRUE(std::isnan(out.GetAsDouble(0)));
  EXPECT_TRUE(std::isnan(out.GetAsDouble(8)));
  EXPECT_TRUE(std::isnan(out.GetAsDouble(16)));
}

TEST(LoopFusion, EmptyShapesFuseAndEvaluate) {
  const std::string text = R"(
HloModule empty
ENTRY e {
  x = f32[0,3] parameter(0)
  n = f32[0,3] negate(x)
  ROOT a = f32[0,3] add(n, x)
}
)";
  std::vector<hlo::Literal> args;
  args.push_back(F32({0, 3}, {}));
  ExpectBitwiseSame(text, args);
}

TEST(LoopFusion, IntegerOverflowWrapsTheSameWayInsideAFusion) {
  const std::string text = R"(
HloModule wrap
ENTRY e {
  x = s32[2] parameter(0)
  big = s32[] constant(2147483647)
  b = s32[2] broadcast(big), dimensions={}
  ROOT a = s32[2] add(x, b)
}
)";
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kS32, {2}));
  x.mutable_data<int32_t>()[0] = 1;
  x.mutable_data<int32_t>()[1] = -1;
  std::vector<hlo::Literal> args;
  args.push_back(std::move(x));
  ExpectBitwiseSame(text, args);
  auto module = testing_support::ParseAndVerify(text);
  fusion_test::RunPasses(*module, fusion_test::AllFusionPasses(), compiler::CpuTarget());
  const hlo::Literal out = hlo::Evaluate(*module, args);
  EXPECT_EQ(out.data<int32_t>()[0], std::numeric_limits<int32_t>::min());  // wraps
  EXPECT_EQ(out.data<int32_t>()[1], 2147483646);
}

}  // namespace

// Input, loop and multi-output fusion on small modules whose expected fusion structure is known
// by hand: softmax and layer-norm rows (kInput), loop fusion's duplication and size bounds,
// merging of existing fusions, sibling multi-output fusion, control-flow bodies, and what is
// never fused. Every fused module is also evaluated against the original.
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

TEST(InputFusion, SoftmaxRowBecomesOneKInputFusion) {
  auto after = FuseAndCheck(Softmax(), AllFusionPasses(), targets::CpuDescription());
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
  auto after = FuseAndCheck(LayerNorm(), AllFusionPasses(), targets::CpuDescription());
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
  auto after = FuseAndCheck(text, AllFusionPasses(), targets::CpuDescription());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 2u);
  for (const hlo::Instruction* f : fusions) {
    EXPECT_EQ(KindOf(*f), FusionKind::kInput);
    EXPECT_EQ(CountInBody(*f, Opcode::kReduce), 1);
  }
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
  auto after = FuseAndCheck(kSharedMultiply, {"loop-fusion"}, targets::CpuDescription());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 2u);
  for (const hlo::Instruction* f : fusions) EXPECT_EQ(CountInBody(*f, Opcode::kMultiply), 1);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kMultiply), 0);
}

TEST(LoopFusion, DuplicationFactorOneRecomputesNothing) {
  compiler::TargetDescription no_recompute = targets::CpuDescription();
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
  compiler::TargetDescription generous = targets::CpuDescription();
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
  compiler::TargetDescription small = targets::CpuDescription();
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

// Scalar constants and their broadcasts are immediates in a kernel: they do not count toward
// the size limit (a polynomial's coefficients would otherwise split its evaluation).
TEST(LoopFusion, ScalarConstantsAndTheirBroadcastsAreFreeUnderTheSizeLimit) {
  std::string text =
      "HloModule poly\nENTRY e {\n  x = f32[8] parameter(0)\n  p0 = f32[8] negate(x)\n";
  for (int i = 1; i <= 4; ++i) {
    const std::string n = std::to_string(i), prev = std::to_string(i - 1);
    text += "  c" + n + " = f32[] constant(" + n + ")\n  b" + n + " = f32[8] broadcast(c" + n +
            "), dimensions={}\n  m" + n + " = f32[8] multiply(p" + prev + ", x)\n  " +
            (i == 4 ? "ROOT " : "") + "p" + n + " = f32[8] add(m" + n + ", b" + n + ")\n";
  }
  text += "}\n";
  compiler::TargetDescription small = targets::CpuDescription();
  small.max_fusion_instructions = 9;  // the 9 arithmetic ops; with the 8 constants: 17
  auto after = FuseAndCheck(text, {"loop-fusion"}, small);
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kMultiply), 4);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kNegate), 1);
  small.max_fusion_instructions = 8;  // one arithmetic op too many: split
  EXPECT_EQ(Fusions(*FuseAndCheck(text, {"loop-fusion"}, small)).size(), 1u);
  EXPECT_EQ(CountTopLevel(*FuseAndCheck(text, {"loop-fusion"}, small), Opcode::kNegate), 1);
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
  auto after = FuseAndCheck(text, AllFusionPasses(), targets::CpuDescription());
  const auto fusions = Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(KindOf(*fusions[0]), FusionKind::kLoop);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kTranspose), 1);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kPad), 1);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kConstant), 0);  // 12 elements: small, fused
}

TEST(LoopFusion, MergesExistingLoopFusions) {
  // A first run with a tiny size limit leaves two fusions and a lone negate; a second run with
  // the cpu limit (128) fuses them all into one, inlining the existing fusions.
  std::string text = "HloModule chain\nENTRY e {\n  n0 = f32[8] parameter(0)\n";
  for (int i = 1; i <= 9; ++i) {
    text += std::string(i == 9 ? "  ROOT " : "  ") + "n" + std::to_string(i) +
            " = f32[8] negate(n" + std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  auto before = testing_support::ParseAndVerify(text);
  auto after = before->Clone();
  compiler::TargetDescription small = targets::CpuDescription();
  small.max_fusion_instructions = 4;
  compiler::LoopFusion(small).Run(*after);
  ASSERT_EQ(fusion_test::Fusions(*after).size(), 2u);
  EXPECT_TRUE(compiler::LoopFusion(targets::CpuDescription()).Run(*after));
  hlo::Verify(*after);
  const auto fusions = fusion_test::Fusions(*after);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusion_test::CountInBody(*fusions[0], Opcode::kNegate), 9);
  EXPECT_EQ(after->computations().size(), 2u);  // the inlined fused computations are gone
  fusion_test::ExpectSameResults(*before, *after);
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
  auto on_gpu = FuseAndCheck(text, AllFusionPasses(), targets::GpuDescription());
  const auto fusions = Fusions(*on_gpu);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_TRUE(fusions[0]->shape().IsTuple());
  EXPECT_EQ(fusions[0]->operand_count(), 2);
  EXPECT_EQ(CountTopLevel(*on_gpu, Opcode::kGetTupleElement), 2);
  // The cpu target has no multi-output fusion: two loop fusions.
  auto on_cpu = FuseAndCheck(text, AllFusionPasses(), targets::CpuDescription());
  EXPECT_EQ(Fusions(*on_cpu).size(), 2u);
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
  fusion_test::RunPasses(*module, AllFusionPasses(), targets::CpuDescription());
  EXPECT_TRUE(Fusions(*module).empty());
  const auto decisions = compiler::ExplainFusion(*module, targets::CpuDescription());
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].reason, "consumer is a custom-call");
  EXPECT_EQ(decisions[1].reason, "producer is a custom-call");
  EXPECT_EQ(compiler::FormatFusionDecisions(decisions),
            "e: e1 -> c: consumer is a custom-call\ne: c -> n: producer is a custom-call\n");
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
  auto after = FuseAndCheck(text, AllFusionPasses(), targets::GpuDescription());
  EXPECT_EQ(Fusions(*after).size(), 1u);  // only the kCustom one
  EXPECT_EQ(CountTopLevel(*after, Opcode::kExp), 1);
  EXPECT_EQ(CountTopLevel(*after, Opcode::kAbs), 1);
}

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
                                         targets::CpuDescription());
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
                                         targets::GpuDescription());
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


TEST(Fusion, RegistryNamesTheFourPassesAndRejectsMisspellings) {
  for (const std::string& name : AllFusionPasses()) {
    EXPECT_EQ(compiler::MakePass(name, targets::CpuDescription())->name(), name);
  }
  try {
    compiler::MakePass("loop-fusions", targets::CpuDescription());
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("unknown pass 'loop-fusions'"), std::string::npos) << e.message();
    for (const std::string& name : AllFusionPasses()) {
      EXPECT_NE(e.message().find(name), std::string::npos) << e.message();  // listed as valid
    }
  }
}

TEST(Fusion, ExplainOfAModuleWithoutEntryIsEmpty) {
  hlo::Module empty("empty");
  EXPECT_TRUE(compiler::ExplainFusion(empty, targets::CpuDescription()).empty());
  EXPECT_EQ(compiler::FormatFusionDecisions({}), "");
}

}  // namespace

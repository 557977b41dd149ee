// Target-aware fusion: on systolic, host-fallback ops never share a fusion with ops the
// accelerator runs (compiler/fusion/fusion_placement.h); on cpu the same modules fuse fully.
// Expected groupings and owner counts are worked out by hand from the systolic op rules
// (targets/systolic/description.cc): tangent, cube root and s16 arithmetic run on the host; add,
// multiply, exponential, tanh, round-nearest-even and s32 arithmetic on the vector unit.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "compiler/ownership.h"
#include "tests/compiler/fusion_test_util.h"
#include "targets/descriptions.h"

namespace {
using fusion_test::AllFusionPasses;
using fusion_test::CountInBody;
using fusion_test::CountTopLevel;
using fusion_test::FuseAndCheck;
using fusion_test::Fusions;
using hlo::Opcode;

// add -> multiply -> tan -> exponential -> tanh: tan is the only host op on systolic.
constexpr char kChain[] = R"(HloModule chain
ENTRY main {
  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  a = f32[8,16] add(x, y)
  m = f32[8,16] multiply(a, y)
  c = f32[8,16] tan(m)
  e = f32[8,16] exponential(c)
  ROOT t = f32[8,16] tanh(e)
})";

int64_t Owned(const hlo::Module& module, const compiler::TargetDescription& target,
              compiler::Owner owner) {
  return compiler::AnalyzeOwnership(module, target)
      .instructions_by_owner.at(std::string(compiler::OwnerName(owner)));
}

std::set<Opcode> BodyOpcodes(const hlo::Instruction& fusion) {
  std::set<Opcode> ops;
  for (const auto& inst : fusion.called_computations()[0]->instructions()) {
    if (inst->opcode() != Opcode::kParameter) ops.insert(inst->opcode());
  }
  return ops;
}

TEST(FusionPlacement, TangentSplitsTheChainOnSystolic) {
  auto module = FuseAndCheck(kChain, AllFusionPasses(), targets::SystolicDescription());
  const auto fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), (std::set<Opcode>{Opcode::kAdd, Opcode::kMultiply}));
  EXPECT_EQ(BodyOpcodes(*fusions[1]), (std::set<Opcode>{Opcode::kExp, Opcode::kTanh}));
  EXPECT_EQ(CountTopLevel(*module, Opcode::kTan), 1);  // left unfused, alone on the host
  // Only the tangent itself is host fallback; the other four ops stay native.
  EXPECT_EQ(Owned(*module, targets::SystolicDescription(), compiler::Owner::kHostFallback), 1);
  EXPECT_EQ(Owned(*module, targets::SystolicDescription(), compiler::Owner::kAcceleratorNative), 4);
}

TEST(FusionPlacement, SameChainIsOneFusionOnCpu) {
  auto module = FuseAndCheck(kChain, AllFusionPasses(), targets::CpuDescription());
  const auto fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kTan), 1);
  EXPECT_EQ(BodyOpcodes(*fusions[0]).size(), 5u);
  EXPECT_EQ(Owned(*module, targets::CpuDescription(), compiler::Owner::kGeneratedKernel), 5);
}

TEST(FusionPlacement, ExplainNamesBothSides) {
  auto module = FuseAndCheck(kChain, AllFusionPasses(), targets::SystolicDescription());
  const auto decisions = compiler::ExplainFusion(*module, targets::SystolicDescription());
  ASSERT_EQ(decisions.size(), 2u);  // fusion -> c and c -> fusion.1
  for (const compiler::FusionDecision& d : decisions) {
    EXPECT_EQ(d.reason, "tan runs on the host on systolic, fusion (kLoop) natively")
        << d.producer << " -> " << d.consumer;
  }
  EXPECT_TRUE(decisions[0].consumer == "c" || decisions[1].producer == "c");
}

// The rules are per element type: s16 has no vector-unit type, so the s16 add and the convert
// from s16 run on the host and fuse with each other, while the s32 multiply stays native.
TEST(FusionPlacement, ElementTypeRulesDecideTheSide) {
  auto module = FuseAndCheck(R"(HloModule types
ENTRY main {
  x = s16[32] parameter(0)
  a = s16[32] add(x, x)
  c = s32[32] convert(a)
  ROOT m = s32[32] multiply(c, c)
})", AllFusionPasses(), targets::SystolicDescription());
  const auto fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), (std::set<Opcode>{Opcode::kAdd, Opcode::kConvert}));
  EXPECT_EQ(CountTopLevel(*module, Opcode::kMultiply), 1);
  EXPECT_EQ(Owned(*module, targets::SystolicDescription(), compiler::Owner::kHostFallback), 2);
  EXPECT_EQ(Owned(*module, targets::SystolicDescription(), compiler::Owner::kAcceleratorNative), 1);
  const auto decisions = compiler::ExplainFusion(*module, targets::SystolicDescription());
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].reason, "fusion (kLoop) runs on the host on systolic, multiply natively");
}

// convert<s8>(clamp(lo, round(x), hi)) is the accelerator's requantize instruction (systolic.cc
// makes round-nearest-even native for it), so the idiom stays in one device fusion.
TEST(FusionPlacement, RequantizeIdiomStaysTogether) {
  auto module = FuseAndCheck(R"(HloModule q
ENTRY main {
  x = f32[4,8] parameter(0)
  s = f32[] constant(0.5)
  sb = f32[4,8] broadcast(s), dimensions={}
  m = f32[4,8] multiply(x, sb)
  r = f32[4,8] round-nearest-even(m)
  lo = f32[] constant(-128)
  hi = f32[] constant(127)
  c = f32[4,8] clamp(lo, r, hi)
  ROOT o = s8[4,8] convert(c)
})", AllFusionPasses(), targets::SystolicDescription());
  const auto fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kRoundNearestEven), 1);
  EXPECT_EQ(CountInBody(*fusions[0], Opcode::kMultiply), 1);
  EXPECT_EQ(CountTopLevel(*module, Opcode::kRoundNearestEven), 0);
}

// Multi-output fusion (enabled here on a copy of systolic) never merges a host sibling with a
// device sibling: both read x, iterate over the same shape, and would otherwise merge.
TEST(FusionPlacement, MultiOutputKeepsSidesApart) {
  compiler::TargetDescription target = targets::SystolicDescription();
  target.multi_output_fusion = true;
  const std::string text = R"(HloModule mo
ENTRY main {
  x = f32[64] parameter(0)
  s = f32[64] cbrt(x)
  c = f32[64] tan(s)
  a = f32[64] add(x, x)
  m = f32[64] multiply(a, a)
  ROOT t = (f32[64], f32[64]) tuple(c, m)
})";
  auto module = FuseAndCheck(text, AllFusionPasses(), target);
  EXPECT_EQ(Fusions(*module).size(), 2u);
  for (const hlo::Instruction* fusion : Fusions(*module)) {
    EXPECT_TRUE(fusion->shape().IsArray()) << "merged into a tuple-rooted fusion";
  }
  // On cpu with the same setting the two siblings do merge.
  compiler::TargetDescription cpu = targets::CpuDescription();
  cpu.multi_output_fusion = true;
  auto merged = FuseAndCheck(text, AllFusionPasses(), cpu);
  ASSERT_EQ(Fusions(*merged).size(), 1u);
  EXPECT_TRUE(Fusions(*merged)[0]->shape().IsTuple());
}

}  // namespace

// The systolic description is the lowering's own answer (targets/systolic/lowering/native_ops.h):
// per instruction where one element type does not decide, and a host step of an op without an
// accelerator program that a description calls native fails loudly (CheckHostStepsAgainst).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>

#include "compiler/ownership.h"
#include "hlo/diagnostic.h"
#include "simulator/isa/arch_config.h"
#include "targets/descriptions.h"
#include "targets/systolic/lowering/lowering.h"
#include "tests/test_support.h"

namespace systolic::lowering {
namespace {

using compiler::Owner;

const hlo::Instruction& Named(const hlo::Module& module, const std::string& name) {
  const hlo::Instruction* inst = module.entry()->FindInstruction(name);
  if (inst == nullptr) throw std::runtime_error("no instruction " + name);
  return *inst;
}

Owner OwnerOf(const hlo::Module& module, const std::string& name) {
  return compiler::InstructionOwner(Named(module, name), targets::SystolicDescription()).owner;
}

const HostStep* FindHostStep(const LoweredModule& lowered, const std::string& name) {
  for (const Step& step : lowered.steps) {
    const auto* host = std::get_if<HostStep>(&step);
    if (host && host->instruction == name) return host;
  }
  return nullptr;
}

TEST(SystolicDescriptionAgreement, ConvertsVcvtDoesNotComputeRunOnTheHostInBoth) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY e {
  x = f32[4,256] parameter(0)
  to_int = s32[4,256] convert(x)
  to_bf16 = bf16[4,256] convert(x)
  ROOT t = (s32[4,256], bf16[4,256]) tuple(to_int, to_bf16)
})");
  // vcvt rounds where HLO truncates f32 -> s32: the description says host, with the reason.
  compiler::OwnerInfo to_int =
      compiler::InstructionOwner(Named(*module, "to_int"), targets::SystolicDescription());
  EXPECT_EQ(to_int.owner, Owner::kHostFallback);
  EXPECT_NE(to_int.detail.find("truncates"), std::string::npos) << to_int.detail;
  EXPECT_EQ(OwnerOf(*module, "to_bf16"), Owner::kAcceleratorNative);

  LoweredModule lowered = Lower(*module, LoadArchConfig("tpu-v1", {}));
  const HostStep* host = FindHostStep(lowered, "to_int");
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(host->no_instruction) << host->reason;
  EXPECT_EQ(FindHostStep(lowered, "to_bf16"), nullptr);
  EXPECT_NO_THROW(CheckHostStepsAgainst(*module, lowered, targets::SystolicDescription()));
}

TEST(SystolicDescriptionAgreement, RoundingIsNativeOnlyInsideTheRequantizeIdiom) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY e {
  x = f32[4,256] parameter(0)
  idiom_round = f32[4,256] round-nearest-even(x)
  lo = f32[] constant(-128)
  hi = f32[] constant(127)
  lo_b = f32[4,256] broadcast(lo), dimensions={}
  hi_b = f32[4,256] broadcast(hi), dimensions={}
  clamped = f32[4,256] clamp(lo_b, idiom_round, hi_b)
  q = s8[4,256] convert(clamped)
  lone_round = f32[4,256] round-nearest-even(x)
  ROOT t = (s8[4,256], f32[4,256]) tuple(q, lone_round)
})");
  EXPECT_EQ(OwnerOf(*module, "idiom_round"), Owner::kAcceleratorNative);
  EXPECT_EQ(OwnerOf(*module, "q"), Owner::kAcceleratorNative);
  EXPECT_EQ(OwnerOf(*module, "lone_round"), Owner::kHostFallback);
}

TEST(SystolicDescriptionAgreement, TotalOrderCompareAndOtherReducersRunOnTheHost) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
product {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY e {
  x = f32[4,256] parameter(0)
  y = f32[4,256] parameter(1)
  total = pred[4,256] compare(x, y), direction=LT, type=TOTALORDER
  plain = pred[4,256] compare(x, y), direction=LT
  one = f32[] constant(1)
  prod = f32[4] reduce(x, one), dimensions={1}, to_apply=product
  ROOT t = (pred[4,256], pred[4,256], f32[4]) tuple(total, plain, prod)
})");
  EXPECT_EQ(OwnerOf(*module, "total"), Owner::kHostFallback);
  EXPECT_EQ(OwnerOf(*module, "plain"), Owner::kAcceleratorNative);
  EXPECT_EQ(OwnerOf(*module, "prod"), Owner::kHostFallback);
  LoweredModule lowered = Lower(*module, LoadArchConfig("tpu-v1", {}));
  for (const char* name : {"total", "prod"}) {
    const HostStep* host = FindHostStep(lowered, name);
    ASSERT_NE(host, nullptr) << name;
    EXPECT_TRUE(host->no_instruction) << name << ": " << host->reason;
  }
  EXPECT_EQ(FindHostStep(lowered, "plain"), nullptr);
  EXPECT_NO_THROW(CheckHostStepsAgainst(*module, lowered, targets::SystolicDescription()));
}

// A description that claims an op the lowering has no program for is caught at compile time,
// with the instruction and its opcode named.
TEST(SystolicDescriptionAgreement, AHostStepOfAnOpTheDescriptionCallsNativeFailsLoudly) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY e {
  x = f32[4,256] parameter(0)
  ROOT waves = f32[4,256] tan(x)
})");
  LoweredModule lowered = Lower(*module, LoadArchConfig("tpu-v1", {}));
  const HostStep* host = FindHostStep(lowered, "waves");
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(host->no_instruction);
  EXPECT_NO_THROW(CheckHostStepsAgainst(*module, lowered, targets::SystolicDescription()));

  compiler::TargetDescription drifted = targets::SystolicDescription();
  drifted.op_rules[hlo::Opcode::kTan] =
      compiler::OpRule{compiler::OpHandling::kNative, "", {}, compiler::OpHandling::kNative};
  try {
    CheckHostStepsAgainst(*module, lowered, drifted);
    FAIL() << "a native claim for a host step was accepted";
  } catch (const hlo::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("waves (tan)"), std::string::npos) << message;
    EXPECT_NE(message.find("calls it native"), std::string::npos) << message;
  }
}

// A host step for a reason of shape or context (here a broadcast along a leading dimension) is
// Lower's alone: the description's rule cannot see it, and nothing fails. The report asks the
// lowering instead (next test).
TEST(SystolicDescriptionAgreement, ContextHostStepsAreNotDescriptionErrors) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT b = f32[4,8,256] broadcast(x), dimensions={0}
})");
  LoweredModule lowered = Lower(*module, LoadArchConfig("tpu-v1", {}));
  const HostStep* host = FindHostStep(lowered, "b");
  ASSERT_NE(host, nullptr);
  EXPECT_FALSE(host->no_instruction) << host->reason;
  EXPECT_EQ(OwnerOf(*module, "b"), Owner::kAcceleratorNative);
  EXPECT_NO_THROW(CheckHostStepsAgainst(*module, lowered, targets::SystolicDescription()));
}

// HostStepReasons lists every host step of the lowering, loop bodies included, and
// AnalyzeOwnership given that list counts them as host fallbacks with the lowering's reason:
// what the report prints for the accelerator is what the lowering does.
TEST(SystolicDescriptionAgreement, TheLoweringsHostStepsDecideTheReportedOwners) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
cond {
  s = (s32[], f32[4], f32[4,2,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], f32[4,2,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  spread = f32[4,2,256] broadcast(x), dimensions={0}
  ROOT t = (s32[], f32[4], f32[4,2,256]) tuple(next, x, spread)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4,2,256] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4,2,256]) tuple(zero, x, y)
  w = (s32[], f32[4], f32[4,2,256]) while(init), condition=cond, body=body
  r = f32[4] get-tuple-element(w), index=1
  ROOT b = f32[4,8,256] broadcast(r), dimensions={0}
})");
  const std::map<std::string, std::string> reasons =
      HostStepReasons(*module, LoadArchConfig("tpu-v1", {}));
  ASSERT_EQ(reasons.count("b"), 1u);  // the entry's
  EXPECT_NE(reasons.at("b").find("leading dimension"), std::string::npos) << reasons.at("b");
  ASSERT_EQ(reasons.count("spread"), 1u);  // the loop body's, lowered as the backend lowers it
  EXPECT_NE(reasons.at("spread").find("leading dimension"), std::string::npos);

  const compiler::TargetDescription& systolic = targets::SystolicDescription();
  auto owner_of = [&](const compiler::ModuleStats& stats, const std::string& name) {
    for (const compiler::OwnershipEntry& entry : stats.entries) {
      if (entry.instruction->name() == name) return entry.info;
    }
    throw std::runtime_error("no entry " + name);
  };
  const compiler::ModuleStats described = compiler::AnalyzeOwnership(*module, systolic);
  const compiler::ModuleStats lowered = compiler::AnalyzeOwnership(*module, systolic, &reasons);
  for (const char* name : {"b", "spread"}) {
    EXPECT_EQ(owner_of(described, name).owner, Owner::kAcceleratorNative) << name;
    const compiler::OwnerInfo info = owner_of(lowered, name);
    EXPECT_EQ(info.owner, Owner::kHostFallback) << name;
    EXPECT_NE(info.detail.find("the systolic lowering runs it on the host: "), std::string::npos)
        << info.detail;
  }
  EXPECT_EQ(lowered.instructions_by_owner.at("host-fallback"),
            described.instructions_by_owner.at("host-fallback") + 2);
}

}  // namespace
}  // namespace systolic::lowering

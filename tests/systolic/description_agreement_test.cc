// The systolic description is the lowering's own answer (targets/systolic/lowering/native_ops.h):
// per instruction where one element type does not decide, and a host step of an op without an
// accelerator program that a description calls native fails loudly (CheckHostStepsAgainst).
#include <gtest/gtest.h>

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
  ROOT waves = f32[4,256] cosine(x)
})");
  LoweredModule lowered = Lower(*module, LoadArchConfig("tpu-v1", {}));
  const HostStep* host = FindHostStep(lowered, "waves");
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(host->no_instruction);
  EXPECT_NO_THROW(CheckHostStepsAgainst(*module, lowered, targets::SystolicDescription()));

  compiler::TargetDescription drifted = targets::SystolicDescription();
  drifted.op_rules[hlo::Opcode::kCos] =
      compiler::OpRule{compiler::OpHandling::kNative, "", {}, compiler::OpHandling::kNative};
  try {
    CheckHostStepsAgainst(*module, lowered, drifted);
    FAIL() << "a native claim for a host step was accepted";
  } catch (const hlo::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("waves (cosine)"), std::string::npos) << message;
    EXPECT_NE(message.find("calls it native"), std::string::npos) << message;
  }
}

// A host step for a reason of shape or context (here a broadcast along a leading dimension) is
// Lower's alone: the description stays optimistic there, and nothing fails.
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

}  // namespace
}  // namespace systolic::lowering

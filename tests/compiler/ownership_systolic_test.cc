// The systolic description (targets/systolic/description.cc) says what the lowering runs: per
// element type for the vector unit's ops, host fallback with a reason for the rest. Expected
// owners come from targets/systolic/lowering/row_op_table.cc read by hand (e.g. and/or/xor
// exist for pred and the integer types, negate not for u8) and the reasons are written out in full. The tour
// test (tests/tour/add_an_op_backends_test.cc, step 10d) checks the same against the lowering
// itself, one example per opcode.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compiler/cost_model.h"
#include "compiler/ownership.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace {

using compiler::Owner;

// The owner and detail of the ROOT of a one-instruction entry on the systolic target.
compiler::OwnerInfo RootOwner(const std::string& body) {
  auto module = testing_support::ParseAndVerify("HloModule m\nENTRY main {\n" + body + "}\n");
  compiler::ModuleStats stats = compiler::AnalyzeOwnership(*module, targets::SystolicDescription());
  for (const compiler::OwnershipEntry& entry : stats.entries) {
    if (entry.instruction == module->entry()->root()) return entry.info;
  }
  throw hlo::Error("no entry for the root");
}

TEST(OwnershipSystolic, TranscendentalsWithoutAVectorInstructionRunOnTheHost) {
  compiler::OwnerInfo tangent = RootOwner(
      "  p = f32[4,8] parameter(0)\n  ROOT r = f32[4,8] tan(p)\n");
  EXPECT_EQ(tangent.owner, Owner::kHostFallback);
  EXPECT_EQ(tangent.detail, "systolic cannot execute tan: no vector-unit instruction for tan");
  // cosine has vcos: native on floats, not on integers (no such HLO op) or s64.
  EXPECT_EQ(RootOwner("  p = bf16[4,8] parameter(0)\n  ROOT r = bf16[4,8] cosine(p)\n").owner,
            Owner::kAcceleratorNative);
  // exponential has vexp: native on floats.
  EXPECT_EQ(RootOwner("  p = f32[4,8] parameter(0)\n  ROOT r = f32[4,8] exponential(p)\n").owner,
            Owner::kAcceleratorNative);
}

TEST(OwnershipSystolic, LogicalOpsAndShiftsAreNativeOnTheTypesTheVectorUnitHolds) {
  EXPECT_EQ(RootOwner("  a = pred[16] parameter(0)\n  b = pred[16] parameter(1)\n"
                      "  ROOT r = pred[16] and(a, b)\n")
                .owner,
            Owner::kAcceleratorNative);
  EXPECT_EQ(RootOwner("  a = s32[16] parameter(0)\n  b = s32[16] parameter(1)\n"
                      "  ROOT r = s32[16] and(a, b)\n")
                .owner,
            Owner::kAcceleratorNative);
  EXPECT_EQ(RootOwner("  a = u8[16] parameter(0)\n  b = u8[16] parameter(1)\n"
                      "  ROOT r = u8[16] shift-right-logical(a, b)\n")
                .owner,
            Owner::kAcceleratorNative);
  // s16 is not a vector-unit type.
  compiler::OwnerInfo narrow = RootOwner(
      "  a = s16[16] parameter(0)\n  b = s16[16] parameter(1)\n"
      "  ROOT r = s16[16] shift-left(a, b)\n");
  EXPECT_EQ(narrow.owner, Owner::kHostFallback);
  EXPECT_EQ(narrow.detail, "systolic runs shift-left only on s8, s32, u8, not s16");
}

// The s64 steps of the gemmlowp / TFLite fixed-point requantization are one vrequant: native
// inside the idiom, although s64 alone has no vector-unit form.
TEST(OwnershipSystolic, FixedPointRequantizeStepsAreNativeInsideTheIdiomOnly) {
  const std::string chain =
      "  p = s32[16] parameter(0)\n  w = s64[16] convert(p)\n"
      "  m = s64[] constant(1073741824)\n  mb = s64[16] broadcast(m), dimensions={}\n"
      "  x = s64[16] multiply(w, mb)\n  n = s64[] constant(40)\n"
      "  nb = s64[16] broadcast(n), dimensions={}\n"
      "  s = s64[16] shift-right-arithmetic(x, nb)\n  y = s32[16] convert(s)\n";
  auto owners = [](const std::string& text) {
    auto module = testing_support::ParseAndVerify("HloModule m\nENTRY main {\n" + text + "}\n");
    std::map<std::string, Owner> by_name;
    for (const compiler::OwnershipEntry& entry :
         compiler::AnalyzeOwnership(*module, targets::SystolicDescription()).entries) {
      by_name[entry.instruction->name()] = entry.info.owner;
    }
    return by_name;
  };
  std::map<std::string, Owner> idiom = owners(
      chain + "  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n"
              "  c = s32[16] clamp(lo, y, hi)\n  ROOT q = s8[16] convert(c)\n");
  for (const char* step : {"w", "x", "s", "y", "c", "q"}) {
    EXPECT_EQ(idiom[step], Owner::kAcceleratorNative) << step;
  }
  // Without the clamp and narrowing convert the same steps are s64 arithmetic: the host's.
  std::map<std::string, Owner> alone = owners(chain + "  ROOT r = s32[16] negate(y)\n");
  EXPECT_EQ(alone["x"], Owner::kHostFallback);
  EXPECT_EQ(alone["s"], Owner::kHostFallback);
}

TEST(OwnershipSystolic, NegateHasNoUnsignedForm) {
  EXPECT_EQ(RootOwner("  p = s8[16] parameter(0)\n  ROOT r = s8[16] negate(p)\n").owner,
            Owner::kAcceleratorNative);
  compiler::OwnerInfo u8 = RootOwner("  p = u8[16] parameter(0)\n  ROOT r = u8[16] negate(p)\n");
  EXPECT_EQ(u8.owner, Owner::kHostFallback);
  EXPECT_EQ(u8.detail, "systolic runs negate only on s8, s32, f16, f32, bf16, not u8");
}

TEST(OwnershipSystolic, SlicingIsADmaProgramOfAnyTypeDynamicSlicingWithS32Starts) {
  EXPECT_EQ(RootOwner("  p = s64[4,8] parameter(0)\n"
                      "  ROOT r = s64[2,8] slice(p), slice={[0:2], [0:8]}\n")
                .owner,
            Owner::kAcceleratorNative);
  EXPECT_EQ(RootOwner("  p = f32[4,8] parameter(0)\n  i = s32[] parameter(1)\n"
                      "  ROOT r = f32[2,8] dynamic-slice(p, i, i), dynamic_slice_sizes={2,8}\n")
                .owner,
            Owner::kAcceleratorNative);
  // The index program reads s32 or u32: a computed s64 start is the host's.
  compiler::OwnerInfo dynamic = RootOwner(
      "  p = f32[4,8] parameter(0)\n  i = s64[] parameter(1)\n"
      "  ROOT r = f32[2,8] dynamic-slice(p, i, i), dynamic_slice_sizes={2,8}\n");
  EXPECT_EQ(dynamic.owner, Owner::kHostFallback);
  EXPECT_EQ(dynamic.detail,
            "systolic cannot execute dynamic-slice: a computed start index of type s64 (the "
            "index program reads s32 or u32)");
  // Negative edge padding is not in the DMA plan.
  compiler::OwnerInfo negative = RootOwner(
      "  p = f32[4,8] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[3,8] pad(p, z), padding=-1_0x0_0\n");
  EXPECT_EQ(negative.owner, Owner::kHostFallback);
  EXPECT_EQ(negative.detail,
            "systolic cannot execute pad: negative edge padding is not in the DMA plan");
  EXPECT_EQ(RootOwner("  p = s64[4,8] parameter(0)\n  ROOT r = s64[32] reshape(p)\n").owner,
            Owner::kAcceleratorNative);
  // A broadcast is a vector-unit program: not for s64, which the unit does not hold.
  compiler::OwnerInfo wide = RootOwner(
      "  p = s64[8] parameter(0)\n  ROOT r = s64[4,8] broadcast(p), dimensions={1}\n");
  EXPECT_EQ(wide.owner, Owner::kHostFallback);
  EXPECT_EQ(wide.detail, "systolic runs broadcast only on pred, s8, s32, u8, f16, f32, bf16, not s64");
}

TEST(OwnershipSystolic, EveryOpcodeWithCodeHasARuleAndEveryHostRuleAReason) {
  const compiler::TargetDescription& target = targets::SystolicDescription();
  for (int i = 0; i < hlo::OpcodeCount(); ++i) {
    const hlo::Opcode op = static_cast<hlo::Opcode>(i);
    const std::string name(hlo::OpcodeName(op));
    if (compiler::GeneratesNoCode(op) || hlo::OpcodeClass(op) == hlo::OpClass::kCollective ||
        op == hlo::Opcode::kFusion) {
      continue;  // no-code, collective or per fused op: the analysis never asks the rule
    }
    auto rule = target.op_rules.find(op);
    ASSERT_NE(rule, target.op_rules.end()) << name << " has no rule (default_handling decides)";
    if (rule->second.handling == compiler::OpHandling::kHostFallback) {
      auto why = target.host_fallback_details.find(op);
      EXPECT_TRUE(why != target.host_fallback_details.end() && !why->second.empty())
          << name << " falls back to the host without a reason";
    }
  }
}

}  // namespace

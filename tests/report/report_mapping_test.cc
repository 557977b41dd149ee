// The carried-across mapping rule (tools/report/carried_across.h), on hand-made "compiled"
// modules: an instruction found inside a fusion takes the fusion's owner, a duplicated producer
// the least portable of its copies, a name that is gone its owner in the unoptimized module.
#include <gtest/gtest.h>

#include "compiler/ownership.h"
#include "tests/report/report_test_util.h"
#include "tools/report/carried_across.h"
#include "targets/descriptions.h"

namespace {

using compiler::Owner;

// Original: n = negate(x); d = dot(n, y); e = exponential(x). 3 non-trivial instructions.
constexpr char kOriginal[] = R"(HloModule m
ENTRY main {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  n = f32[4,4] negate(x)
  d = f32[4,4] dot(n, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[4,4] exponential(x)
  ROOT t = (f32[4,4], f32[4,4]) tuple(d, e)
}
)";

// "Compiled": n duplicated into the dot's output fusion and kept outside too; e is gone.
constexpr char kCompiled[] = R"(HloModule m
fused_computation {
  p0 = f32[4,4] parameter(0)
  p1 = f32[4,4] parameter(1)
  n = f32[4,4] negate(p0)
  ROOT d = f32[4,4] dot(n, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY main {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  fusion = f32[4,4] fusion(x, y), kind=kOutput, calls=fused_computation
  n.1 = f32[4,4] negate(x)
  ROOT t = (f32[4,4], f32[4,4]) tuple(fusion, n.1)
}
)";

TEST(ReportMappingTest, FusedDuplicatedAndVanishedInstructions) {
  auto original = testing_support::ParseAndVerify(kOriginal);
  auto compiled = testing_support::ParseAndVerify(kCompiled);
  const compiler::TargetDescription& gpu = targets::GpuDescription();
  const compiler::ModuleStats unoptimized = compiler::AnalyzeOwnership(*original, gpu);
  const std::vector<report::OriginalInstruction> originals =
      report::OriginalInstructions(unoptimized);
  ASSERT_EQ(originals.size(), 3u);
  EXPECT_EQ(originals[0].name, "n");
  EXPECT_EQ(originals[1].flops, 2 * 4 * 4 * 4);  // d: 2 * 16 outputs * K=4
  const auto owners = report::OwnersOfOriginals(
      originals, compiler::AnalyzeOwnership(*compiled, gpu), unoptimized);
  // d is inside a cuBLASLt output fusion; n is there too (its copy n.1 has another name), so
  // it is a library instruction; e vanished and keeps its unoptimized owner, generated.
  EXPECT_EQ(owners.at("d").owner, Owner::kLibrary);
  EXPECT_EQ(owners.at("d").library, "cuBLASLt");
  EXPECT_EQ(owners.at("n").owner, Owner::kLibrary);
  EXPECT_EQ(owners.at("e").owner, Owner::kGeneratedKernel);
  EXPECT_EQ(report::HandSuppliedWork(originals, owners),
            (std::vector<report::HandSupplied>{{"library", "cuBLASLt", 2}}));

  // Against a target where everything is generated, only e (1 of 3; 16 of 128 + 16 + 16
  // FLOPs) is carried across.
  report::TargetCell gpu_cell, other;
  gpu_cell.target = "gpu";
  gpu_cell.original_owners = owners;
  other.target = "other";
  for (const auto& o : originals) other.original_owners[o.name] = {Owner::kGeneratedKernel, ""};
  const report::CarriedAcross pair = report::CarriedBetween(originals, gpu_cell, other);
  EXPECT_DOUBLE_EQ(*pair.instructions, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(*pair.flops, 16.0 / (16 + 128 + 16));
}

TEST(ReportMappingTest, ALeastPortableCopyDecides) {
  // n appears at the top level (generated) and, under the same name, inside a dot's fusion
  // (library): it is not carried.
  constexpr char kDuplicated[] = R"(HloModule m
fused_computation {
  p0 = f32[4,4] parameter(0)
  p1 = f32[4,4] parameter(1)
  n = f32[4,4] negate(p0)
  ROOT d = f32[4,4] dot(n, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY main {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  fusion = f32[4,4] fusion(x, y), kind=kOutput, calls=fused_computation
  n = f32[4,4] negate(x)
  ROOT t = (f32[4,4], f32[4,4]) tuple(fusion, n)
}
)";
  auto original = testing_support::ParseAndVerify(kOriginal);
  auto compiled = testing_support::ParseAndVerify(kDuplicated);
  const compiler::TargetDescription& cpu = targets::CpuDescription();
  const compiler::ModuleStats unoptimized = compiler::AnalyzeOwnership(*original, cpu);
  const auto originals = report::OriginalInstructions(unoptimized);
  const auto owners = report::OwnersOfOriginals(
      originals, compiler::AnalyzeOwnership(*compiled, cpu), unoptimized);
  EXPECT_EQ(owners.at("n").owner, Owner::kLibrary);
  EXPECT_EQ(owners.at("n").library, "retarget-sgemm");
  EXPECT_EQ(owners.at("e").owner, Owner::kGeneratedKernel);
}

}  // namespace

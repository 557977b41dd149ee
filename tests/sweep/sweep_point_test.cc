// EvaluatePoint: the source label of every figure, the budget, a failing simulator (the
// estimate stands, the note says why), figures recomputed by hand from the simulator's counters
// and the price table, and the physics of the estimate: more DRAM bandwidth is never slower on a
// memory-bound module, a larger array never slower on a compute-bound one.
#include "tools/sweep/sweep_point.h"

#include <gtest/gtest.h>

#include "tests/test_support.h"
#include "tools/report/prices.h"
#include "tools/sweep/sweep_csv.h"

namespace {

// 2 x 256 x 256 x 256 FLOPs on the MXU (bf16 is native on tpu-v4-mxu).
constexpr char kDot[] = R"(HloModule dot
ENTRY main {
  a = bf16[256,256] parameter(0)
  b = bf16[256,256] parameter(1)
  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// One add per 8 bytes moved: memory-bound on any of the presets.
constexpr char kAdd[] = R"(HloModule add
ENTRY main {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  ROOT s = f32[1024,1024] add(a, b)
})";

double SystolicPrice() { return *report::DefaultPrices().at("systolic").usd_per_hour; }

sweep::SimulateFunction FakeSimulator(int* calls) {
  return [calls](const hlo::Module&, const systolic::ArchConfig& config) {
    ++*calls;
    // Figures a real run could report; seconds depend on the config so the test sees it used.
    return sweep::SimulatedRun{1e-3 * 256.0 / static_cast<double>(config.array_rows), 0.5, 0.25,
                               3e9};
  };
}

TEST(SweepPointTest, SimulatedFiguresComeFromTheSimulator) {
  auto module = testing_support::ParseAndVerify(kDot);
  int calls = 0;
  sweep::PointOptions options;
  options.simulate = FakeSimulator(&calls);
  options.budget.max_run_seconds = 10;
  systolic::ArchConfig config = systolic::Preset("tpu-v4-mxu");
  config.array_rows = 64;
  const sweep::PointResult result = sweep::EvaluatePoint(*module, config, options);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(result.error, "");
  EXPECT_EQ(result.note, "");
  EXPECT_EQ(result.latency_source, "simulated");
  EXPECT_DOUBLE_EQ(*result.latency_ms, 4.0);  // 1 ms x 256 / 64
  EXPECT_EQ(result.energy_source, "simulated");
  EXPECT_DOUBLE_EQ(*result.energy_mj, 3.0);  // 3e9 pJ
  EXPECT_DOUBLE_EQ(*result.utilization, 0.5);
  EXPECT_DOUBLE_EQ(*result.host_fallback_share, 0.25);
  // $/hour x hours per inference x 1e6 inferences.
  EXPECT_NEAR(*result.cost_per_1m_usd, SystolicPrice() * (4e-3 / 3600.0) * 1e6, 1e-12);
}

TEST(SweepPointTest, TheEstimateStandsOverBudgetOrWhenTheSimulatorFails) {
  auto module = testing_support::ParseAndVerify(kDot);
  const systolic::ArchConfig config = systolic::Preset("tpu-v4-mxu");
  int calls = 0;
  sweep::PointOptions over;
  over.simulate = FakeSimulator(&calls);
  over.budget.max_run_seconds = 0;  // every estimate is above 0 s
  const sweep::PointResult a = sweep::EvaluatePoint(*module, config, over);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(a.latency_source, "estimated");
  EXPECT_EQ(a.energy_source, "estimated");
  EXPECT_EQ(a.host_fallback_share, 0.0);  // estimated too: the dot runs on the array
  const std::string estimate = sweep::ResultFields(a, "")[sweep::ResultColumn("latency_ms")];
  EXPECT_EQ(a.note, "not simulated: the estimate, " + estimate +
                        " ms, is over the simulation budget (--max-run-seconds 0)");

  sweep::PointOptions failing;
  failing.budget.max_run_seconds = 10;
  failing.simulate = [](const hlo::Module&, const systolic::ArchConfig&) -> sweep::SimulatedRun {
    throw hlo::Error("lowering: no tile fits");
  };
  const sweep::PointResult b = sweep::EvaluatePoint(*module, config, failing);
  EXPECT_EQ(b.latency_source, "estimated");
  EXPECT_EQ(b.error, "");
  EXPECT_EQ(b.note, "simulation failed: lowering: no tile fits");
  EXPECT_DOUBLE_EQ(*b.latency_ms, *a.latency_ms);  // the same estimate either way
}

TEST(SweepPointTest, EstimatedUtilizationIsFlopsOverLatencyTimesPeak) {
  auto module = testing_support::ParseAndVerify(kDot);
  const systolic::ArchConfig config = systolic::Preset("tpu-v4-mxu");
  const sweep::PointResult result = sweep::EvaluatePoint(*module, config, {});
  ASSERT_EQ(result.latency_source, "estimated");
  EXPECT_EQ(result.note, "");  // no simulator: nothing to explain
  const double flops = 2.0 * 256 * 256 * 256;
  const double peak = 2.0 * config.array_rows * config.array_cols * config.clock_mhz * 1e6;
  EXPECT_NEAR(*result.utilization, flops / (*result.latency_ms * 1e-3 * peak), 1e-12);
  EXPECT_GT(*result.utilization, 0);
  EXPECT_LE(*result.utilization, 1);
  EXPECT_EQ(result.host_fallback_share, 0.0);
}

// The same bf16 dot next to an f32 one, which tpu-v4-mxu's MXU (bf16/int8) cannot take: the cost
// model runs the f32 dot on the host. Its MACs must not count against the array, and its time
// is the host fallback share.
constexpr char kDotOnArrayAndOnHost[] = R"(HloModule mixed
ENTRY main {
  a = bf16[256,256] parameter(0)
  b = bf16[256,256] parameter(1)
  d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[256,256] parameter(2)
  y = f32[256,256] parameter(3)
  h = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[256,256], f32[256,256]) tuple(d, h)
})";

constexpr char kF32DotOnly[] = R"(HloModule host
ENTRY main {
  x = f32[256,256] parameter(0)
  y = f32[256,256] parameter(1)
  ROOT h = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(SweepPointTest, EstimatedPointsDoNotCountHostMacsAgainstTheArray) {
  const systolic::ArchConfig config = systolic::Preset("tpu-v4-mxu");
  const sweep::PointResult alone =
      sweep::EvaluatePoint(*testing_support::ParseAndVerify(kDot), config, {});
  const sweep::PointResult host =
      sweep::EvaluatePoint(*testing_support::ParseAndVerify(kF32DotOnly), config, {});
  const sweep::PointResult mixed =
      sweep::EvaluatePoint(*testing_support::ParseAndVerify(kDotOnArrayAndOnHost), config, {});
  ASSERT_EQ(mixed.latency_source, "estimated");
  // All on the host: the array does nothing, all the time is host fallback.
  EXPECT_EQ(host.utilization, 0.0);
  EXPECT_EQ(host.host_fallback_share, 1.0);
  // Mixed: latency is the two parts' sum, the array's work and time are the bf16 dot's alone.
  EXPECT_NEAR(*mixed.latency_ms, *alone.latency_ms + *host.latency_ms, 1e-9 * *mixed.latency_ms);
  EXPECT_NEAR(*mixed.utilization, *alone.utilization, 1e-12);
  EXPECT_NEAR(*mixed.host_fallback_share, *host.latency_ms / *mixed.latency_ms, 1e-12);
  // The f32 dot's 768 KiB crossing the 14 GB/s host link (~56 us) is the slow part.
  EXPECT_GT(*mixed.host_fallback_share, 0.5);
  // Cost per point follows the (estimated) latency at the systolic price.
  EXPECT_NEAR(*mixed.cost_per_1m_usd, SystolicPrice() * (*mixed.latency_ms * 1e-3 / 3600.0) * 1e6,
              1e-9 * *mixed.cost_per_1m_usd);
  const std::vector<std::string> fields = sweep::ResultFields(mixed, "");
  EXPECT_NE(fields[sweep::ResultColumn("host_fallback_share")], "");
  EXPECT_NE(fields[sweep::ResultColumn("cost_per_1m_usd")], "");
}

TEST(SweepPointTest, MoreDramBandwidthIsNeverSlowerOnAMemoryBoundModule) {
  auto module = testing_support::ParseAndVerify(kAdd);
  std::vector<double> latencies;
  for (double gbps : {5.0, 10.0, 20.0, 40.0}) {
    systolic::ArchConfig config = systolic::Preset("tpu-v1");
    config.dram_bandwidth_gbps = gbps;
    latencies.push_back(*sweep::EvaluatePoint(*module, config, {}).latency_ms);
  }
  for (size_t i = 1; i < latencies.size(); ++i) EXPECT_LE(latencies[i], latencies[i - 1]) << i;
  // Memory-bound: doubling the bandwidth from 5 GB/s nearly halves the time (8 MiB + 4 MiB moved).
  EXPECT_LT(latencies[1], 0.6 * latencies[0]);
  EXPECT_GT(latencies[0], 12.0 * 1048576 / 5e9 * 1e3 * 0.9);  // >= bytes / bandwidth, in ms
}

TEST(SweepPointTest, ALargerArrayIsNeverSlowerOnAComputeBoundModule) {
  auto module = testing_support::ParseAndVerify(kDot);
  std::vector<double> latencies;
  for (int64_t side : {16, 32, 64, 128}) {
    systolic::ArchConfig config = systolic::Preset("tpu-v4-mxu");
    config.array_rows = config.array_cols = side;
    latencies.push_back(*sweep::EvaluatePoint(*module, config, {}).latency_ms);
  }
  for (size_t i = 1; i < latencies.size(); ++i) EXPECT_LE(latencies[i], latencies[i - 1]) << i;
  EXPECT_LT(latencies[1], 0.5 * latencies[0]);  // 4x the MACs per cycle at the small end
}

TEST(SweepPointTest, ResultFieldsFollowTheColumnTable) {
  sweep::PointResult result;
  result.latency_ms = 1.0 / 3.0;
  result.latency_source = "estimated";
  result.energy_mj = 2e-7;
  result.note = std::string("n");
  const std::vector<std::string> fields = sweep::ResultFields(result, "array.rows=8");
  ASSERT_EQ(fields.size(), sweep::kResultColumns.size());
  EXPECT_EQ(fields[sweep::ResultColumn("config")], "array.rows=8");
  EXPECT_EQ(fields[sweep::ResultColumn("latency_ms")], "0.333333");
  EXPECT_EQ(fields[sweep::ResultColumn("energy_mj")], "2e-07");
  EXPECT_EQ(fields[sweep::ResultColumn("utilization")], "");  // unset figures are empty
  EXPECT_EQ(fields[sweep::ResultColumn("note")], "n");
  EXPECT_EQ(sweep::ResultFields(sweep::FailedPoint("boom"), "")[sweep::ResultColumn("error")],
            "boom");
}

}  // namespace

// Latency, energy and cost of the report beyond the defaults: prices from a table, energy
// recomputed by hand from the published rates, the latency hook with its budget, and the
// systolic column derived from an accelerator config (--config).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/cli_fixture.h"
#include "tests/report/json_value.h"
#include "tests/report/report_test_util.h"
#include "tools/report/arch_target.h"
#include "targets/descriptions.h"

namespace {

using report_test::Cell;
using report_test::ReportOf;
using report_test::Targets;

TEST(ReportCostTest, APriceTableSetsTheCostAndItsSource) {
  report::ReportOptions options;
  options.prices = report::DefaultPrices();
  options.prices["gpu"] = report::Price{9.08, "test table"};
  options.prices["cpu"] = report::Price{std::nullopt, ""};  // no price: no cost
  const report::ModelReport model = ReportOf(report_test::kSoftmax, Targets({"gpu", "cpu"}), options);
  const report::TargetCell& gpu = Cell(model, "gpu");
  // 128 bytes at 4.8 TB/s + 3 us launch, 1e6 times, at $9.08/hour.
  const double seconds = 128 / 4.8e12 + 3e-6;
  ASSERT_TRUE(gpu.cost_per_1m_usd);
  EXPECT_NEAR(*gpu.cost_per_1m_usd, seconds * 1e6 * 9.08 / 3600, 1e-12);
  EXPECT_EQ(gpu.price.source, "test table");
  EXPECT_FALSE(Cell(model, "cpu").cost_per_1m_usd);
  EXPECT_FALSE(Cell(model, "cpu").price.usd_per_hour);
  // Without a table, the compiled-in defaults with their citations.
  const report::ModelReport plain = ReportOf(report_test::kSoftmax, Targets({"gpu"}));
  EXPECT_NEAR(*Cell(plain, "gpu").cost_per_1m_usd, seconds * 1e6 * 4.54 / 3600, 1e-12);
  EXPECT_NE(Cell(plain, "gpu").price.source.find("spheron.network"), std::string::npos);
}

TEST(ReportCostTest, EnergyIsEstimatedFromTheEnergyModel) {
  const report::ModelReport model = ReportOf(report_test::kSoftmax, Targets({"gpu", "cpu"}));
  // GPU softmax (no contraction): 80 FLOPs at 700 W / 33.5 Top/s, 128 bytes of HBM at 4 pJ/bit,
  // 75 W idle for the estimated time.
  const double gpu_seconds = 128 / 4.8e12 + 3e-6;
  const double gpu_joules = 80 * 700 / 33.5e12 + 128 * 4e-12 * 8 + 75 * gpu_seconds;
  const report::TargetCell& gpu = Cell(model, "gpu");
  ASSERT_TRUE(gpu.energy_mj);
  EXPECT_NEAR(*gpu.energy_mj, gpu_joules * 1e3, 1e-12);
  EXPECT_EQ(gpu.energy_source, "estimated");
  // The interpreter target's rates are defined too; a target without any energy figure has none.
  compiler::TargetDescription bare = targets::CpuDescription();
  bare.name = "bare";
  bare.energy = compiler::EnergyModel{};
  const report::ModelReport none = ReportOf(report_test::kSoftmax, {&bare});
  EXPECT_FALSE(Cell(none, "bare").energy_mj);
  // Not in the price table either: the TargetDescription's own price is used.
  EXPECT_EQ(*Cell(none, "bare").price.usd_per_hour, 0.1008);
}

// Collectives are costed over each target's interconnect with the ring formulas
// (compiler/communication.h) for the module's devices, and take their share of the estimate;
// a target without links says so instead.
TEST(ReportCostTest, CollectivesAreCostedOverTheInterconnect) {
  const std::string text = R"(HloModule sharded, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[262144] parameter(0)
  ROOT ar = f32[262144] all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
})";
  const report::ModelReport model = ReportOf(text, Targets({"gpu", "systolic"}));
  const report::TargetCell& gpu = Cell(model, "gpu");
  EXPECT_EQ(gpu.collectives, 1);
  EXPECT_EQ(gpu.interconnect, "NVLink 4");
  // 1 MiB all-reduced by 4 devices: 2*3/4 MiB at 450 GB/s plus 6 steps of 2 us.
  const double seconds = 1.5 * 1048576 / 450e9 + 6 * 2e-6;
  ASSERT_TRUE(gpu.communication_ms);
  EXPECT_NEAR(*gpu.communication_ms, seconds * 1e3, 1e-12);
  EXPECT_NEAR(gpu.communication_share, seconds * 1e3 / gpu.estimate_ms, 1e-12);
  EXPECT_GT(gpu.communication_share, 0.9);  // nothing else to do
  const report::TargetCell& systolic = Cell(model, "systolic");
  EXPECT_FALSE(systolic.communication_ms);
  EXPECT_EQ(systolic.communication_note, "the target has no links between devices");
  // A module without collectives has no communication figures.
  EXPECT_EQ(Cell(ReportOf(report_test::kSoftmax, Targets({"gpu"})), "gpu").collectives, 0);
  // An accelerator configured with links (link.bandwidth_gbps, link.latency_ns) costs them.
  systolic::ArchConfig config = systolic::Preset("tpu-v4-mxu");
  systolic::ApplyOverride(config, "link.bandwidth_gbps=100");
  systolic::ApplyOverride(config, "link.latency_ns=1000");
  const compiler::TargetDescription linked = report::SystolicTargetFromConfig(config);
  const report::ModelReport on_chips = ReportOf(text, {&linked});
  const report::TargetCell& chips = Cell(on_chips, "systolic");
  ASSERT_TRUE(chips.communication_ms);
  EXPECT_NEAR(*chips.communication_ms, (1.5 * 1048576 / 100e9 + 6 * 1e-6) * 1e3, 1e-12);
  EXPECT_EQ(chips.interconnect, "chip-to-chip links (ring)");
}

TEST(ReportCostTest, TheLatencyHookReplacesTheEstimateWithinTheBudget) {
  int calls = 0;
  report::ReportOptions options;
  options.latency = [&calls](const hlo::Module& module, const compiler::TargetDescription& target,
                             const report::LatencyBudget&) -> std::optional<report::MeasuredLatency> {
    ++calls;
    EXPECT_EQ(module.name(), "softmax");
    if (target.name == "cpu") return report::MeasuredLatency{2.5, "measured", std::nullopt, ""};
    return std::nullopt;  // not available: the estimate stands
  };
  const report::ModelReport model = ReportOf(report_test::kSoftmax, Targets({"cpu", "gpu"}), options);
  EXPECT_EQ(calls, 2);
  const report::TargetCell& cpu = Cell(model, "cpu");
  EXPECT_EQ(cpu.latency_ms, 2.5);
  EXPECT_EQ(cpu.latency_source, "measured");
  EXPECT_NEAR(*cpu.cost_per_1m_usd, 2.5e-3 * 1e6 * 0.1008 / 3600, 1e-12);
  EXPECT_EQ(Cell(model, "gpu").latency_source, "estimated");
  // Energy stays the estimate, whatever the latency's source.
  const report::ModelReport estimated = ReportOf(report_test::kSoftmax, Targets({"cpu"}));
  EXPECT_EQ(*cpu.energy_mj, *Cell(estimated, "cpu").energy_mj);

  // A model over the time or memory budget is never run: it keeps the estimate.
  calls = 0;
  options.budget.max_run_seconds = 1e-9;
  const report::ModelReport slow = ReportOf(report_test::kSoftmax, Targets({"cpu"}), options);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(Cell(slow, "cpu").latency_source, "estimated");
  options.budget = report::LatencyBudget{60, 1};  // 1 byte of buffers
  const report::ModelReport big = ReportOf(report_test::kSoftmax, Targets({"cpu"}), options);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(Cell(big, "cpu").latency_source, "estimated");
}

TEST(ReportCostTest, AnUnusableMeasurementIsAnErrorOfThatCell) {
  for (const report::MeasuredLatency& bad :
       {report::MeasuredLatency{std::nan(""), "measured", std::nullopt, ""}, report::MeasuredLatency{-1, "measured", std::nullopt, ""},
        report::MeasuredLatency{1, "guessed", std::nullopt, ""}}) {
    report::ReportOptions options;
    options.latency = [&bad](const hlo::Module&, const compiler::TargetDescription& target,
                             const report::LatencyBudget&) -> std::optional<report::MeasuredLatency> {
      if (target.name == "gpu") return bad;
      return std::nullopt;
    };
    const report::ModelReport model =
        ReportOf(report_test::kSoftmax, Targets({"cpu", "gpu"}), options);
    ASSERT_TRUE(Cell(model, "gpu").error);
    EXPECT_NE(Cell(model, "gpu").error->find("unusable latency for gpu"), std::string::npos);
    EXPECT_FALSE(Cell(model, "cpu").error);
  }
}

TEST(ReportCostTest, TpuV1ConfigHasTheBuiltInRates) {
  const compiler::TargetDescription t = report::SystolicTargetFromConfig(systolic::Preset("tpu-v1"));
  const compiler::TargetDescription& builtin = targets::SystolicDescription();
  EXPECT_EQ(t.name, "systolic");
  // TPU v1's MXU is int8 only: int8 at the built-in peak, no other matrix type native.
  EXPECT_EQ(t.peak.matrix_ops_per_second,
            (std::map<hlo::PrimitiveType, double>{
                {hlo::PrimitiveType::kS8,
                 builtin.peak.matrix_ops_per_second.at(hlo::PrimitiveType::kS8)}}));
  EXPECT_EQ(t.peak.vector_ops_per_second, builtin.peak.vector_ops_per_second);
  EXPECT_EQ(t.peak.memory_bytes_per_second, builtin.peak.memory_bytes_per_second);
  EXPECT_EQ(t.on_chip_memory_bytes, builtin.on_chip_memory_bytes);
  EXPECT_EQ(t.device_memory_bytes, builtin.device_memory_bytes);
  EXPECT_NE(t.description.find("'tpu-v1': 256x256 MXU at 700 MHz"), std::string::npos)
      << t.description;
  // TPU v4's MXU (int8, bf16): both at the peak (2 * 128 * 128 * 1.05 GHz); f32 is not native.
  const compiler::TargetDescription v4 =
      report::SystolicTargetFromConfig(systolic::Preset("tpu-v4-mxu"));
  const double v4_peak = 2.0 * 128 * 128 * 1050e6;
  EXPECT_EQ(v4.peak.matrix_ops_per_second.at(hlo::PrimitiveType::kBF16), v4_peak);
  EXPECT_EQ(v4.peak.matrix_ops_per_second.count(hlo::PrimitiveType::kF32), 0u);
  EXPECT_EQ(v4.peak.memory_bytes_per_second, 150e9);
}

// A dot of a type the MXU does not take runs on the host, as the lowering runs it: gemmini is
// int8 only, so the f32 dot+bias+relu kernel is host fallback, and listing f32 in array.dtypes
// makes it native.
TEST(ReportCostTest, GemminiConfigByHand) {
  systolic::ArchConfig gemmini = systolic::Preset("gemmini");
  const compiler::TargetDescription t = report::SystolicTargetFromConfig(gemmini);
  const report::ModelReport model = ReportOf(report_test::kDotBiasRelu, {&t});
  const report::TargetCell& cell = Cell(model, "systolic");
  EXPECT_EQ(cell.owners.at("native"), 0);
  EXPECT_GT(cell.owners.at("host_fallback"), 0);
  // One fused host step as the simulator charges it: its operands (x 4x8, w 8x16, b 16: 704
  // bytes of f32) to the host and its 4x16 result (256 bytes) back over the 14 GB/s host link,
  // plus the 10 us of one host-issued batch; the host's compute is not charged.
  const double host_seconds = (704.0 + 256.0) / 14e9 + 10e-6;
  EXPECT_NEAR(cell.latency_ms, host_seconds * 1e3, 1e-12);
  // Energy at the cpu target's figures (the host did the work, though the simulator charges no
  // energy for it).
  const compiler::EnergyModel& cpu = targets::CpuDescription().energy;
  const double joules = 1152 * cpu.joules_per_flop + 960 * cpu.joules_per_dram_byte;
  ASSERT_TRUE(cell.energy_mj);
  EXPECT_NEAR(*cell.energy_mj, joules * 1e3, 1e-15);
  EXPECT_NEAR(*cell.cost_per_1m_usd, host_seconds * 1e6 * 1.20 / 3600, 1e-12);  // systolic price
  // The accelerator's clock does not change host work.
  systolic::ApplyOverride(gemmini, "clock.mhz=500");
  const compiler::TargetDescription slow = report::SystolicTargetFromConfig(gemmini);
  EXPECT_EQ(slow.peak.matrix_ops_per_second.at(hlo::PrimitiveType::kS8), 2.0 * 16 * 16 * 500e6);
  EXPECT_EQ(slow.peak.vector_ops_per_second, 16 * 500e6);
  const report::ModelReport slow_model = ReportOf(report_test::kDotBiasRelu, {&slow});
  EXPECT_NEAR(Cell(slow_model, "systolic").latency_ms, host_seconds * 1e3, 1e-12);
  // With f32 in the MXU: native, at max(1152 FLOPs / (2 * 16 * 16 * 500 MHz), 960 B / 16 GB/s)
  // plus the 10 us issue cost; energy at the f32 MAC (a MAC is 2 FLOPs) and 1300 pJ per 8 bytes.
  systolic::ApplyOverride(gemmini, "array.dtypes=int8,f32");
  const compiler::TargetDescription native = report::SystolicTargetFromConfig(gemmini);
  const report::ModelReport on_array_model = ReportOf(report_test::kDotBiasRelu, {&native});
  const report::TargetCell& on_array = Cell(on_array_model, "systolic");
  EXPECT_EQ(on_array.owners.at("host_fallback"), 0);
  EXPECT_GT(on_array.owners.at("native"), 0);
  const double array_seconds = std::max(1152 / (2.0 * 16 * 16 * 500e6), 960 / 16e9) + 10e-6;
  EXPECT_NEAR(on_array.latency_ms, array_seconds * 1e3, 1e-12);
}

// An f32 dot on the bf16/int8-only MXU of tpu-v4-mxu is one host step of the lowering.
constexpr char kHostOnlyDot[] = R"(HloModule host_dot
ENTRY main {
  x = f32[64,32] parameter(0)
  y = f32[32,16] parameter(1)
  ROOT d = f32[64,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// The estimate charges a host fallback what the simulation charges a host step
// (docs/systolic-lowering.md, "Host fallback"): 8192 + 2048 operand bytes to the host and 4096
// result bytes back over the 14 GB/s link, plus 10 us; nothing for the host's 65 536 FLOPs.
TEST(ReportCostTest, HostFallbackTimeIsTheSimulatorsHostStepCharge) {
  const compiler::TargetDescription v4 =
      report::SystolicTargetFromConfig(systolic::Preset("tpu-v4-mxu"));
  const report::ModelReport model = ReportOf(kHostOnlyDot, {&v4});
  const report::TargetCell& cell = Cell(model, "systolic");
  EXPECT_EQ(cell.owners.at("host_fallback"), 1);
  const double host_seconds = (64 * 32 * 4 + 32 * 16 * 4 + 64 * 16 * 4) / 14e9 + 10e-6;
  EXPECT_NEAR(cell.estimate_host_fallback_ms, host_seconds * 1e3, 1e-12);
  EXPECT_NEAR(cell.estimate_ms, host_seconds * 1e3, 1e-12);
  // The clock and the DRAM do not change host work; the host's energy is still charged.
  systolic::ArchConfig fast = systolic::Preset("tpu-v4-mxu");
  systolic::ApplyOverride(fast, "clock.mhz=2000");
  systolic::ApplyOverride(fast, "dram.bandwidth_gbps=1000");
  const compiler::TargetDescription fast_target = report::SystolicTargetFromConfig(fast);
  const report::ModelReport fast_model = ReportOf(kHostOnlyDot, {&fast_target});
  EXPECT_NEAR(Cell(fast_model, "systolic").estimate_host_fallback_ms, host_seconds * 1e3, 1e-12);
  ASSERT_TRUE(cell.energy_mj);
  EXPECT_GT(*cell.energy_mj, 0.0);
}

using ReportCostCliTest = testing_support::CliFixture;

// The same module through the two commands: the estimate (`report --estimate-only`) and the
// simulator's host_fallback_cycles (`run --stats-json`) agree to the cycle the latter rounds to.
TEST_F(ReportCostCliTest, EstimatedHostTimeEqualsTheSimulatedHostCharge) {
  Write("dot.hlo", kHostOnlyDot);
  const auto report = Retarget(
      "report dot.hlo --targets systolic --config tpu-v4-mxu --estimate-only --json r.json");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const auto run = Retarget("run dot.hlo --target systolic --config tpu-v4-mxu --stats-json s.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const report_test::JsonValue r =
      report_test::ParseJson(testing_support::ReadFile(Path("r.json")));
  const report_test::JsonValue s =
      report_test::ParseJson(testing_support::ReadFile(Path("s.json")));
  const double hz = s["clock_mhz"].number * 1e6;
  const double simulated_host_ms = s["host_fallback_cycles"].number / hz * 1e3;
  const double estimated_ms = r["models"].array.at(0)["targets"]["systolic"]["latency_ms"].number;
  EXPECT_NEAR(estimated_ms, (14336 / 14e9 + 10e-6) * 1e3, 1e-12);
  EXPECT_NEAR(simulated_host_ms, estimated_ms, 0.5 / hz * 1e3);
}

}  // namespace

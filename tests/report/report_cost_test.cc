// Latency, energy and cost of the report beyond the defaults: prices from a table, energy
// recomputed by hand from the published rates, the latency hook with its budget, and the
// systolic column derived from an accelerator config (--config).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/report/report_test_util.h"
#include "tools/report/arch_target.h"

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
  compiler::TargetDescription bare = compiler::CpuTarget();
  bare.name = "bare";
  bare.energy = compiler::EnergyModel{};
  const report::ModelReport none = ReportOf(report_test::kSoftmax, {&bare});
  EXPECT_FALSE(Cell(none, "bare").energy_mj);
  // Not in the price table either: the TargetDescription's own price is used.
  EXPECT_EQ(*Cell(none, "bare").price.usd_per_hour, 0.1008);
}

TEST(ReportCostTest, TheLatencyHookReplacesTheEstimateWithinTheBudget) {
  int calls = 0;
  report::ReportOptions options;
  options.latency = [&calls](const hlo::Module& module, const compiler::TargetDescription& target,
                             const report::LatencyBudget&) -> std::optional<report::MeasuredLatency> {
    ++calls;
    EXPECT_EQ(module.name(), "softmax");
    if (target.name == "cpu") return report::MeasuredLatency{2.5, "measured"};
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
       {report::MeasuredLatency{std::nan(""), "measured"}, report::MeasuredLatency{-1, "measured"},
        report::MeasuredLatency{1, "guessed"}}) {
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
  const compiler::TargetDescription& builtin = compiler::SystolicTarget();
  EXPECT_EQ(t.name, "systolic");
  EXPECT_EQ(t.peak.matrix_ops_per_second, builtin.peak.matrix_ops_per_second);
  EXPECT_EQ(t.peak.vector_ops_per_second, builtin.peak.vector_ops_per_second);
  EXPECT_EQ(t.peak.memory_bytes_per_second, builtin.peak.memory_bytes_per_second);
  EXPECT_EQ(t.on_chip_memory_bytes, builtin.on_chip_memory_bytes);
  EXPECT_EQ(t.device_memory_bytes, builtin.device_memory_bytes);
  EXPECT_NE(t.description.find("'tpu-v1': 256x256 MXU at 700 MHz"), std::string::npos)
      << t.description;
  // TPU v4's MXU is bf16-native: bf16 at the peak (2 * 128 * 128 * 1.05 GHz), f32 at 1/4.
  const compiler::TargetDescription v4 =
      report::SystolicTargetFromConfig(systolic::Preset("tpu-v4-mxu"));
  const double v4_peak = 2.0 * 128 * 128 * 1050e6;
  EXPECT_EQ(v4.peak.matrix_ops_per_second.at(hlo::PrimitiveType::kBF16), v4_peak);
  EXPECT_EQ(v4.peak.matrix_ops_per_second.at(hlo::PrimitiveType::kF32), v4_peak / 4);
  EXPECT_EQ(v4.peak.memory_bytes_per_second, 150e9);
}

TEST(ReportCostTest, GemminiConfigByHand) {
  systolic::ArchConfig gemmini = systolic::Preset("gemmini");
  const compiler::TargetDescription t = report::SystolicTargetFromConfig(gemmini);
  const report::ModelReport model = ReportOf(report_test::kDotBiasRelu, {&t});
  const report::TargetCell& cell = Cell(model, "systolic");
  // One fused f32 kernel: 1152 FLOPs at 1/16 of 2 * 16 * 16 * 1 GHz (int8-only MXU) vs 960
  // bytes at 16 GB/s; plus the built-in 10 us issue cost (host-issued instruction batches).
  const double seconds = std::max(1152 / (2.0 * 16 * 16 * 1e9 / 16), 960 / 16e9) + 10e-6;
  EXPECT_NEAR(cell.latency_ms, seconds * 1e3, 1e-12);
  // Energy: int8 MAC 0.3 pJ = 0.15 pJ per FLOP; DRAM 1300 pJ per 64-bit access; no idle power.
  const double joules = 1152 * 0.15e-12 + 960 * (1300e-12 / 8);
  ASSERT_TRUE(cell.energy_mj);
  EXPECT_NEAR(*cell.energy_mj, joules * 1e3, 1e-15);
  EXPECT_NEAR(*cell.cost_per_1m_usd, seconds * 1e6 * 1.20 / 3600, 1e-12);  // the systolic price
  // f32 on an int8-only MXU is compute-bound here (576 ns vs 60 ns of DRAM): a 500 MHz clock
  // (--set clock.mhz=500) doubles the compute time.
  systolic::ApplyOverride(gemmini, "clock.mhz=500");
  const compiler::TargetDescription slow = report::SystolicTargetFromConfig(gemmini);
  EXPECT_EQ(slow.peak.matrix_ops_per_second.at(hlo::PrimitiveType::kS8), 2.0 * 16 * 16 * 500e6);
  EXPECT_EQ(slow.peak.vector_ops_per_second, 16 * 500e6);
  const report::ModelReport half = ReportOf(report_test::kDotBiasRelu, {&slow});
  EXPECT_NEAR(Cell(half, "systolic").latency_ms, (1152 / (2.0 * 16 * 16 * 500e6 / 16) + 10e-6) * 1e3,
              1e-12);
}

}  // namespace

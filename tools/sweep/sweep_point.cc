// EvaluatePoint (contract in sweep_point.h): the portability report's systolic cell at one
// ArchConfig, with the simulator plugged in as the report's latency hook.
#include "tools/sweep/sweep_point.h"

#include <cstdio>
#include <new>

#include "tools/report/arch_target.h"

namespace sweep {
namespace {

std::string Number(const std::optional<double>& value) {
  if (!value) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", *value);
  return text;
}

}  // namespace

PointResult FailedPoint(std::string error) {
  PointResult result;
  result.error = std::move(error);
  return result;
}

PointResult EvaluatePoint(const hlo::Module& module, const systolic::ArchConfig& config,
                          const PointOptions& options) {
  const compiler::TargetDescription target = report::SystolicTargetFromConfig(config);
  report::ReportOptions report_options;
  report_options.prices = options.prices.empty() ? report::DefaultPrices() : options.prices;
  report_options.budget = options.budget;

  // The hook is called only for a model within the budget; a failed simulation leaves the
  // estimate standing (the note says why) rather than failing the point.
  bool asked = false;
  std::optional<SimulatedRun> run;
  std::string simulation_error;
  if (options.simulate) {
    report_options.latency =
        [&](const hlo::Module& original, const compiler::TargetDescription&,
            const report::LatencyBudget&) -> std::optional<report::MeasuredLatency> {
      asked = true;
      try {
        run = options.simulate(original, config);
      } catch (const std::bad_alloc&) {
        simulation_error = "out of memory";
      } catch (const std::exception& error) {
        simulation_error = error.what();
      }
      if (!run) return std::nullopt;
      return report::MeasuredLatency{run->seconds * 1e3, "simulated", run->host_fallback_share,
                                     ""};
    };
  }

  const report::ModelReport model =
      report::BuildModelReport(module.name(), "", module, {&target}, report_options);
  const report::TargetCell& cell = model.targets.at(0);
  if (cell.error) return FailedPoint(*cell.error);

  PointResult result;
  result.latency_ms = cell.latency_ms;
  result.latency_source = cell.latency_source;
  result.cost_per_1m_usd = cell.cost_per_1m_usd;
  if (run && cell.latency_source == "simulated") {
    result.utilization = run->mac_utilization;
    result.host_fallback_share = run->host_fallback_share;
    result.energy_mj = run->energy_pj * 1e-9;
    result.energy_source = "simulated";
  } else {
    // As the simulator counts it: the array's MACs over the array's time. Host fallbacks (a
    // dot of a type the array lacks, say) neither add MACs nor count as the array's time.
    const double peak = systolic::PeakOpsPerSecond(config);
    const double array_ms = cell.estimate_ms - cell.estimate_host_fallback_ms;
    if (array_ms > 0 && peak > 0) {
      result.utilization = cell.estimate_matrix_flops / (array_ms * 1e-3 * peak);
    } else if (peak > 0) {
      result.utilization = 0;  // the array never runs
    }
    if (cell.estimate_ms > 0) {
      result.host_fallback_share = cell.estimate_host_fallback_ms / cell.estimate_ms;
    }
    result.energy_mj = cell.energy_mj;
    result.energy_source = cell.energy_mj ? "estimated" : "";
  }
  if (options.simulate && !asked) {
    result.note = "not simulated: the estimate, " + Number(cell.latency_ms) +
                  " ms, is over the simulation budget (--max-run-seconds " +
                  Number(options.budget.max_run_seconds) + ")";
    if (options.budget.max_memory_bytes > 0) result.note += " or the memory budget";
  } else if (!simulation_error.empty()) {
    result.note = "simulation failed: " + simulation_error;
  }
  return result;
}

std::vector<std::string> ResultFields(const PointResult& result, const std::string& config_text) {
  return {config_text,
          Number(result.latency_ms),
          result.latency_source,
          Number(result.utilization),
          Number(result.host_fallback_share),
          Number(result.energy_mj),
          result.energy_source,
          Number(result.cost_per_1m_usd),
          result.error,
          result.note};
}

}  // namespace sweep

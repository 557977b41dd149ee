// One point of a sweep: the figures of one model on one accelerator configuration, from ONE
// function (EvaluatePoint) whose every figure carries its source.
//
//   latency   "simulated" when a simulator is supplied (the systolic backend, wired in
//             tools/retarget) and the model is within the budget (report::LatencyBudget: the
//             cost model's estimate at this config is at most max_run_seconds); otherwise the
//             cost model's figure through the portability report's library, "estimated".
//   energy    the simulator's counted energy ("simulated") with the latency, else the cost
//             model's ("estimated").
//   utilization  simulated: the simulator's MAC utilization (MACs over the accelerator's
//             cycles); estimated, the same ratio from the cost model: FLOPs of the kernels the
//             array runs around a dot/convolution over (the estimate less its host fallbacks x
//             the array's peak rate, 2 x rows x cols x clock). Host-run MACs count for neither.
//   host_fallback_share  the share of the time spent running host fallbacks: the simulator's
//             cycles, or the cost model's estimate (a point that is mostly host work says little
//             about the array).
//   cost      per million inferences at the systolic target's price (report::CostPerMillion).
// A simulation that fails leaves the estimate standing and says why in `note`; a failure of the
// cost model itself is `error` (no figures). EvaluatePoint never throws for a model that loaded.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"
#include "tools/report/report.h"

namespace sweep {

struct SimulatedRun {
  double seconds = 0;              // one inference on the accelerator (host fallback included)
  double mac_utilization = 0;      // 0..1
  double host_fallback_share = 0;  // 0..1 of the cycles
  double energy_pj = 0;
};

// Compiles and runs `module` for the accelerator `config`; throws on failure.
using SimulateFunction =
    std::function<SimulatedRun(const hlo::Module& module, const systolic::ArchConfig& config)>;

// The default simulation budget: points the cost model estimates at 10 ms or less of
// accelerator time. The simulator computes every product, so its run time grows with the work.
inline constexpr double kDefaultMaxSimulatedSeconds = 0.01;

struct PointOptions {
  SimulateFunction simulate;  // empty: every figure is estimated
  report::LatencyBudget budget{kDefaultMaxSimulatedSeconds, /*max_memory_bytes=*/0};
  report::PriceTable prices;  // empty: report::DefaultPrices()
};

struct PointResult {
  std::optional<double> latency_ms;
  std::string latency_source;  // "simulated" or "estimated"; empty with an error
  std::optional<double> utilization;
  std::optional<double> host_fallback_share;  // simulated or estimated, like latency
  std::optional<double> energy_mj;
  std::string energy_source;
  std::optional<double> cost_per_1m_usd;
  std::string error;  // set: no figures
  std::string note;   // why a figure is estimated although a simulator was supplied
};

PointResult EvaluatePoint(const hlo::Module& module, const systolic::ArchConfig& config,
                          const PointOptions& options);

// The result columns of sweep_csv.h's kResultColumns for a point whose config reads
// `config_text`, numbers with 6 significant digits, unset figures empty.
std::vector<std::string> ResultFields(const PointResult& result, const std::string& config_text);

// The point's failure as a row: every figure empty, `error` set.
PointResult FailedPoint(std::string error);

}  // namespace sweep

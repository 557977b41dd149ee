// ReportLatencyHook (contract in report_latency.h): no backend is wired in yet.
#include "tools/retarget/report_latency.h"

namespace cli {

report::LatencyFunction ReportLatencyHook(const Context& context) {
  // `context.backends` is where the CPU backend and the systolic simulator will be found.
  return [backends = context.backends](const hlo::Module&, const compiler::TargetDescription&,
                                       const report::LatencyBudget&)
             -> std::optional<report::MeasuredLatency> {
    (void)backends;
    return std::nullopt;  // not measured: the cost model's estimate stands
  };
}

}  // namespace cli

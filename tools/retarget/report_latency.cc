// ReportLatencyHook (contract in report_latency.h): the CPU backend measures, the systolic
// backend simulates, the GPU is measured by retarget-gpu-run where a GPU is present
// (report_gpu_latency.h).
#include "tools/retarget/report_latency.h"

#include <chrono>
#include <vector>

#include "targets/systolic/systolic_backend.h"
#include "tools/io/inputs.h"
#include "tools/retarget/report_gpu_latency.h"
#include "tools/retarget/run_support.h"
#include "tools/retarget/systolic_config.h"

namespace cli {
namespace {

// Runs after the first (warm-up) one that the CPU backend's median is taken over: enough for a
// stable figure on a noisy machine, few enough that a report over the corpus stays quick.
constexpr int kMeasuredRuns = 5;

std::optional<report::MeasuredLatency> MeasureOnCpu(targets::Backend& backend,
                                                    const hlo::Module& module) {
  std::unique_ptr<targets::Executable> executable = backend.Compile(module);
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(module, /*seed=*/0);
  executable->Run(inputs);  // warm-up: page faults, thread pool start
  std::vector<double> samples;
  for (int i = 0; i < kMeasuredRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    executable->Run(inputs);
    samples.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  return report::MeasuredLatency{Summarize(std::move(samples)).median_ms, "measured"};
}

std::optional<report::MeasuredLatency> SimulateOnSystolic(const systolic::ArchConfig& config,
                                                          targets::Backend* host,
                                                          const hlo::Module& module) {
  std::unique_ptr<targets::Backend> backend = targets::MakeSystolicBackend(config, host);
  std::unique_ptr<targets::Executable> executable = backend->Compile(module);
  executable->Run(io::MakeRandomInputs(module, /*seed=*/0));
  const std::map<std::string, double> counters = executable->profile().counters;
  auto seconds = counters.find("seconds");
  if (seconds == counters.end()) throw hlo::Error("the systolic backend reported no 'seconds'");
  return report::MeasuredLatency{seconds->second * 1e3, "simulated"};
}

}  // namespace

report::LatencyFunction ReportLatencyHook(const Context& context,
                                          std::optional<systolic::ArchConfig> systolic_config) {
  const systolic::ArchConfig config =
      systolic_config ? *systolic_config : SystolicRunConfig(std::nullopt, {});
  return [backends = context.backends, config](const hlo::Module& module,
                                               const compiler::TargetDescription& target,
                                               const report::LatencyBudget& budget)
             -> report::LatencyAnswer {
    if (target.name == "gpu") return MeasureOnGpu(module, budget);
    if (backends == nullptr) return report::LatencyAnswer::None("no backends registered");
    if (target.name == "cpu") {
      targets::Backend* cpu = backends->Find("cpu");
      if (cpu == nullptr) return report::LatencyAnswer::None("the cpu backend is not built in");
      Heartbeat heartbeat("measuring " + module.name() + " on cpu");
      return MeasureOnCpu(*cpu, module);
    }
    if (target.name == "systolic") {
      if (backends->Find("systolic") == nullptr) {
        return report::LatencyAnswer::None("the systolic backend is not built in");
      }
      Heartbeat heartbeat("simulating " + module.name() + " on " + config.name);
      // Host fallbacks run on the interpreter, as in `run --target systolic`; their time is
      // charged by the backend at the host-link bandwidth, not by how long they take here.
      targets::Backend* host = backends->Find("interp");
      return SimulateOnSystolic(config, host, module);
    }
    return report::LatencyAnswer::None("no backend measures " + target.name);
  };
}

}  // namespace cli

// ReportLatencyHook (contract in report_latency.h): each backend says where its latency comes
// from (targets::LatencySource): measured here (the CPU), simulated (the accelerator), or on the
// device by retarget-gpu-run where a GPU is present (report_gpu_latency.h).
#include "tools/retarget/report_latency.h"

#include <chrono>
#include <functional>
#include <vector>

#include "hlo/collective_runtime.h"
#include "hlo/multi_device.h"
#include "targets/systolic/systolic_backend.h"
#include "tools/io/device_arrays.h"
#include "tools/io/inputs.h"
#include "tools/retarget/report_gpu_latency.h"
#include "tools/retarget/run_support.h"
#include "tools/retarget/simulated_chips.h"
#include "tools/retarget/systolic_config.h"

namespace cli {
namespace {

// Runs after the first (warm-up) one that a wall-clock median is taken over: enough for a
// stable figure on a noisy machine, few enough that a report over the corpus stays quick.
constexpr int kMeasuredRuns = 5;

// One warm-up run (page faults, thread pools start), then the median of kMeasuredRuns.
report::MeasuredLatency MedianWallClock(const std::function<void()>& run) {
  run();
  std::vector<double> samples;
  for (int i = 0; i < kMeasuredRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    samples.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  return report::MeasuredLatency{Summarize(std::move(samples)).median_ms, "measured",
                                 std::nullopt, ""};
}

std::optional<report::MeasuredLatency> MeasureWallClock(targets::Backend& backend,
                                                        const hlo::Module& module) {
  std::unique_ptr<targets::Executable> executable = backend.Compile(module);
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(module, /*seed=*/0);
  return MedianWallClock([&] { executable->Run(inputs); });
}

// A module written for several devices: every device at once, one executable and one thread
// each (hlo::RunOnDevices), the step's wall time over all of them.
std::optional<report::MeasuredLatency> MeasureWallClockOnDevices(targets::Backend& backend,
                                                                 const hlo::Module& module,
                                                                 const hlo::DeviceGrid& grid) {
  const auto executables = targets::CompileForDevices(backend, module, grid.size());
  const std::vector<std::vector<hlo::Literal>> inputs =
      io::ResolveDeviceInputs(module, "random:0", grid.size());
  return MedianWallClock([&] { targets::RunAsDevices(executables, grid, inputs); });
}

// Runs once, on as many chips as the module is written for; the simulated time is the
// backend's own figure (LatencySource::kSimulated), the slowest chip's.
std::optional<report::MeasuredLatency> Simulate(targets::Backend& backend,
                                                const hlo::Module& module) {
  const std::map<std::string, double> counters = SimulateSlowestChip(backend, module);
  report::MeasuredLatency latency{counters.at("seconds") * 1e3, "simulated", std::nullopt, ""};
  if (auto share = counters.find("host_fallback_share"); share != counters.end())
    latency.host_share = share->second;
  return latency;
}

// The accelerator in the report's configuration (--config / --set), not the one registered for
// `run`; host fallbacks run on the interpreter, as in `run --target systolic`, and are charged
// by the backend at the host-link bandwidth.
std::shared_ptr<targets::Backend> ConfiguredSystolic(
    const Context& context, const std::optional<systolic::ArchConfig>& systolic_config) {
  if (context.backends == nullptr) return nullptr;
  const systolic::ArchConfig config =
      systolic_config ? *systolic_config : SystolicRunConfig(std::nullopt, {});
  return targets::MakeSystolicBackend(config, context.backends->Find("interp"));
}

// The backend that answers for `target`: the configured accelerator, or the registered one.
targets::Backend* BackendFor(const compiler::TargetDescription& target,
                             const targets::BackendRegistry* backends,
                             const std::shared_ptr<targets::Backend>& configured) {
  if (configured && configured->name() == target.name) return configured.get();
  return backends ? backends->Find(target.name) : nullptr;
}

}  // namespace

report::HostStepsFunction ReportHostStepsHook(const Context& context,
                                              std::optional<systolic::ArchConfig> systolic_config) {
  return [backends = context.backends, configured = ConfiguredSystolic(context, systolic_config)](
             const hlo::Module& compiled, const compiler::TargetDescription& target)
             -> std::optional<std::map<std::string, std::string>> {
    targets::Backend* backend = BackendFor(target, backends, configured);
    if (backend == nullptr) return std::nullopt;
    try {
      return backend->HostSteps(compiled);
    } catch (const hlo::Error&) {
      return std::nullopt;
    }
  };
}

report::LatencyFunction ReportLatencyHook(const Context& context,
                                          std::optional<systolic::ArchConfig> systolic_config) {
  const std::string config_name =
      systolic_config ? systolic_config->name : SystolicRunConfig(std::nullopt, {}).name;
  return [backends = context.backends, configured = ConfiguredSystolic(context, systolic_config),
          config_name](const hlo::Module& module, const compiler::TargetDescription& target,
                       const report::LatencyBudget& budget) -> report::LatencyAnswer {
    if (backends == nullptr) return report::LatencyAnswer::None("no backends registered");
    targets::Backend* backend = BackendFor(target, backends, configured);
    if (backend == nullptr) {
      return report::LatencyAnswer::None("the " + target.name + " backend is not built in");
    }
    const hlo::DeviceGrid grid = hlo::ModuleDeviceGrid(module);
    // A module written for several devices runs on all of them: measured here (every device
    // at once), simulated (a chip per device) or timed by retarget-gpu-run (a GPU per device).
    const std::string devices =
        grid.size() > 1 ? ", " + std::to_string(grid.size()) + " devices" : "";
    if (grid.size() > 1 && !backend->multi_device()) {
      return report::LatencyAnswer::None("written for " + std::to_string(grid.size()) +
                                         " devices; the " + backend->name() +
                                         " backend runs one");
    }
    switch (backend->latency_source()) {
      case targets::LatencySource::kDevice:
        return MeasureOnGpu(module, budget);
      case targets::LatencySource::kWallClock: {
        Heartbeat heartbeat("measuring " + module.name() + " on " + backend->name() + devices);
        return grid.size() > 1 ? MeasureWallClockOnDevices(*backend, module, grid)
                               : MeasureWallClock(*backend, module);
      }
      case targets::LatencySource::kSimulated: {
        Heartbeat heartbeat("simulating " + module.name() + " on " + config_name + devices);
        return Simulate(*backend, module);
      }
      case targets::LatencySource::kNone:
        break;
    }
    return report::LatencyAnswer::None("no backend measures " + target.name);
  };
}

}  // namespace cli

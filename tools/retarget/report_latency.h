// The latency hook of `retarget report`: where the backends plug measured (CPU, GPU) and
// simulated (systolic) latencies into the portability report (report::LatencyFunction).
//
// Each target's backend says where its latency comes from (targets::Backend::latency_source):
// kWallClock: compiled by the registered backend and run on random inputs (seed 0): one
// warm-up, then the median of 5 runs, "measured" (the CPU). kSimulated: compiled for
// `systolic_config` (default: the `run --target systolic` configuration) and run once,
// "simulated" (the simulated time, not the wall time). kDevice: measured by retarget-gpu-run
// when this machine has a GPU (report_gpu_latency.h). Otherwise, and for every target whose
// backend is not registered: no figure and the reason, so the cost model's estimate stands,
// labelled "estimated" with that reason as its latency note. The report only asks for
// models within its report::LatencyBudget (a model whose estimate exceeds max_run_seconds, or
// whose peak buffers exceed max_memory_bytes, keeps its estimate), and checks the answer.
#pragma once

#include <optional>

#include "simulator/isa/arch_config.h"
#include "tools/report/report.h"
#include "tools/retarget/cli.h"

namespace cli {

report::LatencyFunction ReportLatencyHook(const Context& context,
                                          std::optional<systolic::ArchConfig> systolic_config);

// The report's owners hook: each target's backend (the accelerator in `systolic_config`, as
// above) lists what its lowering runs on the host (targets::Backend::HostSteps), so the owners
// the report prints are the lowering's. A lowering that fails (the module does not fit the
// accelerator's DRAM) adds nothing: the description's owners stand, and the latency hook
// reports the failure.
report::HostStepsFunction ReportHostStepsHook(const Context& context,
                                              std::optional<systolic::ArchConfig> systolic_config);

}  // namespace cli

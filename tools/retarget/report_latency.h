// The latency hook of `retarget report`: where the backends plug measured (CPU, GPU) and
// simulated (systolic) latencies into the portability report (report::LatencyFunction).
//
// cpu: compiled by the registered CPU backend and run on random inputs (seed 0): one warm-up,
// then the median of 5 runs, "measured". systolic: compiled for `systolic_config` (default: the
// `run --target systolic` configuration) and run once on the SystemC simulator, "simulated" (the
// simulated time, not the wall time). gpu and every target whose backend is not registered:
// nullopt, so the cost model's estimate stands, labelled "estimated". The report only asks for
// models within its report::LatencyBudget (a model whose estimate exceeds max_run_seconds, or
// whose peak buffers exceed max_memory_bytes, keeps its estimate), and checks the answer.
#pragma once

#include <optional>

#include "targets/systolic/arch_config.h"
#include "tools/report/report.h"
#include "tools/retarget/cli.h"

namespace cli {

report::LatencyFunction ReportLatencyHook(const Context& context,
                                          std::optional<systolic::ArchConfig> systolic_config);

}  // namespace cli

// The latency hook of `retarget report`: where the backends plug measured (CPU, GPU) and
// simulated (systolic) latencies into the portability report (report::LatencyFunction).
//
// Today no backend is wired in: the hook answers nullopt for every target, so every latency is
// the cost model's estimate, labelled "estimated" — honestly. To plug a backend in, answer for
// its target here: compile `original` with context.backends, run it within `budget`
// (report::LatencyBudget: a model whose estimate exceeds max_run_seconds, or whose peak buffers
// exceed max_memory_bytes, is never passed here), and return {ms, "measured"} or
// {ms, "simulated"}; the report checks the answer and computes the cost from it.
#pragma once

#include "tools/report/report.h"
#include "tools/retarget/cli.h"

namespace cli {

report::LatencyFunction ReportLatencyHook(const Context& context);

}  // namespace cli

// `retarget sweep`, its internal `sweep-point` and `retarget sweep-merge` (docs/sweep.md).
// Declared apart from cli.h so the commands can be wired into main.cc's table without editing
// the shared header.
#pragma once

#include "tools/retarget/cli.h"
#include "tools/sweep/sweep_point.h"

namespace cli {

CommandSpec SweepSpec();  // cmd_sweep.cc
int RunSweep(const ParsedArgs& args, const Context& context);

// One point, run by `sweep` as a child process (cmd_sweep_point.cc): prints the result columns
// of tools/sweep/sweep_csv.h as a two-line CSV on stdout.
CommandSpec SweepPointSpec();
int RunSweepPoint(const ParsedArgs& args, const Context& context);

CommandSpec SweepMergeSpec();  // cmd_sweep_merge.cc
int RunSweepMerge(const ParsedArgs& args, const Context& context);

// A point index 0..kMaxSweepPoints-1 (--point, --index); UsageError otherwise.
int64_t ParsePointIndex(const std::string& flag, const std::string& value);

// The systolic backend as the sweep's simulator: compile and run `module` at `config` (inputs
// random:0, host fallback on the interpreter). Empty when this build registers no systolic
// backend, so every point is estimated.
sweep::SimulateFunction SystolicSimulator(const Context& context);

}  // namespace cli

// The backends a `retarget` process runs, registered explicitly (no static registration): the
// command line's main() and the Python extension (tools/python) fill their registries here, so
// both run the same targets configured the same way.
#pragma once

#include "targets/backend.h"

namespace cli {

// interp; cpu, its compiled kernels kept across runs (kernel_cache.h); gpu, whose generated
// artifact runs by host emulation in this process (retarget-gpu-run runs it on a real GPU);
// systolic with the `run --target systolic` configuration (systolic_config.h), its host
// fallback on the interpreter.
void RegisterBackends(targets::BackendRegistry& registry);

}  // namespace cli

// The GPU column of `retarget report`: a latency measured on a real GPU when this machine has
// one, otherwise why not (the report then keeps the cost model's estimate, labelled "estimated",
// with that reason as its latency note).
//
// Measured means: the CUDA driver (libcuda.so.1, opened with dlopen as retarget-gpu-run does)
// initializes and sees a device; `retarget-gpu-run` is found next to the running `retarget`; the
// GPU code generator compiles the model (gpu::codegen::CompileModule) into an artifact in a
// temporary folder; `retarget-gpu-run ARTIFACT --inputs random:0 --warmup 1 --repeat 5
// --stats-json S` exits 0 within kGpuRunTimeout (+ 10 x the budget's max_run_seconds); the figure
// is its `total_median_ms` (median over the 5 timed runs of the whole step sequence, CUDA
// events). Any step that fails answers "no figure" with a reason that names it (a model the
// code generator refuses keeps the generator's message, which names the instruction); nothing
// here throws for a model, and the temporary files are removed.
#pragma once

#include <optional>
#include <string>

#include "hlo/ir.h"
#include "tools/report/report.h"

namespace cli {

// Seconds a GPU run may take on top of 10 x max_run_seconds (driver start, PTX JIT, uploads).
inline constexpr double kGpuRunTimeout = 60;

// nullopt when the CUDA driver `library` loads, cuInit succeeds and it sees at least one device;
// otherwise the reason, e.g. "no GPU: libcuda.so.1 could not be loaded (...)".
std::optional<std::string> GpuUnavailableReason(const std::string& library = "libcuda.so.1");

// The measured GPU latency of `module`, or none with the reason (see the file comment).
report::LatencyAnswer MeasureOnGpu(const hlo::Module& module, const report::LatencyBudget& budget);

}  // namespace cli

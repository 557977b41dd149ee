// Runs a validated artifact on one GPU: upload, warm-up, timed repeats, final run, download.
//
// Guarantees: timings are CUDA events recorded on the one stream between consecutive steps, so
// a step's time is the device time from the end of the previous step to its end (launch gaps
// included); per-step and whole-program medians are over `repeat` runs after `warmup` runs.
// The results come from a separate final run on freshly uploaded inputs and constants, so steps
// that write into parameter slices (input/output aliasing) cannot skew them. Every driver or
// library failure is a RunError; device memory, modules and the context are released on the way
// out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "targets/gpu/artifact.h"

namespace gpu::runtime {

class NcclCommunicators;  // nccl_collectives.h

struct RunOptions {
  int device = 0;  // CUDA ordinal (ExecuteOnDevices sets it per device)
  // This GPU's place in the artifact's device grid (device_id steps, collectives) and the
  // communicators its collectives of more than one device use (ExecuteOnDevices sets both).
  int64_t grid_device = 0;
  NcclCommunicators* communicators = nullptr;
  int warmup = 3;
  int repeat = 10;
  // A while loop that runs more trips stops the run with an error naming it (never a hang).
  int64_t max_while_iterations = int64_t{1} << 32;
};

struct StepTiming {
  std::string name;
  std::string kind;
  double median_ms = 0.0;
  double min_ms = 0.0;
};

struct RunResult {
  std::string device_name;
  int compute_capability = 0;  // e.g. 90
  int driver_version = 0;      // e.g. 13000
  std::string control_flow;    // how while/conditional steps ran: "none", "host-driven (...)"
  std::vector<StepTiming> steps;
  double total_median_ms = 0.0;
  double total_min_ms = 0.0;
  std::vector<std::string> results;  // device bytes of each manifest result
};

// Throws RunError naming the first step that this runtime build cannot execute (cudnn_conv
// without cuDNN's header; collectives between devices without NCCL's).
void CheckSupported(const Artifact& artifact);

// Runs a one-device artifact (grid 1 x 1) on GPU options.device.
RunResult Execute(const Artifact& artifact, const std::vector<std::string>& inputs, const RunOptions& options);

// Runs the artifact on every device of its grid at once: device d is CUDA ordinal d, on a host
// thread of its own, with inputs[d]; collectives between devices go through NCCL (loaded at
// run time). One device is Execute. Throws RunError when fewer GPUs are visible than the grid
// has, or when a device fails (the others are stopped: their communicators are aborted).
std::vector<RunResult> ExecuteOnDevices(const Artifact& artifact,
                                        const std::vector<std::vector<std::string>>& inputs,
                                        const RunOptions& options);

// The median of a non-empty list (mean of the middle two for even sizes).
double Median(std::vector<double> values);

}  // namespace gpu::runtime

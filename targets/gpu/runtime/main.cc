// retarget-gpu-run: the thin GPU runtime. Loads a .rtgpu artifact, takes inputs from .npz,
// runs it on an NVIDIA GPU, writes the results as .npz and per-step times measured with CUDA
// events. Depends only on the CUDA toolkit (driver loaded with dlopen, cuBLASLt linked).
//
// Exit status: 0 on success, 1 on any error (bad artifact, bad inputs, no driver, CUDA failure),
// 2 on bad usage. The artifact and the inputs are checked before the driver is touched, so those
// errors read the same on machines without a GPU.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "targets/gpu/artifact.h"
#include "targets/gpu/runtime/executor.h"
#include "targets/gpu/runtime/npz.h"
#include "targets/gpu/runtime/run_error.h"
#include "targets/gpu/runtime/tensors.h"

namespace {

using gpu::runtime::RunError;

constexpr const char* kUsage =
    "usage: retarget-gpu-run ARTIFACT.rtgpu [options]\n"
    "  --inputs FILE.npz|random:SEED  entries arg0, arg1, ... (default random:1); an artifact\n"
    "                                 for N > 1 devices takes arrays with a leading dimension\n"
    "                                 of N (device d's at index d), random draws per device\n"
    "  --output FILE.npz              write results out0, out1, ... (N devices: stacked)\n"
    "  --warmup N                     untimed runs before timing (default 3)\n"
    "  --repeat N                     timed runs; medians are over these (default 10)\n"
    "  --device I                     CUDA device ordinal (default 0; an artifact for N > 1\n"
    "                                 devices runs on ordinals 0..N-1, NCCL between them)\n"
    "  --max-iterations N             stop a while loop after N trips with an error (default "
    "2^32)\n"
    "  --stats-json FILE              per-step and total times as JSON\n"
    "  --describe                     print the artifact's manifest summary and exit (no GPU "
    "needed)\n"
    "  --version                      print the artifact format version this runtime reads\n";

struct Options {
  std::string artifact, inputs = "random:1", output, stats_json;
  gpu::runtime::RunOptions run;
  bool describe = false;
};

int ParseCount(const std::string& flag, const std::string& text, int lowest) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lowest || v > 1000000) {
    throw std::invalid_argument(flag + " needs an integer >= " + std::to_string(lowest) + ", got '" + text + "'");
  }
  return static_cast<int>(v);
}

int64_t ParseTrips(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0) {
    throw std::invalid_argument(flag + " needs an integer >= 0, got '" + text + "'");
  }
  return static_cast<int64_t>(v);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--inputs") o.inputs = value();
    else if (arg == "--output") o.output = value();
    else if (arg == "--stats-json") o.stats_json = value();
    else if (arg == "--warmup") o.run.warmup = ParseCount(arg, value(), 0);
    else if (arg == "--repeat") o.run.repeat = ParseCount(arg, value(), 1);
    else if (arg == "--device") o.run.device = ParseCount(arg, value(), 0);
    else if (arg == "--max-iterations") o.run.max_while_iterations = ParseTrips(arg, value());
    else if (arg == "--describe") o.describe = true;
    else if (!arg.empty() && arg[0] == '-') throw std::invalid_argument("unknown option " + arg);
    else if (o.artifact.empty()) o.artifact = arg;
    else throw std::invalid_argument("more than one artifact given");
  }
  if (o.artifact.empty()) throw std::invalid_argument("no artifact given");
  return o;
}

std::string Shape(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) t += ',';
    t += std::to_string(s[i]);
  }
  return t + "]";
}

void Describe(const gpu::Artifact& a) {
  const gpu::Manifest& m = a.manifest;
  std::printf("module %s (format version %u, producer '%s', target %s)\n", m.module_name.c_str(),
              gpu::kArtifactFormatVersion, m.producer.c_str(), m.target_arch.c_str());
  std::printf("arena %llu bytes, workspace %llu bytes\n", static_cast<unsigned long long>(m.arena_bytes),
              static_cast<unsigned long long>(m.workspace_bytes));
  std::printf("devices %lld (%lld replica(s) x %lld partition(s))\n",
              static_cast<long long>(m.grid.size()), static_cast<long long>(m.grid.replicas),
              static_cast<long long>(m.grid.partitions));
  for (const auto& p : m.parameters) std::printf("parameter %s %s%s\n", p.name.c_str(), gpu::DTypeName(p.dtype), Shape(p.shape).c_str());
  for (const auto& r : m.results) std::printf("result %s %s%s\n", r.name.c_str(), gpu::DTypeName(r.dtype), Shape(r.shape).c_str());
  for (size_t i = 0; i < m.steps.size(); ++i) {
    std::printf("step %zu %s %s\n", i, gpu::StepKindName(m.steps[i]), m.steps[i].name.c_str());
  }
  for (size_t p = 0; p < m.programs.size(); ++p) {
    std::printf("program %zu %s: %zu steps\n", p, m.programs[p].name.c_str(), m.programs[p].steps.size());
  }
  for (const auto& [name, bytes] : a.sections) std::printf("section %s %zu bytes\n", name.c_str(), bytes.size());
}

// Device d's arrays out of entries stacked along a leading dimension of `devices`.
std::vector<std::vector<gpu::runtime::NpyArray>> SplitDevices(
    const std::vector<gpu::runtime::NpyArray>& arrays, int64_t devices, const std::string& source) {
  std::vector<std::vector<gpu::runtime::NpyArray>> split(static_cast<size_t>(devices));
  for (const gpu::runtime::NpyArray& a : arrays) {
    if (a.shape.empty() || a.shape[0] != devices) {
      throw RunError(source + ": entry '" + a.name + "' has shape " + Shape(a.shape) +
                     "; a run on " + std::to_string(devices) +
                     " devices needs a leading dimension of " + std::to_string(devices));
    }
    const size_t each = a.data.size() / static_cast<size_t>(devices);
    for (int64_t d = 0; d < devices; ++d) {
      split[static_cast<size_t>(d)].push_back(
          {a.name, a.descr, std::vector<int64_t>(a.shape.begin() + 1, a.shape.end()),
           a.data.substr(static_cast<size_t>(d) * each, each)});
    }
  }
  return split;
}

// Every device's results as one entry each, stacked along a leading device dimension.
std::vector<gpu::runtime::NpyArray> StackDevices(
    const std::vector<std::vector<gpu::runtime::NpyArray>>& per_device) {
  std::vector<gpu::runtime::NpyArray> stacked = per_device.at(0);
  for (size_t i = 0; i < stacked.size(); ++i) {
    stacked[i].shape.insert(stacked[i].shape.begin(), static_cast<int64_t>(per_device.size()));
    for (size_t d = 1; d < per_device.size(); ++d) stacked[i].data += per_device[d].at(i).data;
  }
  return stacked;
}

void WriteStats(const Options& o, const gpu::Artifact& a, const gpu::runtime::RunResult& r) {
  gpu::Json steps = gpu::Json::array();
  for (size_t i = 0; i < r.steps.size(); ++i) {
    steps.push_back({{"index", i},
                     {"name", r.steps[i].name},
                     {"kind", r.steps[i].kind},
                     {"median_ms", r.steps[i].median_ms},
                     {"min_ms", r.steps[i].min_ms}});
  }
  const gpu::Json j = {{"artifact", o.artifact},
                       {"module", a.manifest.module_name},
                       {"device", r.device_name},
                       {"compute_capability", r.compute_capability},
                       {"driver_version", r.driver_version},
                       {"control_flow", r.control_flow},
                       {"devices", a.manifest.grid.size()},
                       {"warmup", o.run.warmup},
                       {"repeat", o.run.repeat},
                       {"total_median_ms", r.total_median_ms},
                       {"total_min_ms", r.total_min_ms},
                       {"steps", std::move(steps)}};
  std::ofstream out(o.stats_json);
  out << gpu::JsonText(j) << "\n";
  if (!out) throw RunError(o.stats_json + ": cannot write");
}

int Run(const Options& o) {
  const gpu::Artifact artifact = gpu::ReadArtifactFile(o.artifact);
  if (o.describe) {
    Describe(artifact);
    return 0;
  }
  gpu::runtime::CheckSupported(artifact);
  const int64_t devices = artifact.manifest.grid.size();
  std::vector<std::vector<std::string>> inputs(static_cast<size_t>(devices));
  if (o.inputs.rfind("random:", 0) == 0) {
    char* end = nullptr;
    const std::string seed = o.inputs.substr(7);
    const unsigned long long v = std::strtoull(seed.c_str(), &end, 10);
    if (seed.empty() || *end != '\0') throw RunError("--inputs random:SEED needs an integer seed, got '" + seed + "'");
    // Device 0 draws what a one-device run draws; the others draw their own.
    for (int64_t d = 0; d < devices; ++d) {
      inputs[static_cast<size_t>(d)] = gpu::runtime::RandomInputs(
          artifact.manifest, v + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(d));
    }
  } else if (devices == 1) {
    inputs[0] =
        gpu::runtime::BindInputs(artifact.manifest, gpu::runtime::ReadNpzFile(o.inputs), o.inputs);
  } else {
    const auto split = SplitDevices(gpu::runtime::ReadNpzFile(o.inputs), devices, o.inputs);
    for (int64_t d = 0; d < devices; ++d) {
      inputs[static_cast<size_t>(d)] =
          gpu::runtime::BindInputs(artifact.manifest, split[static_cast<size_t>(d)], o.inputs);
    }
  }
  if (devices > 1 && o.run.device != 0)
    throw RunError("--device: an artifact for " + std::to_string(devices) +
                   " devices runs on ordinals 0.." + std::to_string(devices - 1));
  const std::vector<gpu::runtime::RunResult> all =
      gpu::runtime::ExecuteOnDevices(artifact, inputs, o.run);
  const gpu::runtime::RunResult& r =
      all.front();  // the devices run in step: device 0's times stand for all
  if (devices > 1)
    std::printf("devices: %lld, NCCL between them\n", static_cast<long long>(devices));
  std::printf("device: %s (sm_%d, driver %d)\n", r.device_name.c_str(), r.compute_capability, r.driver_version);
  if (r.control_flow != "none") std::printf("control flow: %s\n", r.control_flow.c_str());
  for (size_t i = 0; i < r.steps.size(); ++i) {
    std::printf("step %zu %-16s %-24s median %.4f ms, min %.4f ms\n", i, r.steps[i].kind.c_str(), r.steps[i].name.c_str(),
                r.steps[i].median_ms, r.steps[i].min_ms);
  }
  std::printf("time: median %.4f ms, min %.4f ms over %d runs\n", r.total_median_ms, r.total_min_ms, o.run.repeat);
  if (!o.output.empty()) {
    std::vector<std::vector<gpu::runtime::NpyArray>> per_device;
    for (const gpu::runtime::RunResult& each : all)
      per_device.push_back(gpu::runtime::ResultsToNpz(artifact.manifest, each.results));
    gpu::runtime::WriteNpzFile(devices == 1 ? per_device[0] : StackDevices(per_device), o.output);
  }
  if (!o.stats_json.empty()) WriteStats(o, artifact, r);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") { std::cout << kUsage; return 0; }
    if (arg == "--version") { std::printf("retarget-gpu-run: artifact format version %u\n", gpu::kArtifactFormatVersion); return 0; }
  }
  Options options;
  try {
    options = ParseArgs(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "retarget-gpu-run: %s\n%s", e.what(), kUsage);
    return 2;
  }
  try {
    return Run(options);
  } catch (const std::exception& e) {  // ArtifactError, RunError, bad_alloc: a message, never a crash
    std::fprintf(stderr, "retarget-gpu-run: error: %s\n", e.what());
    return 1;
  }
}

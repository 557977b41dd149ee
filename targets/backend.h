// The backend interface: everything a target must provide to run a module.
//
// A backend compiles a verified module into an Executable; an Executable runs it on inputs and
// reports a profile and the artifacts it produced (PTX, assembly, accelerator programs).
// Backends are registered explicitly by main() and by the test main (no static registration).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hlo/collective_runtime.h"
#include "hlo/diagnostic.h"
#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/multi_device.h"

namespace targets {

struct Profile {
  double wall_ms = 0.0;                   // last Run's wall time
  std::map<std::string, double> counters;  // backend-specific (cycles, kernels, bytes, ...)
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs the entry computation. Inputs are the entry parameters in order; the result is the
  // root value (a tuple literal for tuple roots). Throws hlo::Error.
  virtual hlo::Literal Run(std::span<const hlo::Literal> inputs) = 0;
  // Runs as one device of a multi-device run (hlo::RunOnDevices gives `device`): collectives
  // meet the other devices' executables through device.runtime. Every device runs its own
  // executable (one holds one run's buffers). Only backends whose multi_device() is true
  // implement it.
  virtual hlo::Literal RunAsDevice(std::span<const hlo::Literal> inputs,
                                   const hlo::DeviceView& device) {
    throw hlo::Error("this target runs one device");
  }
  virtual Profile profile() const { return {}; }
  // Named artifacts (e.g. "kernel.ptx" -> text).
  virtual std::map<std::string, std::string> artifacts() const { return {}; }
};

// Where the portability report takes a target's latency from (tools/retarget/report_latency.cc
// asks the backend; it never names one).
enum class LatencySource {
  kNone,       // none: the reference interpreter's time says nothing about any hardware
  kWallClock,  // the median wall time of Run on this machine
  kSimulated,  // the simulated time Run reports as profile().counters["seconds"]
  kDevice,     // only on the device itself (retarget-gpu-run, where one is present)
};

// What `retarget compile --emit KIND` writes for a target (Backend::Emit). The CLI writes the
// files; the backend decides what is in them.
struct Emitted {
  std::string main;             // to `-o OUT`
  // Without -o (when `needs_output` is false): `main`, unless this says otherwise.
  std::optional<std::string> to_stdout;
  bool needs_output = false;    // a binary that must go to a file
  std::string error;            // set: why the main file cannot be written (reported after
                                // the command line's own checks)
  // Files beside OUT: OUT's extension `from` is replaced by `to` (appended when OUT lacks it),
  // e.g. {".ll", ".opt.ll", ir} writes OUT.opt.ll beside OUT.ll.
  struct Beside {
    std::string from, to, bytes;
  };
  std::vector<Beside> beside;
  // Files for --dump-dir D, by path relative to D (rewritten on every run, like pass dumps).
  std::map<std::string, std::string> dumps;
  std::string stats_key, stats_json;  // an object added to --stats-json under this key
  std::string summary;                // one line for stderr ("" for none)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;         // "interp", "cpu", "gpu", "systolic"
  virtual std::string description() const = 0;  // one line for --help
  // Whether its executables run as devices of a multi-device run (Executable::RunAsDevice).
  virtual bool multi_device() const { return false; }
  // What `retarget compile --emit KIND` can write for this target besides the optimized HLO
  // every target gives ("llvm", "obj", "ptx", "asm"). The CLI asks instead of naming targets.
  virtual std::vector<std::string> emit_kinds() const { return {}; }
  // The file `-o OUT<extension>` gets as this target's whole artifact (".rtgpu"), "" for none.
  virtual std::string artifact_extension() const { return ""; }
  // Whether Emit takes the module after the target pipeline, which the CLI runs with the user's
  // pipeline options, or as given (the backend compiles it itself).
  virtual bool emits_optimized_module() const { return false; }
  // Writes `kind` (one of emit_kinds(), or "artifact" for artifact_extension()) for `module`;
  // `dump_dir` non-empty asks for the backend's intermediate files too. Throws hlo::Error.
  virtual Emitted Emit(const hlo::Module& module, const std::string& kind,
                       const std::string& dump_dir) {
    throw hlo::Error("the " + name() + " backend emits nothing but HLO");
  }
  // How the report obtains this target's latency.
  virtual LatencySource latency_source() const { return LatencySource::kNone; }
  // For a module already through this target's pipeline: the instructions its lowering runs on
  // the host, by name, with the lowering's reason; nullopt when the backend has nothing to add
  // to its description. The report counts them as host fallbacks, so the owners it prints are
  // the lowering's, including host steps a per-instruction rule cannot foresee (a shape that
  // does not fit, a value used in another role than it was computed in).
  virtual std::optional<std::map<std::string, std::string>> HostSteps(
      const hlo::Module& optimized) {
    return std::nullopt;
  }
  // Compiles a copy of `module` (the caller's module is not modified). Throws hlo::Error.
  virtual std::unique_ptr<Executable> Compile(const hlo::Module& module) = 0;
};

// One executable per device (each holds the buffers of one run), for a multi-device run.
inline std::vector<std::unique_ptr<Executable>> CompileForDevices(Backend& backend,
                                                                  const hlo::Module& module,
                                                                  int64_t devices) {
  std::vector<std::unique_ptr<Executable>> executables;
  for (int64_t d = 0; d < devices; ++d) executables.push_back(backend.Compile(module));
  return executables;
}

// Runs executables[d] as device d of `grid` on inputs[d], every device at once
// (hlo::RunOnDevices: one thread each, collectives meeting through one runtime); element d of
// the result is device d's. Throws as hlo::RunOnDevices does.
inline std::vector<hlo::Literal> RunAsDevices(
    const std::vector<std::unique_ptr<Executable>>& executables, const hlo::DeviceGrid& grid,
    const std::vector<std::vector<hlo::Literal>>& inputs) {
  return hlo::RunOnDevices(grid, [&](const hlo::DeviceView& view) {
    const auto d = static_cast<size_t>(view.device);
    return executables.at(d)->RunAsDevice(inputs.at(d), view);
  });
}

// The set of backends available to a program, filled explicitly by its main().
class BackendRegistry {
 public:
  void Add(std::unique_ptr<Backend> backend) { backends_.push_back(std::move(backend)); }
  Backend* Find(const std::string& name) const {
    for (const auto& b : backends_) {
      if (b->name() == name) return b.get();
    }
    return nullptr;
  }
  const std::vector<std::unique_ptr<Backend>>& backends() const { return backends_; }

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

}  // namespace targets

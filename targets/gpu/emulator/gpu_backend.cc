// MakeGpuBackend: see gpu_backend.h.
#include "targets/gpu/emulator/gpu_backend.h"

#include <mutex>
#include <stdexcept>
#include <utility>

#include "targets/gpu/artifact.h"
#include "targets/gpu/codegen/gpu_compiler.h"
#include "targets/gpu/codegen/kernel_dumps.h"
#include "targets/gpu/emulator/host_emulator.h"

namespace gpu::emulator {
namespace {

class EmulatedExecutable : public targets::Executable {
 public:
  // `optimized`: the module after the gpu pipeline, kept to compile again for a run on another
  // device grid than the module's own.
  EmulatedExecutable(gpu::codegen::GpuCompileResult compiled,
                     std::unique_ptr<hlo::Module> optimized, bool tuple_root)
      : compiled_(std::move(compiled)), optimized_(std::move(optimized)),
        tuple_root_(tuple_root) {}

  hlo::Literal Run(std::span<const hlo::Literal> inputs) override {
    return RunOn(inputs, nullptr);
  }
  hlo::Literal RunAsDevice(std::span<const hlo::Literal> inputs,
                           const hlo::DeviceView& device) override {
    return RunOn(inputs, &device);
  }

  hlo::Literal RunOn(std::span<const hlo::Literal> inputs, const hlo::DeviceView* device) {
    const hlo::DeviceGrid grid = device != nullptr ? device->grid : hlo::DeviceGrid{};
    const gpu::DeviceGrid& compiled_for = compiled_.artifact.manifest.grid;
    if (compiled_for.replicas != grid.replicas || compiled_for.partitions != grid.partitions) {
      // The groups and ids are the grid's: compile for the one this run has. The devices of a
      // run compile one at a time (LLVM's target set-up is not made for concurrent first use).
      static std::mutex compiling;
      std::lock_guard<std::mutex> lock(compiling);
      gpu::codegen::GpuCompileOptions options;
      options.assemble = false;
      options.device_grid = grid;
      compiled_ = gpu::codegen::CompileOptimizedModule(*optimized_, options);
    }
    std::vector<hlo::Literal> results;
    try {
      results = EmulateArtifact(compiled_, inputs, {}, device);
    } catch (const std::runtime_error& error) {  // the emulator's own errors
      if (const auto* located = dynamic_cast<const hlo::Error*>(&error)) throw *located;
      throw hlo::Error(std::string("gpu host emulation: ") + error.what());
    }
    if (tuple_root_) return hlo::Literal::Tuple(std::move(results));
    if (results.size() != 1) throw hlo::Error("gpu host emulation: expected one result");
    return std::move(results[0]);
  }

  targets::Profile profile() const override {
    targets::Profile profile;
    profile.counters["host_emulation"] = 1;
    profile.counters["kernels"] = static_cast<double>(compiled_.kernels.size());
    profile.counters["steps"] = static_cast<double>(compiled_.artifact.manifest.steps.size());
    return profile;
  }

  std::map<std::string, std::string> artifacts() const override {
    return {{"kernels.ptx", compiled_.ptx}, {"kernels.ll", compiled_.llvm_ir}};
  }

 private:
  gpu::codegen::GpuCompileResult compiled_;
  std::unique_ptr<hlo::Module> optimized_;
  bool tuple_root_;
};

class GpuEmulationBackend : public targets::Backend {
 public:
  std::string name() const override { return "gpu"; }
  // The kernels' IR and PTX (`-o OUT.rtgpu` writes the whole artifact).
  std::vector<std::string> emit_kinds() const override { return {"llvm", "ptx"}; }
  // Emulation on the host says nothing about the GPU's time: retarget-gpu-run measures it.
  targets::LatencySource latency_source() const override {
    return targets::LatencySource::kDevice;
  }
  std::string description() const override {
    return "NVIDIA GPU code (LLVM NVPTX kernels, cuBLASLt steps), run by host emulation";
  }
  // `-o OUT.rtgpu`: the self-contained artifact (docs/gpu-runtime.md: PTX, the cubin when
  // ptxas is installed, launch plan, arena offsets, constants); --emit ptx: the PTX of all
  // kernels; --emit llvm: their IR before O3 (OUT) and after (OUT.opt.ll). --dump-dir D:
  // gpu.kernels.{ll,opt.ll,ptx}, gpu.ptxas.log (when ptxas ran), gpu.codegen.json (launches,
  // registers, spills, owners) and kernels/<entry>.{ll,ptx}, each kernel alone.
  std::string artifact_extension() const override { return ".rtgpu"; }
  // Every device emulates its own copy of the artifact on a thread of its own; collectives
  // meet through the run's rendezvous (emulated_collectives.h).
  bool multi_device() const override { return true; }
  bool emits_optimized_module() const override { return true; }
  targets::Emitted Emit(const hlo::Module& optimized, const std::string& kind,
                        const std::string& dump_dir) override {
    gpu::codegen::GpuCompileResult result = gpu::codegen::CompileOptimizedModule(optimized);
    targets::Emitted emitted;
    emitted.stats_key = "gpu_codegen";
    emitted.stats_json = gpu::codegen::GpuCodegenStatsJson(result);
    if (!dump_dir.empty()) {
      emitted.dumps["gpu.kernels.ll"] = result.llvm_ir;
      emitted.dumps["gpu.kernels.opt.ll"] = result.optimized_ir;
      emitted.dumps["gpu.kernels.ptx"] = result.ptx;
      if (!result.ptxas_log.empty()) emitted.dumps["gpu.ptxas.log"] = result.ptxas_log;
      emitted.dumps["gpu.codegen.json"] = emitted.stats_json;
      for (const gpu::codegen::KernelDump& kernel : gpu::codegen::SplitKernelDumps(result)) {
        emitted.dumps["kernels/" + kernel.entry + ".ll"] = kernel.llvm_ir;
        emitted.dumps["kernels/" + kernel.entry + ".ptx"] = kernel.ptx;
      }
    }
    if (kind == "ptx") {
      emitted.main = result.ptx;
    } else if (kind == "llvm") {
      emitted.main = result.llvm_ir;
      emitted.beside.push_back({".ll", ".opt.ll", result.optimized_ir});
    } else {
      emitted.main = gpu::SerializeArtifact(result.artifact);
    }
    emitted.summary = "gpu: " + std::to_string(result.kernels.size()) + " kernels, " +
                      std::to_string(result.artifact.manifest.steps.size()) + " steps, arena " +
                      std::to_string(result.artifact.manifest.arena_bytes) + " bytes";
    return emitted;
  }
  std::unique_ptr<targets::Executable> Compile(const hlo::Module& module) override {
    std::unique_ptr<hlo::Module> copy = module.Clone();
    gpu::codegen::GpuCompileOptions options;
    options.assemble = false;  // ptxas is not needed to emulate; `compile --target gpu` runs it
    gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*copy, options);
    const bool tuple_root = module.entry()->root()->shape().IsTuple();
    return std::make_unique<EmulatedExecutable>(std::move(compiled), std::move(copy),
                                                tuple_root);
  }
};

}  // namespace

std::unique_ptr<targets::Backend> MakeGpuBackend() {
  return std::make_unique<GpuEmulationBackend>();
}

}  // namespace gpu::emulator

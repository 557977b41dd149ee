// The GPU code generator's files for `retarget compile --target gpu` (see emit_gpu.h).
#include "tools/retarget/emit_gpu.h"

#include <filesystem>
#include <iostream>

#include "targets/gpu/artifact.h"
#include "targets/gpu/codegen/gpu_compiler.h"
#include "targets/gpu/codegen/kernel_dumps.h"
#include "tools/retarget/cli.h"

namespace cli {

int EmitGpuCode(const hlo::Module& module, const std::string& input, const std::string& kind,
                const std::optional<std::string>& output, const std::string& dump_dir, bool force,
                std::string* codegen_stats) {
  gpu::codegen::GpuCompileResult result = gpu::codegen::CompileOptimizedModule(module);
  std::string stats = gpu::codegen::GpuCodegenStatsJson(result);
  if (codegen_stats != nullptr) *codegen_stats = stats;
  if (!dump_dir.empty()) {
    std::filesystem::create_directories(dump_dir);
    const std::filesystem::path dir = dump_dir;
    // Dumps are regenerated on every run, like the pass dumps beside them.
    WriteOutputFile((dir / "gpu.kernels.ll").string(), result.llvm_ir, true, {input});
    WriteOutputFile((dir / "gpu.kernels.opt.ll").string(), result.optimized_ir, true, {input});
    WriteOutputFile((dir / "gpu.kernels.ptx").string(), result.ptx, true, {input});
    if (!result.ptxas_log.empty())
      WriteOutputFile((dir / "gpu.ptxas.log").string(), result.ptxas_log, true, {input});
    WriteOutputFile((dir / "gpu.codegen.json").string(), stats, true, {input});
    // Each kernel alone: kernels/<entry>.ll (before O3) and kernels/<entry>.ptx.
    std::filesystem::create_directories(dir / "kernels");
    for (const gpu::codegen::KernelDump& kernel : gpu::codegen::SplitKernelDumps(result)) {
      const std::filesystem::path base = dir / "kernels" / kernel.entry;
      WriteOutputFile(base.string() + ".ll", kernel.llvm_ir, true, {input});
      WriteOutputFile(base.string() + ".ptx", kernel.ptx, true, {input});
    }
  }
  std::string bytes;
  if (kind == "ptx") {
    bytes = result.ptx;
  } else if (kind == "llvm") {
    bytes = result.llvm_ir;
    if (output) {
      std::string optimized = *output;
      if (optimized.size() > 3 && optimized.ends_with(".ll"))
        optimized.resize(optimized.size() - 3);
      WriteOutputFile(optimized + ".opt.ll", result.optimized_ir, force, {input});
    }
  } else {
    bytes = gpu::SerializeArtifact(result.artifact);
  }
  if (output) {
    WriteOutputFile(*output, bytes, force, {input});
  } else {
    std::cout << bytes;
    std::cout.flush();
    if (!std::cout) return kExitFailure;
  }
  std::cerr << "gpu: " << result.kernels.size() << " kernels, "
            << result.artifact.manifest.steps.size() << " steps, arena "
            << result.artifact.manifest.arena_bytes << " bytes\n";
  return kExitOk;
}

}  // namespace cli

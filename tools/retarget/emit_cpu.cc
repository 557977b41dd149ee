// The cpu backend's --emit llvm|obj (see emit_cpu.h).
#include "tools/retarget/emit_cpu.h"

#include <iostream>

#include "targets/cpu/cpu_backend.h"
#include "tools/retarget/cli.h"

namespace cli {
namespace {

// OUT.ll -> OUT.opt.ll, OUT.o -> OUT.h; a name without that extension gets the suffix appended.
std::string ReplaceExtension(const std::string& path, const std::string& from,
                             const std::string& to) {
  if (path.size() >= from.size() && path.compare(path.size() - from.size(), from.size(), from) == 0)
    return path.substr(0, path.size() - from.size()) + to;
  return path + to;
}

}  // namespace

int EmitCpuCode(const hlo::Module& module, const std::string& input, const std::string& kind,
                const std::optional<std::string>& output, const std::string& dump_dir,
                bool force) {
  cpu::CpuBackendOptions options;
  options.dump_dir = dump_dir;
  options.skip_jit = true;
  options.keep_ir = kind == "llvm";
  options.keep_object = kind == "obj";
  std::unique_ptr<targets::Executable> executable = cpu::MakeCpuBackend(options)->Compile(module);
  std::map<std::string, std::string> artifacts = executable->artifacts();
  if (kind == "llvm") {
    if (!output) {
      std::cout << artifacts["kernels.opt.ll"];
      return kExitOk;
    }
    WriteOutputFile(*output, artifacts["kernels.ll"], force, {input});
    WriteOutputFile(ReplaceExtension(*output, ".ll", ".opt.ll"), artifacts["kernels.opt.ll"],
                    force, {input});
    return kExitOk;
  }
  if (!output) throw UsageError("--emit obj needs -o OUT.o");
  if (artifacts.count("aot_error")) throw hlo::Error(artifacts["aot_error"]);
  WriteOutputFile(*output, artifacts["kernels.o"], force, {input});
  WriteOutputFile(ReplaceExtension(*output, ".o", ".h"), artifacts["model.h"], force, {input});
  return kExitOk;
}

}  // namespace cli

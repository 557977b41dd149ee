// The NVPTX side of the GPU code generator: an LLVM TargetMachine for nvptx64-nvidia-cuda, the O3
// pipeline run with it, PTX emission, and ptxas (when the CUDA toolkit is installed) to assemble
// and measure each kernel.
//
// Guarantees: the NVPTX target is initialized once per process (thread-safe); IR that does not
// verify, an unknown sm_XX, or a PTX that ptxas rejects raises hlo::Error with the tool's message;
// nothing here aborts on bad input. Without ptxas, FindPtxas() is empty and callers skip cubins.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace gpu::codegen {

inline constexpr const char* kNvptxTriple = "nvptx64-nvidia-cuda";

// A TargetMachine for `arch` ("sm_90", "sm_80", ...). Throws hlo::Error for an arch LLVM's NVPTX
// backend does not know.
std::unique_ptr<llvm::TargetMachine> MakeNvptxTargetMachine(const std::string& arch);

// libdevice's functions are named after the C library's with this prefix (__nv_log, __nv_pow).
inline constexpr const char* kLibdevicePrefix = "__nv_";

// CUDA's libdevice bitcode: $RETARGET_LIBDEVICE, /usr/local/cuda/nvvm/libdevice/libdevice.10.bc,
// or nvvm/libdevice beside the ptxas found; empty when none is installed.
std::optional<std::string> FindLibdevice();

// Sets triple and data layout, links the libdevice functions the module calls (internalized, so
// O3 inlines them; NVVMReflect, which the NVPTX pass builder runs, resolves their __nvvm_reflect
// queries with flush-to-zero off), verifies the IR and runs LLVM's O3 pipeline tuned for
// `machine`. Throws hlo::Error naming the first __nv_ function when libdevice is needed but not
// installed.
void OptimizeNvptxModule(llvm::Module& module, llvm::TargetMachine& machine);

// The PTX text of `module` (after OptimizeNvptxModule).
std::string EmitPtx(llvm::Module& module, llvm::TargetMachine& machine);

std::string ModuleText(const llvm::Module& module);

// What `ptxas -arch=ARCH -v` reports for one .entry.
struct PtxasKernelInfo {
  int registers = 0;
  int64_t shared_bytes = 0;  // static shared memory ("smem")
  int64_t stack_bytes = 0;   // "bytes stack frame"
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
};
struct PtxasResult {
  std::string cubin;                               // the ELF ptxas wrote
  std::map<std::string, PtxasKernelInfo> kernels;  // by entry name
  std::string log;                                 // ptxas -v output
};

// ptxas from $RETARGET_PTXAS, /usr/local/cuda/bin/ptxas or PATH; empty when not installed.
std::optional<std::string> FindPtxas();
// Assembles `ptx`; throws hlo::Error with ptxas's message when it rejects it.
PtxasResult RunPtxas(const std::string& ptxas, const std::string& ptx, const std::string& arch);
// Parses ptxas -v output (exposed for tests).
std::map<std::string, PtxasKernelInfo> ParsePtxasLog(const std::string& log);

}  // namespace gpu::codegen

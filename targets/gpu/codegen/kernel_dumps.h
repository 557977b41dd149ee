// One file pair per generated kernel for `retarget compile --target gpu --dump-dir D`
// (D/kernels/<entry>.ll and D/kernels/<entry>.ptx), split from the code generator's one module.
//
// Guarantees: for every KernelRecord, in order:
//   - llvm_ir: the kernel's function as the code generator built it (before O3), alone in a
//     module with the declarations (intrinsics) and globals (array constants) it uses, the
//     NVPTX triple and data layout; it parses with llvm-as / opt.
//   - ptx: the PTX header (.version/.target/.address_size), the module's global data, and the
//     kernel's .entry; it assembles alone with `ptxas -arch=<arch>`.
// A kernel whose text cannot be found (none today) gets empty strings rather than an error:
// dumps are diagnostics and never fail a compile.
#pragma once

#include <string>
#include <vector>

#include "targets/gpu/codegen/gpu_compiler.h"

namespace gpu::codegen {

struct KernelDump {
  std::string entry;
  std::string llvm_ir;
  std::string ptx;
};

std::vector<KernelDump> SplitKernelDumps(const GpuCompileResult& result);

}  // namespace gpu::codegen

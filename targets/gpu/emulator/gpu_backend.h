// The GPU target as a targets::Backend for `retarget run --target gpu` in a process without a
// GPU: Compile runs the gpu pipeline and the NVPTX code generator (the same artifact `compile
// --target gpu -o M.rtgpu` writes for retarget-gpu-run); Run executes that artifact by host
// emulation (host_emulator.h): the kernels' LLVM IR JIT-compiled for the host with each thread of
// a warp a real thread, cuBLASLt steps computed on the host.
//
// Guarantees: results are the emulated artifact's, so a MATCHED here checks the generated
// kernels' arithmetic and the launch plan, not GPU timing; profile().counters has
// "host_emulation" = 1 (the CLI says so), "kernels" and "steps". What the code generator or the
// emulator cannot handle is an hlo::Error naming the instruction or the step.
#pragma once

#include <memory>

#include "targets/backend.h"

namespace gpu::emulator {

std::unique_ptr<targets::Backend> MakeGpuBackend();

}  // namespace gpu::emulator

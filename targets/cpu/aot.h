// Ahead-of-time use of the CPU backend's kernels: an entry point
//
//     int retarget_model_run(void** params, void** results);
//
// emitted into the kernels' LLVM module, and the C header that declares it. params[i] is the
// i-th array leaf of the entry parameters (depth first), results[j] the j-th leaf of the root
// (both row-major / the shapes' layouts, as the header's comments list). Every other buffer
// becomes a global of the object file (constants with their values), so the object needs no
// runtime library — which is why only entry computations made entirely of generated kernels
// are supported: a GEMM, control-flow or fallback thunk makes EmitModelRunner throw
// hlo::Error naming it. The runner is single-threaded and not reentrant (static buffers).
#pragma once

#include <string>

#include <llvm/IR/Module.h>

#include "targets/cpu/thunk.h"

namespace cpu {

void EmitModelRunner(llvm::Module& module, const ThunkSequence& entry);
// The C header for the runner of `entry` (shapes of every parameter and result in comments).
std::string ModelRunnerHeader(const ThunkSequence& entry, const std::string& module_name);

}  // namespace cpu

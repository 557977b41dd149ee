// The LLVM CPU backend: optimizes a module with the cpu TargetDescription's pipeline, emits one
// LLVM function per fused kernel through targets/llvm's elemental emitter, compiles them with
// ORC LLJIT for the host CPU (AVX-512 where present), and runs the entry computation as a
// sequence of thunks over one preallocated buffer (compiler/memory's buffer assignment):
// generated kernels, GEMM/convolution calls (gemm.h) with fused epilogues, and runtime routines
// for control flow (while, conditional, call), sort, gather, scatter and custom-calls.
#pragma once

#include <memory>
#include <string>

#include "targets/backend.h"

namespace cpu {

struct CpuBackendOptions {
  int threads = 0;              // 0: all cores
  std::string dump_dir;         // non-empty: write <kernel>.ll before/after optimization here
};

std::unique_ptr<targets::Backend> MakeCpuBackend(CpuBackendOptions options = {});

}  // namespace cpu

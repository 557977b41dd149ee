// The LLVM CPU backend: optimizes a module with the cpu TargetDescription's pipeline, emits one
// LLVM function per fused kernel through targets/llvm's elemental emitter, compiles them with
// ORC LLJIT for the host CPU (AVX-512 where present), and runs the entry computation as a
// sequence of thunks over one preallocated buffer (compiler/memory's buffer assignment):
// generated kernels, GEMM/convolution calls (gemm.h) with fused epilogues, and runtime routines
// for control flow (while, conditional, call), sort, gather, scatter and custom-calls.
// Artifacts of an Executable: "fallbacks.txt" (instructions run by the reference evaluator and
// why), plus the IR / object file when asked for below. Profile counters: thunk counts by kind
// ("thunks.kernel", "thunks.gemm", "thunks.fallback", ...), compile-phase times and per-thunk
// run times averaged over runs ("kernel_ms.<instruction>"; a while loop is one entry, its
// trips' thunks are not timed one by one), and how many while loops ran compiled into one
// function ("loops.compiled_runs": condition and body only small kernels, compiled_loop.h) or
// thunk by thunk ("loops.thunk_runs"), summed over runs; "thunks.while.compiled" counts the
// loops compiled.
#pragma once

#include <memory>
#include <string>

#include "targets/backend.h"

namespace cpu {

struct CpuBackendOptions {
  int threads = 0;              // 0: all cores
  std::string dump_dir;         // non-empty: write <kernel>.ll before/after optimization here
  bool keep_ir = false;         // artifacts "kernels.ll" / "kernels.opt.ll" (before / after O3)
  bool keep_object = false;     // artifacts "kernels.o" (the optimized kernels plus
                                // retarget_model_run, aot.h) and "model.h"; when the module
                                // cannot be run ahead of time, "aot_error" says why instead
  bool skip_jit = false;        // compile only (for --emit): the Executable cannot Run kernels
  std::string cache_dir;        // non-empty: compiled kernels are loaded from and kept in this
                                // directory (kernel_cache.h); not used with dump_dir, keep_ir
                                // or keep_object, which need LLVM's own output
};

std::unique_ptr<targets::Backend> MakeCpuBackend(CpuBackendOptions options = {});

}  // namespace cpu

// A while loop compiled into one LLVM function: the function calls the small generated kernels
// of its condition and body directly — they live in the same LLVM module; the scalar ones are
// inlined —
// runs every other thunk (a dynamic-update-slice into the carry, a GEMM, a nested loop, a big
// kernel that wants the thread pool) through a callback, and copies the carry's changed leaves
// with constant-size moves. A trip of a scan step or a fori_loop counter costs a few loads and
// stores instead of a thunk dispatch per kernel.
//
//   int64_t loop(uint8_t* const* condition_buffers, uint8_t* const* body_buffers, int64_t limit,
//                void* runtime, LoopCallback callback)
//   (CompiledLoopFunction, runtime_thunks.h)
//
// takes the two sequences' buffer tables (ThunkSequence::buffer_table, the carry already bound
// into both) and returns the number of trips; -1 when the condition still held after `limit`
// trips; -2 when a callback failed (it keeps the exception for the caller). The callback runs
// thunk `index` of the condition (0) or the body (1) and returns 0, or non-zero on failure.
// Guarantees: the same trips, thunks and copies in the same order as WhileThunk's thunk-by-thunk
// path, so the results are identical.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <llvm/IR/Module.h>

#include "targets/cpu/runtime_thunks.h"
#include "targets/cpu/thunk.h"

namespace cpu {

// Emits the loop of `condition` and `body` into `module` (which holds their kernels) and returns
// its symbol; nullopt when a thunk is not a kernel that runs on the calling thread, or the
// carry's copy would read a leaf another leaf overwrites (WhileThunk stages those).
std::optional<std::string> EmitCompiledLoop(llvm::Module& module, const std::string& while_name,
                                            const ThunkSequence& condition,
                                            const ThunkSequence& body);

}  // namespace cpu

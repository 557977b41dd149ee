// Compiles the kernels' LLVM module to object files on several threads: LLVM's O3 pipeline and
// code generator take nearly all of a large module's compile time (gemma3_1b: ~300 kernels,
// 7 s on one core) and work on one function at a time, so a module split into partitions of
// whole functions compiles in about 1/threads of that.
//
// Guarantees: every function and global the module defines is defined in exactly one object
// (the functions that use a private global all go to the partition that defines it, so nothing
// private is renamed or made visible — and kernels sharing one, such as the sine/cosine table,
// share a partition); the partitioning depends on the module alone, never on `threads`, so one
// module always gives the same objects; a module too small to gain from splitting is compiled
// whole (one object, no copy); a failure on any worker becomes one hlo::Error once every worker
// has stopped.
#pragma once

#include <string>
#include <vector>

#include <llvm/IR/Module.h>

namespace cpu {

// Verifies `module`, then optimizes (OptimizeModule) and emits it (EmitObjectFile) as one or more
// relocatable objects that link together (Jit's object constructor), using up to `threads`
// threads (0: one per core; the executable's run-time thread count is passed here). `module` may be changed (it is optimized in place when compiled
// whole): do not use it afterwards.
std::vector<std::string> CompileToObjects(llvm::Module& module, int threads);

// How many partitions CompileToObjects makes of a module defining `functions` functions.
int PartitionCount(int functions);

}  // namespace cpu

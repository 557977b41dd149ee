// `retarget compile FILE --target cpu --emit llvm|obj`: the CPU backend's code as files.
//
//   --emit llvm -o OUT.ll  OUT.ll holds the kernels' LLVM IR before optimization and OUT.opt.ll
//                          the same module after the O3 pipeline (without -o: the optimized IR
//                          on stdout).
//   --emit obj -o OUT.o    a relocatable object for this machine's CPU with the kernels and
//                          `int retarget_model_run(void** params, void** results)`, plus OUT.h
//                          declaring it (targets/cpu/aot.h: modules made only of generated
//                          kernels; others are an error naming the first other instruction).
// --dump-dir D also writes each kernel's IR (D/<kernel>.ll before, .opt.ll after O3).
#pragma once

#include <optional>
#include <string>

#include "hlo/ir.h"

namespace cli {

// Compiles the *unoptimized* `module` with the cpu backend and writes the files above.
// Returns the exit status. Throws hlo::Error.
int EmitCpuCode(const hlo::Module& module, const std::string& input, const std::string& kind,
                const std::optional<std::string>& output, const std::string& dump_dir,
                bool force);

}  // namespace cli

// `retarget compile FILE --target gpu -o OUT.rtgpu | --emit ptx|llvm`: the GPU code generator's
// output as files (targets/gpu/codegen/gpu_compiler.h).
//
//   -o OUT.rtgpu       the self-contained artifact (docs/gpu-runtime.md): PTX, the cubin when
//                      ptxas is installed, launch plan, arena offsets, constants.
//   --emit ptx -o OUT  the PTX of all generated kernels (stdout without -o).
//   --emit llvm -o OUT the kernels' LLVM IR before O3 (OUT) and after (OUT with .opt.ll).
// --dump-dir D also writes D/gpu.kernels.ll, D/gpu.kernels.opt.ll, D/gpu.kernels.ptx,
// D/gpu.ptxas.log (when ptxas ran) and D/gpu.codegen.json (launches, registers, spills, owners).
#pragma once

#include <optional>
#include <string>

#include "hlo/ir.h"

namespace cli {

// `module` has been through the gpu pipeline. `codegen_stats` (if set) receives the code
// generator's JSON object. Returns the exit status; throws hlo::Error.
int EmitGpuCode(const hlo::Module& module, const std::string& input, const std::string& kind,
                const std::optional<std::string>& output, const std::string& dump_dir, bool force,
                std::string* codegen_stats);

}  // namespace cli

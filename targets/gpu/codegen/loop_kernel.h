// kLoop kernels for NVPTX: one PTX .entry per fusion (or unfused elementwise instruction),
//
//     void <entry>(ptr operand0, ..., ptr output0, ...)      (all device pointers into the arena)
//
// a grid-stride loop over the output's elements around the shared elemental emitter.
//
// Guarantees:
//   - Element values are exactly the elemental emitter's (no fast-math is added here).
//   - Vectorized form (LoopKernelPlan::elements_per_thread == 4): when the output's contiguous
//     dimension is a multiple of 4, elements are 2, 4 or 8 bytes (not pred) and every output has
//     the same layout, each iteration computes 4 consecutive elements; operands with the output's
//     dims and layout are read with one 4-wide load and outputs written with one 4-wide store
//     (ld.global.v4 / st.global.v4 for 4-byte elements). This relies on every buffer being
//     aligned to 4 elements, which the artifact layout guarantees (256-byte aligned slices).
//   - Kernels are marked as entries both by the ptx_kernel calling convention and
//     nvvm.annotations; pointers are cast to the global address space (1) before use.
//   - The thread index comes from llvm.nvvm.read.ptx.sreg.{tid,ctaid,ntid,nctaid}.x; any grid
//     size is correct (the loop covers the rest), LaunchDimensions picks an efficient one.
#pragma once

#include <llvm/IR/Module.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "targets/llvm/elemental_emitter.h"

namespace gpu::codegen {

// The elemental emitter as NVPTX needs it: an f64 transcendental (log, exp, pow, tanh, atan2, ...)
// is a call to CUDA's libdevice (`__nv_log`, ...), whose bitcode OptimizeNvptxModule links in
// before O3 (nvptx_target.h); the host emulator runs the C library's function of the same name.
class GpuElementalEmitter : public llvm_codegen::ElementalEmitter {
 public:
  using ElementalEmitter::ElementalEmitter;

 protected:
  llvm::Value* EmitLibmCallF64(const std::string& name,
                               std::vector<llvm::Value*> arguments) override;
};

using GeneratorFactory = std::function<std::vector<llvm_codegen::ElementGenerator>(
    llvm_codegen::ElementalEmitter& emitter,
    std::vector<llvm_codegen::ElementGenerator> operand_loads)>;

struct LoopKernelSpec {
  std::string entry;                 // PTX symbol (unique in the module)
  std::vector<hlo::Shape> operands;  // array shapes of the first parameters
  std::vector<hlo::Shape> outputs;   // array shapes of the last parameters; equal dims
  // Operands whose buffer may be an output's (in-place reuse): not marked invariant.
  std::vector<bool> operand_may_alias_output;
};

struct LoopKernelPlan {
  int elements_per_thread = 1;  // 4 when vectorized
  int64_t work_items = 0;       // loop iterations in total (elements / elements_per_thread)
};

// The properties of the device launch dimensions are chosen for (the H200 by default).
struct DeviceLimits {
  int sm_count = 132;
  int max_threads_per_sm = 2048;
  int threads_per_block = 256;
};

// Emits the kernel into `module`; throws hlo::Error if the emitter cannot handle an operation.
LoopKernelPlan EmitLoopKernel(llvm::Module& module, const LoopKernelSpec& spec,
                              const GeneratorFactory& make_outputs);

// Blocks of DeviceLimits::threads_per_block, at most enough to fill every SM once (the grid-
// stride loop does the rest), at least one.
struct LaunchDimensions {
  uint32_t grid = 1;
  uint32_t block = 1;
};
LaunchDimensions ChooseLaunchDimensions(int64_t work_items, const DeviceLimits& device);

// An LLVM/PTX symbol from an HLO name ("fusion.3" -> "k_fusion_3"), unique in `module`.
std::string KernelSymbol(const llvm::Module& module, const std::string& hlo_name);

}  // namespace gpu::codegen

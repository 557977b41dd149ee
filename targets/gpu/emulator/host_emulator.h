// A host emulator for the GPU code generator's artifacts: `retarget run --target gpu` on a
// machine without a GPU (gpu_backend.h), and every CI run's check of generated kernels' VALUES
// against the reference interpreter.
//
// The kernels' LLVM IR (before O3, as the code generator built it) is re-targeted to the host
// and JIT-compiled: llvm.nvvm.read.ptx.sreg.* become reads of the emulated thread's ids and
// llvm.nvvm.shfl.sync.bfly.i32 a real exchange between the 32 threads of an emulated warp
// (a barrier per warp), llvm.nvvm.barrier0 (bar.sync) a barrier of the block's threads. The
// threads of a block are fibers on one OS thread (fiber_block.h), switching only at those
// barriers; a barrier some threads never reach is reported as a deadlock, not a hang. A kernel
// with no barrier and no shuffle runs its threads one after another as plain calls (one valid
// schedule of independent threads, and far cheaper: a million-trip loop of small kernels
// emulates in seconds). Shared memory (addrspace(3) globals) is host memory refilled with 0xA5 bytes before every
// block, as a GPU leaves it undefined. Each launch runs EmulatedGrid blocks one after another —
// deliberately a different grid from the artifact's, which a correct grid-stride kernel must
// not notice — with EmulatedGrid's block size, or the artifact's own (artifact_block_size; the
// corpus tests run both). cublaslt_matmul and cudnn_conv steps are computed on the host (f32 accumulation
// in the interpreter's order for f32, f16 and bf16, f64 for f64 matmuls; every epilogue, GELU as
// cuBLASLt's tanh approximation), copy steps are memcpy, while and conditional steps run their
// programs (the loop stops after GlobalLimits().max_while_iterations trips with an error naming
// it); libdevice's f64 functions are the C library's. The arena is 256-byte aligned, as device
// memory is. Collective steps are emulated_collectives.h's, meeting the other devices of a
// multi-device run; device_id steps write the emulated device's replica or partition number.
//
// What it does not check: PTX-level issues (ptxas covers those), timing, real memory
// coalescing, or anything the NVPTX backend does differently from the host backend. Reentrant
// across OS threads (the emulated thread ids, warp exchanges and block barrier are per OS
// thread), so the devices of a multi-device run emulate at once, one thread each.
#pragma once

#include <span>
#include <vector>

#include "hlo/collective_runtime.h"
#include "hlo/literal.h"
#include "targets/gpu/codegen/gpu_compiler.h"

namespace gpu::emulator {

struct EmulatedGrid {
  int blocks = 2;
  int threads_per_block = 64;  // a multiple of 32
  // Each launch's own block size from the artifact instead of threads_per_block (blocks stays):
  // kernels whose shared memory or warp count depends on it run as they will on the device.
  bool artifact_block_size = false;
};

// Runs the artifact on `inputs` (entry parameters in order; a tuple-shaped one gives its array
// leaves depth first, as the artifact's parameters "argP.I" do) and returns
// the results in .npz order (out0, out1, ...). `device`: the emulated GPU's place in a
// multi-device run (hlo::RunOnDevices), whose runtime the collectives meet through; nullptr for
// a run on one device. Throws std::runtime_error on what it cannot run.
std::vector<hlo::Literal> EmulateArtifact(const gpu::codegen::GpuCompileResult& compiled,
                                          std::span<const hlo::Literal> inputs,
                                          EmulatedGrid grid = {},
                                          const hlo::DeviceView* device = nullptr);

}  // namespace gpu::emulator

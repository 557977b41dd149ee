// The GPU code generator's driver: an optimized module (the gpu target's pipeline already run)
// -> a gpu::Artifact (docs/gpu-runtime.md) with one LLVM module -> one PTX module for all
// generated kernels, cuBLASLt matmul / cuDNN convolution steps, and the arena layout from
// compiler::AssignBuffers.
//
// What it compiles (docs/gpu-backend.md): kLoop / kInput fusions and unfused elementwise or data-
// movement instructions (loop_kernel.h, row_kernel.h), gather / reduce-window / dynamic-update-
// slice (loop kernels; update_slice_kernel.h in place), topk (topk_kernel.h), scatter
// (scatter_kernel.h), sort (sort_kernel.h), dot (matmul_lowering.h), convolution
// (conv_lowering.h), kOutput and kCustom fusions of a dot or convolution (the library step into
// a scratch slice, then the epilogue as a loop kernel, unless cuBLASLt's epilogue covers it),
// parameters, constants, tuples, get-tuple-element, bitcast. Anything else raises hlo::Error
// "not supported by the GPU backend yet: instruction NAME (OPCODE)" at the instruction.
//
// Guarantees: every arena slice is 256-byte aligned; the artifact passes gpu::ValidateArtifact
// (its ArtifactError becomes hlo::Error); with ptxas present, the PTX is assembled for the arch
// and ptxas's registers / spills / shared memory are recorded per kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/multi_device.h"
#include "targets/gpu/artifact.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu::codegen {

struct GpuCompileOptions {
  std::string arch = "sm_90";
  bool assemble = true;  // run ptxas (when installed) and embed the cubin
  DeviceLimits device;
  // The devices the program runs on (collectives' groups, replica and partition ids); unset:
  // the module's replica_count x num_partitions.
  std::optional<hlo::DeviceGrid> device_grid;
};

struct KernelRecord {
  std::string instruction;  // HLO name
  std::string entry;        // PTX symbol
  // "loop" (loop_kernel.h), "row-reduction" / "row-reduction-block" (row_kernel.h),
  // "column-reduction" (column_kernel.h), "transpose-tiled" (transpose_kernel.h), "topk",
  // "scatter", "scatter-serial", "sort", "update-slice-in-place" (the kernel headers of those
  // names)
  std::string kind;
  int elements_per_thread = 1;
  uint32_t grid = 1, block = 1;
  bool assembled = false;  // ptxas numbers below are valid
  int registers = 0;
  int64_t shared_bytes = 0, stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
};

// Who runs each instruction of the entry computation that does work.
struct OwnerRecord {
  std::string instruction;
  std::string opcode;
  std::string owner;  // "generated-kernel", "cuBLASLt", "cuDNN", "copy"
};

struct GpuCompileResult {
  gpu::Artifact artifact;
  std::string llvm_ir;       // before optimization
  std::string optimized_ir;  // after O3
  std::string ptx;
  std::string ptxas_log;  // empty without ptxas
  std::vector<KernelRecord> kernels;
  std::vector<OwnerRecord> owners;
};

// Compiles `module`, which must already have been through the gpu target's pipeline.
GpuCompileResult CompileOptimizedModule(const hlo::Module& module,
                                        const GpuCompileOptions& options = {});

// Runs the gpu target's pipeline on `module`, then CompileOptimizedModule.
GpuCompileResult CompileModule(hlo::Module& module, const GpuCompileOptions& options = {});

// {"arch", "kernels": [{instruction, entry, grid, block, elements_per_thread, registers,
//  shared_bytes, spill_store_bytes, ...}], "owners": [...], "steps", "arena_bytes"}
std::string GpuCodegenStatsJson(const GpuCompileResult& result);

}  // namespace gpu::codegen

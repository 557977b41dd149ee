// The GPU code generator's driver: an optimized module (the gpu target's pipeline already run)
// -> a gpu::Artifact (docs/gpu-runtime.md) with one LLVM module -> one PTX module for all
// generated kernels, cuBLASLt matmul steps for dots, and the arena layout from
// compiler::AssignBuffers.
//
// What it compiles (docs/gpu-backend.md): kLoop / kInput fusions and unfused elementwise or data-
// movement instructions (loop_kernel.h), dot (matmul_lowering.h), kOutput fusions of a dot (the
// matmul into a scratch slice, then the epilogue as a loop kernel), parameters, constants,
// tuples, get-tuple-element, bitcast. Anything else raises hlo::Error
// "not supported by the GPU backend yet: instruction NAME (OPCODE)" at the instruction.
//
// Guarantees: every arena slice is 256-byte aligned; the artifact passes gpu::ValidateArtifact
// (its ArtifactError becomes hlo::Error); with ptxas present, the PTX is assembled for the arch
// and ptxas's registers / spills / shared memory are recorded per kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "targets/gpu/artifact.h"
#include "targets/gpu/codegen/loop_kernel.h"

namespace gpu_codegen {

struct GpuCompileOptions {
  std::string arch = "sm_90";
  bool assemble = true;  // run ptxas (when installed) and embed the cubin
  DeviceLimits device;
};

struct KernelRecord {
  std::string instruction;  // HLO name
  std::string entry;        // PTX symbol
  std::string kind;         // "loop" (loop_kernel.h) or "row-reduction" (row_kernel.h)
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
  std::string owner;  // "generated-kernel", "cuBLASLt", "copy"
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

}  // namespace gpu_codegen

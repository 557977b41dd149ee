// How the GPU code generator lowers each opcode: the one table gpu_compiler.cc dispatches on
// (ArtifactBuilder::Lower) and targets/gpu/description.cc builds the gpu target's rules from,
// so the description cannot claim an op the code generator rejects. On hlo/ and the elemental
// emitter's opcode table only (no LLVM), so the descriptions can read it without the backend.
#pragma once

#include "hlo/opcodes.h"

namespace gpu::codegen {

enum class OpLowering {
  kAlias,           // parameter, tuple, get-tuple-element, bitcast, barrier: other buffers
  kConstant,        // bytes in the artifact
  kCopyOrKernel,    // reshape / copy: a device copy between equal byte orders, else a kernel
  kMatmul,          // dot: cuBLASLt, or a generated kernel for types it lacks
  kConvolution,     // cuDNN, or a generated kernel
  kIndexedKernel,   // gather, reduce-window, dynamic-update-slice
  kScatterKernel,
  kSortKernel,
  kTopKKernel,
  kCustomCall,      // per call target: TopK runs, the rest are refused
  kFusion,          // loop / input / output / custom fusions
  kControlFlow,     // while / conditional / call: programs of their own (gpu_compiler_control.cc)
  kCollective,      // collectives (NCCL steps), replica-id, partition-id
                    // (gpu_compiler_collectives.cc)
  kElementalKernel, // what the elemental emitter generates (targets/llvm/elemental_ops.h)
  kExpandedFirst,   // batch-norm-*: the gpu pipeline's batch-norm-expander rewrites them into
                    // elementwise kernels and reductions before code generation
  kNone,            // not supported: Compile fails naming the instruction
};

OpLowering LoweringOf(hlo::Opcode op);

}  // namespace gpu::codegen

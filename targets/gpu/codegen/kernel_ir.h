// Small NVPTX IR helpers shared by the kernel emitters (loop, row, column, transpose, topk,
// scatter, sort and in-place update-slice kernels).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <string>
#include <vector>

#include "hlo/shape.h"
#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/loop_emitter.h"

namespace gpu::codegen {

// Marks `function` as a kernel both ways LLVM's NVPTX backend recognizes (the ptx_kernel
// calling convention and an nvvm.annotations "kernel" entry).
void MarkKernel(llvm::Module& module, llvm::Function* function);

// A special register (llvm.nvvm.read.ptx.sreg.*), zero-extended to i64.
llvm::Value* ReadSpecialRegister(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id);

// Where a thread runs, as every kernel starts: threadIdx.x, blockIdx.x, blockDim.x, gridDim.x
// (i64, read in that order).
struct LaunchIds {
  llvm::Value* thread;
  llvm::Value* block;
  llvm::Value* block_size;
  llvm::Value* grid_size;
};
LaunchIds ReadLaunchIds(llvm::IRBuilder<>& b);

using llvm_codegen::EmitIf;  // loop_emitter.h

// Creates `void entry(ptr x count)` with an entry block, the builder positioned in it, and
// returns it with each parameter cast to the global address space (addrspace 1).
llvm::Function* BeginKernel(llvm::IRBuilder<>& b, llvm::Module& module, const std::string& entry,
                            size_t parameter_count, std::vector<llvm::Value*>& global_params);

// The kernels that read a fusion's operands (row, column, transpose): one read-only array per
// operand over the first operand_shapes.size() parameters of BeginKernel (the output is last).
std::vector<llvm_codegen::IrArray> ReadOnlyOperandArrays(
    const std::vector<llvm::Value*>& global_params, const std::vector<hlo::Shape>& operand_shapes);

}  // namespace gpu::codegen

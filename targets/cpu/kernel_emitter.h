// Emission of the CPU backend's generated kernels: LLVM functions
//
//     void <name>(void** buffers, int64_t begin, int64_t end)
//
// that compute the elements of their outputs whose outermost *physical* dimension index lies in
// [begin, end), so a thread pool can split the work by rows. buffers[0..n) are the operands,
// buffers[n..) the outputs. The body is a loop nest in physical order (the innermost loop walks
// the contiguous dimension) around the elemental emitter's per-element IR, which LLVM's loop
// vectorizer turns into SIMD code.
//
// Guarantees: element values are exactly the elemental emitter's (no fast-math is added here);
// outputs are written once per element; a scalar output is one iteration ([0, 1)).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "hlo/ir.h"
#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/loop_emitter.h"

namespace cpu {

// Builds the output generators of a kernel from its operand generators (loads from buffers).
using GeneratorFactory = std::function<std::vector<llvm_codegen::ElementGenerator>(
    llvm_codegen::ElementalEmitter& emitter,
    std::vector<llvm_codegen::ElementGenerator> operand_loads)>;

struct LoopKernelSpec {
  std::string name;
  std::vector<hlo::Shape> operands;  // array shapes (with layouts) of buffers[0..n)
  std::vector<hlo::Shape> outputs;   // array shapes of buffers[n..); all with the same dims
                                     // and layout (the loop nest follows outputs[0])
  // Optional (loop kernels): iterate this shape instead of outputs[0]'s and store at the index
  // shifted by `offset` along `offset_dim` — one operand of a concatenate written into its
  // slice of the output. Generators see the unshifted index.
  std::optional<hlo::Shape> iteration;
  int64_t offset_dim = -1;
  int64_t offset = 0;
};

// Emits the kernel into `module`. Throws hlo::Error if the emitter cannot handle an operation.
void EmitLoopKernel(llvm::Module& module, const LoopKernelSpec& spec,
                    const GeneratorFactory& make_outputs);

// A tile kernel for GEMM epilogues:
//
//     void <name>(void** buffers, int64_t row, int64_t rows, int64_t col, int64_t cols)
//
// computes the outputs' elements in the block [row, row+rows) x [col, col+cols) of the output
// viewed as a matrix (all dimensions but the last) x (last dimension). Outputs must have the
// default (row-major) layout and equal dims.
void EmitTileKernel(llvm::Module& module, const LoopKernelSpec& spec,
                    const GeneratorFactory& make_outputs);

// The prologue every CPU kernel starts with: `void NAME(ptr buffers, i64 x index_arguments)`,
// nounwind, `buffers` noalias, the builder in a new entry block, and one IrArray per buffer slot:
// the operands (read-only) in buffers[0..n), then the outputs.
struct KernelPrologue {
  llvm::Function* function = nullptr;
  std::vector<llvm_codegen::IrArray> operands;
  std::vector<llvm_codegen::IrArray> outputs;
};
KernelPrologue BeginKernelFunction(llvm::IRBuilder<>& b, llvm::Module& module,
                                   const std::string& name,
                                   const std::vector<hlo::Shape>& operands,
                                   const std::vector<hlo::Shape>& outputs, int index_arguments);
// One generator per operand that loads its element at the index.
std::vector<llvm_codegen::ElementGenerator> OperandLoads(
    llvm::IRBuilder<>& b, const std::vector<llvm_codegen::IrArray>& operands);

// for (i = lo; i < hi; ++i) body(i) as IR (llvm_codegen::EmitCountedLoop with step 1).
inline void EmitForLoop(llvm::IRBuilder<>& b, llvm::Value* lo, llvm::Value* hi,
                        const std::string& name, const std::function<void(llvm::Value*)>& body) {
  llvm_codegen::EmitCountedLoop(b, lo, hi, b.getInt64(1), name, body);
}

using llvm_codegen::EmitIf;  // loop_emitter.h

// The kernels that may update an operand in place (scatter, dynamic-update-slice): the result
// starts as a byte copy of `from`, skipped when the two are one buffer. Same shape and layout.
void EmitCopyUnlessInPlace(llvm::IRBuilder<>& b, const llvm_codegen::IrArray& from,
                           const llvm_codegen::IrArray& to, const hlo::Shape& shape);

// The number of rows (outer physical dimension extent; 1 for a scalar) a kernel over `shape`
// iterates, and the elements per row.
int64_t OuterRows(const hlo::Shape& shape);
int64_t ElementsPerRow(const hlo::Shape& shape);

// A loop kernel (EmitLoopKernel) splits its iteration at the most major physical dimension
// whose extent is not 1 (leading size-1 dimensions, as in JAX's f32[1,4096], would otherwise
// leave one row and one thread for the whole kernel): that dimension's level in major-first
// order (0 when every extent is 1), and the rows and elements per row of that split.
size_t LoopKernelSplitLevel(const hlo::Shape& iteration);
int64_t LoopKernelRows(const hlo::Shape& iteration);
int64_t LoopKernelElementsPerRow(const hlo::Shape& iteration);

// An LLVM symbol name made from an HLO name ("fusion.3" -> "k_fusion_3"), unique in `module`;
// `prefix` names what it is ("k_" a kernel, "loop_" a compiled loop).
std::string KernelSymbol(const llvm::Module& module, const std::string& hlo_name,
                         const std::string& prefix = "k_");

}  // namespace cpu

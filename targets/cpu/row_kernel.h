// Row kernels: one LLVM function per row range for input fusions whose reductions run along
// the minor-most physical dimensions of the output (softmax, layer norm):
//
//     void <name>(void** buffers, int64_t begin, int64_t end)
//
// computes, for each flattened row r in [begin, end) (the major physical dimensions that are
// not reduced, row-major among themselves), first every reduction of the row once (in order,
// each an inner loop the vectorizer handles, its result kept in a register), then the outputs'
// elements of that row. No scratch buffer, no second pass over memory, one thread-pool launch.
//
// Guarantees: element values are exactly the generators' (no fast-math added here); outputs
// are written once per element; buffers[0..n) are the operands, buffers[n..) the outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "hlo/ir.h"
#include "targets/llvm/elemental_emitter.h"

namespace cpu {

struct RowKernelSpec {
  std::string name;
  std::vector<hlo::Shape> operands;  // array shapes of buffers[0..n)
  std::vector<hlo::Shape> outputs;   // same dims and layout; the loop nest follows outputs[0]
  int64_t column_dims = 1;           // how many minor-most physical dims form one row
};

// A max/min reduction over the row that the kernel emits itself: the f32 values compared as
// integer order keys (smax/smin, which vectorize) plus an OR of "is NaN" (NaN propagates).
// Exact, so the vectorizer may reorder it. The elemental emitter's bf16 max rounds its
// accumulator every step, which keeps LLVM from vectorizing it; a max of bf16 (or f32) values
// needs no rounding.
enum class RowCombiner { kMaximum, kMinimum };
struct RowReduction {
  llvm_codegen::ElementGenerator whole;  // the reduce's generator (used when no combiner)
  std::optional<RowCombiner> combiner;
  llvm_codegen::ElementGenerator input;  // at the output index (with combiner)
  llvm_codegen::ElementGenerator init;   // scalar (with combiner)
};

// What a row kernel computes: reduction k is evaluated once per row (`whole` at the index of
// the row's first element, column dims 0); its value is in `row_values[k]` before reduction
// k+1 and the outputs are generated, so generators may read row_values.
struct RowGenerators {
  std::vector<RowReduction> reductions;
  std::vector<llvm_codegen::ElementGenerator> outputs;
};
using RowGeneratorFactory = std::function<RowGenerators(
    llvm_codegen::ElementalEmitter& emitter, std::vector<llvm_codegen::ElementGenerator> loads,
    const std::vector<llvm::Value*>& row_values)>;

// Emits the kernel into `module`. Throws hlo::Error if a generator cannot be emitted.
void EmitRowKernel(llvm::Module& module, const RowKernelSpec& spec,
                   const RowGeneratorFactory& make);

// Rows and elements per row of a row kernel over `shape` with `column_dims` minor dims per row.
int64_t RowCount(const hlo::Shape& shape, int64_t column_dims);
int64_t RowLength(const hlo::Shape& shape, int64_t column_dims);

}  // namespace cpu

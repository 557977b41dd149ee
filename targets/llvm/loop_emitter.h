// The counted loop every backend wraps around element generators: one definition for the CPU's
// loop nests and the GPU's strided (grid-stride, lane-stride) loops.
//
// Guarantees: `for (i = start; i < end; i += step) body(i)` with i an i64 PHI, the increment
// marked nuw/nsw (indices never wrap; it lets LLVM's vectorizer and SCEV reason about the trip
// count), the body's blocks free to contain control flow of their own (the latch branches from
// wherever the body left the builder), and the builder positioned after the loop on return.
// New blocks are appended to the current function.
#pragma once

#include <functional>
#include <string>

#include <llvm/IR/IRBuilder.h>

namespace llvm_codegen {

void EmitCountedLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end,
                     llvm::Value* step, const std::string& name,
                     const std::function<void(llvm::Value*)>& body);

// `if (condition) then();`: blocks `name` and `name.after` appended to the current function,
// the builder left at the start of the latter.
void EmitIf(llvm::IRBuilder<>& b, llvm::Value* condition, const std::string& name,
            const std::function<void()>& then);

}  // namespace llvm_codegen

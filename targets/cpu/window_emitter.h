// Element generators the CPU backend adds to the elemental emitter's set: reduce-window (max
// and average pooling, cumulative sums), which targets/llvm leaves to backends.
//
// Guarantees: XLA's semantics for one input array and its scalar init value: the window of
// output index o along dimension d covers padded, base-dilated input positions
// o*stride + w*window_dilation - pad_lo for w in [0, size); positions in the padding or between
// base-dilated elements are skipped (as XLA's evaluator and ours do); the accumulator starts at
// the init value and combines in window order (row-major over the window) through the
// reduce-window's to_apply, emitted by ElementalEmitter::EmitScalarComputation. Loads never
// leave the operand: a skipped position loads index 0 and discards the value.
#pragma once

#include "hlo/ir.h"
#include "targets/llvm/elemental_emitter.h"

namespace cpu {

// True for the reduce-windows MakeReduceWindowGenerator handles (one array input).
bool CanGenerateReduceWindow(const hlo::Instruction& reduce_window);

llvm_codegen::ElementGenerator MakeReduceWindowGenerator(
    llvm_codegen::ElementalEmitter& emitter, const hlo::Instruction& reduce_window,
    llvm_codegen::ElementGenerator input, llvm_codegen::ElementGenerator init);

}  // namespace cpu

// Reduce-window (max pooling, window sums) on the accelerator: the result is a reduction over
// the window's offsets, and for each offset the inputs it reads form a strided box of the
// operand (start = the offset less the low padding, strides = the window strides). Per tile of
// the result, the vector unit fills an accumulator with the init value, the load engine brings
// each offset's box into a second buffer (filled with the init value first where padding
// leaves part of the tile without an input), and vmax / vadd folds it in, offsets in
// row-major order (the interpreter's order, so sums round alike); the store engine writes the
// tile.
//
// Guarantees: EmitReduceWindow takes a reduce-window of one operand with a constant init
// whose combiner VectorReducerOf names (a max from -inf, a sum from 0) on a type the vector
// unit adds, any window sizes, strides and edge padding, no dilation or reversal, default
// layouts; tiles are ranges of the result's first dimension longer than one, two tile buffers
// in half the UB, alternating halves. False (the reason in `why`) otherwise.
#pragma once

#include <cstdint>
#include <string>

#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"

namespace systolic::lowering {

bool EmitReduceWindow(ProgramBuilder& builder, const hlo::Instruction& reduce_window,
                      const ArchConfig& config, uint64_t operand, uint64_t result,
                      std::string* why);

}  // namespace systolic::lowering

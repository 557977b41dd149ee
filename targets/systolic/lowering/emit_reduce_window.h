// Window folds on the accelerator: reduce-window (max pooling, window sums) and depthwise
// convolutions. Both reduce over a window's taps, and for each tap the inputs it reads form a
// strided box of the operand (start = the tap less the low padding, strides = the window
// strides, clipped to the outputs whose input lies inside the operand). Per tile of the result
// the vector unit fills an accumulator, the load engine brings each tap's box into a second
// buffer (filled first where padding leaves part of the tile without an input: with the init
// value, or zeros for a convolution), and the vector unit folds it in — vmax / vadd for a
// reduce-window; for a depthwise convolution the box converted to f32, times the tap's
// per-channel weights (vbcast down the tile), added — taps in row-major order, the
// interpreter's order, so sums round alike; a convolution's f32 sums are converted to its
// result type once. The store engine writes the tile.
//
// Guarantees: EmitReduceWindow takes a reduce-window of one operand with a constant init whose
// combiner VectorReducerOf names (a max from -inf, a sum from 0) on a type the vector unit
// adds; EmitDepthwiseConv a b01f_01io->b01f convolution with one input channel per group and
// as many groups as channels, float types, f32 or its input type as the result; any window
// sizes, strides and non-negative edge padding, no dilation or reversal, default layouts.
// Tiles are ranges of one dimension of the result (the first whose slices fit) at one index
// of those before it, alternating halves of the UB. False (the reason in `why`) otherwise.
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

// Whether `conv` is a depthwise convolution EmitDepthwiseConv takes (else the reason).
bool IsDepthwiseConv(const hlo::Instruction& conv, std::string* why);

bool EmitDepthwiseConv(ProgramBuilder& builder, const hlo::Instruction& conv,
                       const ArchConfig& config, uint64_t input, uint64_t kernel,
                       uint64_t result, std::string* why);

}  // namespace systolic::lowering

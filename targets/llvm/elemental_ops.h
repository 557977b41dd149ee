// Which opcodes the elemental emitter (elemental_emitter.h) generates: a table of its own, on
// hlo/ alone, so that what a backend runs can be asked without linking LLVM (the GPU target's
// description reads it through targets/gpu/codegen/op_lowering.h).
#pragma once

#include "hlo/opcodes.h"

namespace llvm_codegen {

// True for the opcodes MakeGenerator handles (elementwise math, compare/select/clamp, convert,
// bitcast-convert, broadcast, reshape, bitcast, transpose, slice, concatenate, pad, iota,
// reverse, dynamic-slice, reduce, reduce-precision, constant, parameter, tuple/gte inside
// fusions). A backend emits everything else itself (dot, convolution, sort, scatter, ...).
bool FusibleInEmitter(hlo::Opcode opcode);

}  // namespace llvm_codegen

// dot -> one cuBLASLt matmul step (gpu::MatmulCall, row-major): which HLO dots map, and how.
//
// Guarantees: a dot maps when its operands and result have the default (row-major) layout, one
// element type among f32/f16/bf16, batch dimensions leading on both sides in the same order,
// exactly one contracting dimension and at most one free dimension per operand. The returned
// call computes exactly the dot's result (alpha 1, beta 0, no epilogue). Otherwise the reason
// is returned and nothing is produced.
#pragma once

#include <string>
#include <variant>

#include "hlo/ir.h"
#include "targets/gpu/artifact.h"

namespace gpu::codegen {

// The matmul for `dot` reading a/b and writing d, or why it cannot be one.
std::variant<gpu::MatmulCall, std::string> LowerDotToMatmul(const hlo::Instruction& dot,
                                                            gpu::Slice a, gpu::Slice b,
                                                            gpu::Slice d);

}  // namespace gpu::codegen

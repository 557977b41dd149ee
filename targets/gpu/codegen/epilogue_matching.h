// Which kOutput fusions around a dot become ONE cuBLASLt matmul with an epilogue
// (CUBLASLT_EPILOGUE_BIAS / _RELU / _RELU_BIAS / _GELU / _GELU_BIAS) instead of a matmul plus an epilogue kernel.
//
// Guarantees: a match computes what the fused computation computes, with one documented
// exception: HLO maximum propagates NaN while cuBLASLt's ReLU is max(x, 0) on the accumulator
// (a NaN from the matmul may become 0 on the device). Recognized roots, with D the dot (not
// batched, result rank 2, result type = root type) and b a rank-1 fusion parameter broadcast
// along the columns (dimensions={1}):
//     D                                 -> none
//     maximum(D, broadcast(+0))         -> relu        (either operand order)
//     add(D, b)                         -> bias        (either operand order)
//     maximum(add(D, b), broadcast(+0)) -> relu_bias
//     gelu(x), x = D                    -> gelu
//     gelu(x), x = add(D, b)            -> gelu_bias
// where gelu(x) is the tanh approximation cuBLASLt computes, as jax.nn.gelu(approximate=True)
// writes it: x · (0.5 · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))), every multiply and add in
// either operand order, x³ as x·(x·x) or power(x, 3), constants within f32 rounding. The exact
// (erf) GELU is not matched. Anything else: nullopt.
#pragma once

#include <cstdint>
#include <optional>

#include "hlo/ir.h"
#include "targets/gpu/artifact.h"

namespace gpu::codegen {

struct MatchedEpilogue {
  gpu::Epilogue epilogue = gpu::Epilogue::kNone;
  int64_t bias_parameter = -1;  // the fusion operand holding the bias (bias epilogues only)
};

std::optional<MatchedEpilogue> MatchCublasLtEpilogue(const hlo::Computation& fused,
                                                     const hlo::Instruction& dot);

}  // namespace gpu::codegen

// f32-only transcendentals for values that are rounded to bf16/f16 afterwards (or kept in f32
// under a backend's excess-precision rule): straight-line IR with no f64 step, so a loop over
// them vectorizes at the full f32 width (16 lanes on AVX-512 instead of 8 for llvm_math.h's
// f64-evaluated versions).
//
// Accuracy: within 3 f32 ulp of e^x for normal results (a numpy emulation of the same
// operation sequence over 5.5M points of [-87.3, 88.7] measured at most 2.71 ulp with fused
// multiply-adds, 2.96 without), i.e. far below a bf16 ulp (2^-8 relative): for every bf16 input
// in [-110, 95] the result rounds to the correctly rounded bf16 or one bf16 ulp next to it
// (tests/cpu/cpu_excess_precision_test.cc). Overflow gives +inf, underflow gives scaled
// denormals and then +0, NaN stays NaN, +inf gives +inf and -inf gives +0. Use llvm_math.h
// where an f32 result must be within 1 ulp.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace llvm_codegen::math {

// e^x for an f32 `x` (`float` type, scalar or vector), f32 result.
llvm::Value* EmitExpF32Fast(llvm::IRBuilder<>& b, llvm::Value* x);

// tanh x for an f32 `x`, f32 result: every f32 tanh of the elemental emitter (the f64-evaluated
// version cost ~4x as much, and a scan of small tanh steps is a common loop body). Within 2 f32
// ulp of the correctly rounded value (tests/llvm/llvm_math_test.cc sweeps [-20, 20] and tiny
// values; a numpy emulation measured 0.77 ulp below |x| = 0.625 and 1.6 above). ±0 and NaN are
// kept, ±inf gives ±1.
llvm::Value* EmitTanhF32Fast(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace llvm_codegen::math

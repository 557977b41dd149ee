// f32 transcendentals evaluated in f32: straight-line IR with no f64 step, so a loop over them
// vectorizes at the full f32 width (16 lanes on AVX-512 instead of 8 for llvm_math.h's
// f64-evaluated functions). They are the elemental emitter's f32 exp, log, tanh, logistic on
// every backend, and erf: the functions a memory-bound kernel (softmax, log-softmax, a gated
// activation, GELU) meets, where the f64 route made the kernel compute-bound.
//
// Measured max error in f32 ulp against the C library evaluated in double and rounded to f32
// (tests/llvm/llvm_math_test.cc prints these and asserts them):
//
//   function   max ulp   swept (values)
//   exp        1         [-104, 89] and tiny ±x (205k)
//   log        1         1000 per binade of [2^-149, 2^128), denormals included (277k)
//   tanh       1         [-20, 20] and tiny ±x (205k)
//   logistic   2         [-88, 100] (200k; below -88.72 it returns +0, XLA's definition)
//   erf        1         [-5, 5], tiny ±x (206k)
//
// exp overflows to +inf, underflows through scaled denormals to +0; NaN stays NaN, +inf gives
// +inf and -inf +0.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace llvm_codegen::math {

// e^x for an f32 `x` (`float` type, scalar or vector), f32 result.
llvm::Value* EmitExpF32Fast(llvm::IRBuilder<>& b, llvm::Value* x);

// log x for an f32 `x`, f32 result: m·2^e with m reduced to [sqrt(1/2), sqrt 2), log(1 + f) by
// a degree-10 polynomial, e·ln 2 in two parts. Denormals are scaled first; +inf gives +inf,
// ±0 gives -inf, x < 0 and NaN give NaN.
llvm::Value* EmitLogF32Fast(llvm::IRBuilder<>& b, llvm::Value* x);

// erf x for an f32 `x`, f32 result: x · P(x²) below |x| = 1, 1 - e^(-x²) · R(|x|) up to 3.92
// (R picked per lane from two fits), ±1 beyond; ±0 and NaN kept.
llvm::Value* EmitErfF32Fast(llvm::IRBuilder<>& b, llvm::Value* x);

// logistic x = 1 / (1 + e^-x) in f32 with the exp above; +0 once e^-x overflows (XLA's
// definition), NaN stays NaN.
llvm::Value* EmitLogisticF32Fast(llvm::IRBuilder<>& b, llvm::Value* x);

// tanh x for an f32 `x`, f32 result (the f64-evaluated version cost ~4x as much, and a scan of
// small tanh steps is a common loop body). ±0 and NaN are kept, ±inf gives ±1.
llvm::Value* EmitTanhF32Fast(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace llvm_codegen::math

// Portable f32 transcendentals as straight-line LLVM IR: no calls, no branches (one small
// constant table for sin/cos/tan of huge arguments), so a loop over them vectorizes and the same
// IR runs on the CPU and the GPU (checked with llc for nvptx64 sm_90).
//
// Method: the f32 argument is widened to f64 (exact), reduced and evaluated with polynomials in
// f64, and rounded to f32 once at the end. The f64 intermediate error is far below an f32 ulp,
// so results are within about one ulp of the correctly rounded value, including the overflow,
// underflow and denormal ranges (the final fptrunc rounds denormals correctly). IEEE special
// values (NaN, ±inf, ±0) follow C's <cmath> (C99 Annex F) and are selected explicitly.
//
// Measured max error in f32 ulp against the C library evaluated in double and rounded to f32
// (tests/llvm/llvm_math_test.cc prints these; it asserts <= 1 ulp, tan <= 2). exp, log, tanh,
// logistic and erf are llvm_math_fast.h's, evaluated in f32 (the table there):
//
//   function   max ulp   swept (values)
//   log1p      0         (-1, 1], [2^-30, 2^100), tiny ±x (171k)
//   expm1      0         [-20, 89], tiny ±x (206k)
//   sin, cos   0         [-1e5, 1e5], [-10, 10], tiny ±x (306k); 300 per binade of
//                        ±[2^15, 2^128) (68k); 200k random finite f32 bit patterns
//   tan        0         the first two sets of sin
//   atan2      0         ±(2^-100 .. 2^100) x ±(2^-100 .. 2^100), 3 per binade (1.44M pairs)
//   pow        0         x in [2^-20, 2^14), y in [-40, 40] (260k)
//   cbrt       0         500 per binade, both signs, denormals included (277k)
//
// sin/cos/tan read one 64-byte constant table (the bits of 2/pi) for |x| >= 2^17.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace llvm_codegen::math {

// Each takes f32 value(s) (`float` type) and returns an f32 value.
llvm::Value* EmitExpm1F32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitLog1pF32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitSinF32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitCosF32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitTanF32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitAtan2F32(llvm::IRBuilder<>& b, llvm::Value* y, llvm::Value* x);
llvm::Value* EmitPowF32(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* EmitCbrtF32(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace llvm_codegen::math

// Excess precision inside a fusion (XLA's default, xla_allow_excess_precision): a copy of a
// fused computation in which every bf16/f16 value is carried in f32 between the fusion's ops
// and rounded to its type only where it leaves the fusion (the outputs) or enters an op that
// needs the narrow type itself (reduce, gather, bitcast-convert, ...).
//
// Guarantees:
//   - Parameters keep their types and numbers; the result has the fused root's shape.
//   - Elementwise float ops whose result is bf16/f16 compute in f32 on f32 operands; a convert
//     from a float type to bf16/f16 becomes a convert to f32 (the rounding it stood for is the
//     excess precision); data movement (broadcast, reshape, bitcast, transpose, slice, reverse,
//     concatenate, pad, copy) moves f32 values. Everything else is cloned unchanged with its
//     narrow operands rounded back first.
//   - Except a convert from a wider float to bf16/f16 whose every user converts it back to a
//     wider float (`x.astype(bf16).astype(f32)`): that rounding is what the program asked
//     for, and it is kept.
//   - A narrow reduce whose combiner is max / min / add of its two parameters reduces the f32
//     values with an f32 copy of the combiner (max and min are unchanged by this: rounding is
//     monotonic; a sum is more accurate).
//   - A narrow divide by a broadcast, x / broadcast(s), becomes x * broadcast(1 / s) in f32
//     (one division per broadcast element, softmax's and layer norm's per-row divisor; the
//     product is within an f32 ulp of the quotient, far below the bf16 rounding after it;
//     the one exception is a divisor below 2^-128 in magnitude, whose reciprocal overflows to
//     inf, so a finite quotient may come out infinite).
//   - The results differ from the interpreter's (which rounds after every op) by about one
//     ulp of the narrow type per output, within the bf16/f16 comparison tolerance (checked by
//     tests/cpu/cpu_excess_precision_test.cc and the corpus tests); not bit-identical.
//   - `widened` lists the new instructions that stand for a narrow op: their values are
//     rounded to bf16/f16 in the end, so a cheaper f32 approximation (llvm_math_fast.h) is fine.
// It does not touch f32/f64 ops and returns nullopt when the computation has no narrow float
// value (nothing to gain).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "hlo/ir.h"

namespace cpu {

struct WidenedComputation {
  std::unique_ptr<hlo::Computation> computation;
  std::set<const hlo::Instruction*> widened;
  // f32 copies of the narrow reductions' combiners (max / min / add of the two parameters),
  // called by `computation`.
  std::vector<std::unique_ptr<hlo::Computation>> combiners;
};

std::optional<WidenedComputation> WidenNarrowFloats(const hlo::Computation& fused);

}  // namespace cpu

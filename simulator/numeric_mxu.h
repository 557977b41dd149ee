// The matrix unit's arithmetic, defined once: what one processing element computes per cycle and
// how a column's sum lands in the accumulators. The functional model (functional_mxu.cc) and the
// processing-element reference model (pe_reference.cc) both call these, so their results agree
// bit for bit whenever they accumulate in the same order -- which they do by construction:
//
//   column sum  s = (((+0 + a[0]*w[0]) + a[1]*w[1]) + ...) + a[k-1]*w[k-1]   (increasing k)
//   accumulator acc = (acc flag) ? acc_old + s : s
//
//   s8   x s8   -> s32: products exact, sums wrap (two's complement).
//   bf16 x bf16 -> f32: products exact in f32 (8 x 8 significant bits), each sum rounded to f32.
//   f32  x f32  -> f32: product rounded to f32, then the sum rounded (no fused multiply-add).
//
// Operands and accumulator words travel as raw bit patterns (uint32): s8 / bf16 in the low bits,
// s32 / f32 as all 32 bits.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "simulator/numeric_types.h"
#include "simulator/isa/isa.h"

namespace simulator {

// The dtypes the matrix unit multiplies (isa.def: mxu.ldw's dtype field).
bool IsMxuDtype(systolic::Dtype dtype);
// The accumulator dtype of an MXU input dtype: s8 -> s32, bf16/f32 -> f32.
systolic::Dtype MxuAccumulatorDtype(systolic::Dtype input);

// One multiply-accumulate: sum + a * w. Out of line, in a file compiled with -ffp-contract=off
// (simulator/CMakeLists.txt), so no caller can get a fused multiply-add's different rounding.
uint32_t MxuMac(systolic::Dtype dtype, uint32_t sum, uint32_t a, uint32_t w);
// The accumulator update after a column sum leaves the array.
uint32_t MxuAccumulate(systolic::Dtype dtype, bool accumulate, uint32_t old_value,
                       uint32_t column_sum);
// acc[j] = MxuAccumulate(dtype, true, acc[j], column_sums[j]) for every j (a whole accumulator
// row at once). acc and column_sums have the same length.
void MxuAccumulateRow(systolic::Dtype dtype, std::span<uint32_t> acc,
                      std::span<const uint32_t> column_sums);
// The column sum's start value: +0 (s32 0 and f32 +0.0 are both all-zero bits).
inline constexpr uint32_t kMxuZeroSum = 0;

// out[i][j] = the column sum over k of a[i][kk] * w[kk][j] (row-major m x k and k x n),
// accumulated as above -- bit-identical to chaining MxuMac, but decoded once and vectorizable.
// Returns m x n accumulator words. (numeric_mxu_gemm.cc)
std::vector<uint32_t> MxuGemm(systolic::Dtype dtype, int64_t m, int64_t k, int64_t n,
                              std::span<const uint32_t> a, std::span<const uint32_t> w);
// The same GEMM on operands as they lie in memory: a holds m x k and w k x n little-endian
// elements of `dtype` (DtypeBytes each, no padding); writes the m x n accumulator words to out.
// Bit-identical to MxuGemm on the elements' LoadBits patterns; the functional model's path, which
// gathers UB bytes and never decodes them one element at a time.
void MxuGemmElements(systolic::Dtype dtype, int64_t m, int64_t k, int64_t n, const uint8_t* a,
                     const uint8_t* w, uint32_t* out);

}  // namespace simulator

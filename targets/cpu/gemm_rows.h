// GEMMs with few rows against a B stored transposed: C[m, n] = A[m, k] · B[n, k]ᵀ for
// m <= kTransposedRowsMaxM, B read in place as n contiguous rows of k elements, f32 or bf16.
// A decoder's logits are this shape (one token against a 262,144 x 1,152 bf16 embedding), and
// so are a short prompt's projections against weights stored [n, k]: the blocked GEMM would
// first widen all of B into an f32 copy twice its size and pack it, only to read each element
// m times. Here every row of B is read once, widened in registers, into m accumulators of 16
// lanes (m vector registers).
//
// Guarantees: C is written completely (m x n at c, leading dimension ldc); each element sums its
// k products in 16 lanes (lane l takes p = l, l + 16, ...), the lanes then added pairwise — an
// order other than the blocked GEMM's, within the same f32 tolerance; the epilogue runs once per
// column chunk of all m rows, chunks disjoint and covering C.
#pragma once

#include <cstdint>

#include "targets/cpu/gemm.h"

namespace cpu {

constexpr int64_t kTransposedRowsMaxM = 16;

struct TransposedRowsArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;  // m x k, leading dimension lda
  int64_t lda = 0;
  const void* b = nullptr;   // n x k row-major: float, or bf16 bits (uint16_t) when b_bf16
  bool b_bf16 = false;
  float* c = nullptr;        // m x n, leading dimension ldc
  int64_t ldc = 0;
  GemmEpilogue epilogue;     // optional, per column chunk
};

void GemmTransposedRows(const TransposedRowsArgs& args, ThreadPool* pool);

}  // namespace cpu

// The matrix-multiply kernels behind the evaluator's dot (internal to hlo/).
//
// Guarantees: C(m, n) = sum over k of A(m, k) * B(k, n), with the products of every output
// added one by one in increasing k order, starting from zero — so the result does not depend
// on which kernel or blocking is chosen. Operands are strided views, so the caller only repacks
// an operand when neither of its two dimensions is contiguous; the kernel picked vectorizes
// over whichever output index is contiguous in memory:
//   B(k, n) contiguous in n      -> rows of 4 x columns tile, inner loop over n
//   A(m, k) contiguous in m      -> the same kernel on the transposed problem (C^T = B^T A^T)
//   both contiguous in k         -> 4 x 4 blocks of independent sequential dot products
// Acc is float, double or uint64_t (wrapping integer accumulation).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hlo::eval::rc {

// Element (r, c) of a view is data[r * row_stride + c * col_stride].
template <typename Acc>
struct MatrixView {
  const Acc* data = nullptr;
  int64_t row_stride = 0, col_stride = 0;
  MatrixView Transposed() const { return {data, col_stride, row_stride}; }
};

namespace gemm_detail {

// B has unit column stride. Tiles of kRows x kColumns outputs accumulate in a local buffer.
template <typename Acc>
void GemmContiguousN(MatrixView<Acc> a, MatrixView<Acc> b, Acc* c, int64_t c_row_stride,
                     int64_t c_col_stride, int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kRows = 4;
  constexpr int64_t kColumns = 512;
  std::vector<Acc> tile(static_cast<size_t>(kRows * kColumns));
  for (int64_t j0 = 0; j0 < n; j0 += kColumns) {
    const int64_t jn = std::min(kColumns, n - j0);
    for (int64_t i0 = 0; i0 < m; i0 += kRows) {
      const int64_t rows = std::min(kRows, m - i0);
      std::fill(tile.begin(), tile.end(), Acc{0});
      Acc* __restrict t0 = tile.data();
      Acc* __restrict t1 = t0 + kColumns;
      Acc* __restrict t2 = t1 + kColumns;
      Acc* __restrict t3 = t2 + kColumns;
      const Acc* arow = a.data + i0 * a.row_stride;
      if (rows == kRows) {
        for (int64_t p = 0; p < k; ++p) {
          const Acc* ap = arow + p * a.col_stride;
          const Acc a0 = ap[0], a1 = ap[a.row_stride], a2 = ap[2 * a.row_stride],
                    a3 = ap[3 * a.row_stride];
          const Acc* __restrict brow = b.data + p * b.row_stride + j0;
          for (int64_t j = 0; j < jn; ++j) {
            const Acc bv = brow[j];
            t0[j] += a0 * bv;
            t1[j] += a1 * bv;
            t2[j] += a2 * bv;
            t3[j] += a3 * bv;
          }
        }
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          Acc* __restrict t = tile.data() + r * kColumns;
          for (int64_t p = 0; p < k; ++p) {
            const Acc av = arow[r * a.row_stride + p * a.col_stride];
            const Acc* __restrict brow = b.data + p * b.row_stride + j0;
            for (int64_t j = 0; j < jn; ++j) t[j] += av * brow[j];
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        Acc* out = c + (i0 + r) * c_row_stride + j0 * c_col_stride;
        const Acc* t = tile.data() + r * kColumns;
        for (int64_t j = 0; j < jn; ++j) out[j * c_col_stride] = t[j];
      }
    }
  }
}

// A(m, k) and B(k, n) both contiguous in k: blocks of 4 x 4 independent dot products.
template <typename Acc>
void GemmContiguousK(MatrixView<Acc> a, MatrixView<Acc> b, Acc* c, int64_t c_row_stride,
                     int64_t c_col_stride, int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kBlock = 4;
  for (int64_t i0 = 0; i0 < m; i0 += kBlock) {
    const int64_t rows = std::min(kBlock, m - i0);
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t cols = std::min(kBlock, n - j0);
      Acc acc[kBlock][kBlock] = {};
      const Acc* ar[kBlock];
      const Acc* bc[kBlock];
      for (int64_t r = 0; r < kBlock; ++r)
        ar[r] = a.data + (i0 + std::min(r, rows - 1)) * a.row_stride;
      for (int64_t q = 0; q < kBlock; ++q)
        bc[q] = b.data + (j0 + std::min(q, cols - 1)) * b.col_stride;
      // Edge blocks repeat the last row/column and discard the duplicates when storing.
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t r = 0; r < kBlock; ++r) {
          const Acc av = ar[r][p];
          for (int64_t q = 0; q < kBlock; ++q) acc[r][q] += av * bc[q][p];
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t q = 0; q < cols; ++q) {
          c[(i0 + r) * c_row_stride + (j0 + q) * c_col_stride] = acc[r][q];
        }
      }
    }
  }
}

}  // namespace gemm_detail

// C (m x n, strides c_row_stride / c_col_stride) = A (m x k) * B (k x n). Every C element is
// written. Falls back to repacking B contiguously when no operand has a contiguous dimension.
template <typename Acc>
void Gemm(MatrixView<Acc> a, MatrixView<Acc> b, Acc* c, int64_t c_row_stride, int64_t c_col_stride,
          int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  if (b.col_stride == 1 || n == 1) {
    gemm_detail::GemmContiguousN(a, b, c, c_row_stride, c_col_stride, m, n, k);
  } else if (a.row_stride == 1 || m == 1) {
    // C^T (n x m) = B^T (n x k) * A^T (k x m), and A^T is contiguous along m.
    gemm_detail::GemmContiguousN(b.Transposed(), a.Transposed(), c, c_col_stride, c_row_stride, n,
                                 m, k);
  } else if (a.col_stride == 1 && b.row_stride == 1) {
    gemm_detail::GemmContiguousK(a, b, c, c_row_stride, c_col_stride, m, n, k);
  } else {
    std::vector<Acc> packed(static_cast<size_t>(k * n));
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j)
        packed[p * n + j] = b.data[p * b.row_stride + j * b.col_stride];
    }
    gemm_detail::GemmContiguousN(a, MatrixView<Acc>{packed.data(), n, 1}, c, c_row_stride,
                                 c_col_stride, m, n, k);
  }
}

}  // namespace hlo::eval::rc

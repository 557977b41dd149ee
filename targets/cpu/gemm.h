// Single-precision GEMM and NHWC convolution for the CPU backend: a register-blocked AVX-512
// (AVX2 fallback, then portable C++) micro-kernel with operand packing and cache blocking,
// parallelized over output blocks with cpu::ThreadPool. Dot and convolution instructions are
// lowered to these calls; kOutput fusion epilogues run through `epilogue` on each finished block
// of C while it is still in cache.
//
// Guarantees:
//   - C = A * B (row-major, arbitrary leading dimensions, either operand optionally
//     transposed), accumulating each C element over k in increasing k order within a k-block and
//     block by block: results equal a naive f32 loop up to reassociation (tests use rtol 1e-5
//     scaled by k).
//   - `epilogue(block)` is called exactly once per output block after its final k-block, on the
//     thread that computed it; blocks are disjoint and cover C.
//   - No allocation proportional to anything but the packing buffers (bounded per thread).
//   - Sizes of 0 are valid (no work; epilogues still see no blocks).
#pragma once

#include <cstdint>
#include <functional>

#include "targets/cpu/thread_pool.h"

namespace cpu {

struct GemmBlock {
  int64_t row = 0;   // first row of C in this block
  int64_t col = 0;   // first column of C
  int64_t rows = 0;
  int64_t cols = 0;
  float* c = nullptr;  // &C[row][col]
  int64_t ldc = 0;     // C's leading dimension (elements)
  int64_t batch = 0;   // SgemmBatched: which GEMM of the batch (row/col are within it); else 0
};
using GemmEpilogue = std::function<void(const GemmBlock& block)>;

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;  // m x k (or k x m if trans_a), leading dimension lda
  int64_t lda = 0;
  bool trans_a = false;
  const float* b = nullptr;  // k x n (or n x k if trans_b), leading dimension ldb
  int64_t ldb = 0;
  bool trans_b = false;
  float* c = nullptr;        // m x n, leading dimension ldc
  int64_t ldc = 0;
  bool accumulate = false;   // C += A*B instead of C = A*B
  GemmEpilogue epilogue;     // optional
};

// Runs on `pool` (nullptr: the calling thread only).
void Sgemm(const GemmArgs& args, ThreadPool* pool);

// Batched: `batch` independent GEMMs with element strides between consecutive A, B, C.
void SgemmBatched(const GemmArgs& args, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c, ThreadPool* pool);

// 2-D convolution, NHWC input, HWIO filter, NHWC output, with XLA's window semantics
// (strides, padding low/high, lhs dilation, rhs dilation, feature_group_count for grouped and
// depthwise convolutions). Computed as GEMMs over tiles of an implicit im2col (never the whole
// im2col in memory); depthwise ones by a direct vectorized loop (docs/cpu-runtime.md). The
// epilogue sees blocks of the output viewed as (N*OH*OW) x OC.
struct Conv2DArgs {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t k_h = 0, k_w = 0, out_c = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;          // low padding (high padding follows from out_h/w)
  int64_t lhs_dilation_h = 1, lhs_dilation_w = 1;
  int64_t rhs_dilation_h = 1, rhs_dilation_w = 1;
  int64_t feature_groups = 1;
  const float* input = nullptr;
  const float* filter = nullptr;
  float* output = nullptr;
  GemmEpilogue epilogue;
};
void Conv2D(const Conv2DArgs& args, ThreadPool* pool);

// Which micro-kernel this machine uses ("avx512 6x64 (+3 shapes)", "avx2 6x16", "portable 4x16"),
// for stats.
const char* GemmKernelName();

}  // namespace cpu

// GEMMs with very few rows (batch-1 dense layers: m = 1..4) without packing. The blocked driver
// would copy all of B into panels only to read each element m times; here B is streamed once,
// row by row, into m accumulator rows that stay in L1 — a memory-bound GEMV-like loop.
//
// Guarantees: the same results contract as cpu::Sgemm (each C element sums k in increasing
// order), epilogue once per column chunk of all m rows, disjoint chunks covering C.
#pragma once

#include "targets/cpu/gemm.h"

namespace cpu::gemm_detail {

// Rows at or below which Sgemm uses SmallMGemm (when B is not transposed).
constexpr int64_t kSmallM = 4;

// Requires args.m <= kSmallM, !args.trans_b, arguments already validated.
void SmallMGemm(const GemmArgs& args, int64_t batch_index, ThreadPool* pool);

}  // namespace cpu::gemm_detail

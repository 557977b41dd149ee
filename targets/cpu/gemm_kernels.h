// GEMM micro-kernels: the register-blocked inner loops of cpu::Sgemm, one per instruction set,
// chosen once at run time (__builtin_cpu_supports) so the same binary runs on AVX-512, AVX2-only
// and other x86-64 machines.
//
// Guarantees: a micro-kernel computes one full MR x NR tile of C from packed panels,
//   C[i][j] (+)= sum_{p < kc} a_panel[p*MR + i] * b_panel[p*NR + j]
// summing p in increasing order (one FMA per p), overwriting C when `accumulate` is false. Panels
// are 64-byte aligned; C may be unaligned with any ldc >= NR. Partial tiles are the driver's job
// (gemm_driver.cc computes them into a scratch tile).
#pragma once

#include <cstdint>
#include <vector>

namespace cpu::gemm_detail {

using MicroKernelFn = void (*)(int64_t kc, const float* a_panel, const float* b_panel, float* c,
                               int64_t ldc, bool accumulate);

struct MicroKernel {
  const char* name;  // e.g. "avx512 14x32"
  int mr;            // rows of C per tile (A values broadcast)
  int nr;            // columns of C per tile (B vector loads)
  MicroKernelFn fn;
};

// Every AVX-512 shape compiled in (the first is the default; the others exist to be measured
// by bench/gemm_bench.cc). Empty when the CPU lacks AVX-512F.
std::vector<MicroKernel> Avx512Kernels();
// AVX2+FMA 6x16, or nullptr when the CPU lacks them.
const MicroKernel* Avx2Kernel();
// Plain C++ 4x16 (whatever the compiler's baseline vectorizes it to); always available.
const MicroKernel& PortableKernel();

// The preferred kernel of the best instruction set this CPU supports; decided once.
const MicroKernel& BestKernel();
// Among the best instruction set's kernels, the one that wastes the least work on partial tiles
// of an m x n C (ties go to BestKernel's order). E.g. n = 32 picks 14x32 over 6x64.
const MicroKernel& KernelForShape(int64_t m, int64_t n);

// Packing of one 6-row A panel, dst[p * 6 + i] = rows[i][p] for p < depth, with AVX-512
// permutes (the scalar transpose was ~20% of a 3136 x 64 x 576 GEMM); nullptr without AVX-512.
using PackRowsFn = void (*)(const float* const* rows, int64_t depth, float* dst);
PackRowsFn Avx512PackRows6();

// The largest MR and NR over all kernels: sizes the driver's scratch tile.
constexpr int kMaxMr = 16;
constexpr int kMaxNr = 64;

}  // namespace cpu::gemm_detail

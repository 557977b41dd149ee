// AVX2+FMA and portable GEMM micro-kernels (see gemm_kernels.h), and the run-time choice among
// all kernels. The AVX2 function alone carries the target attribute; the portable kernel is
// plain C++ compiled for the baseline ISA.
#include <immintrin.h>

#include "targets/cpu/gemm_kernels.h"

namespace cpu::gemm_detail {
namespace {

// 16 ymm: 6x2 accumulators + 2 B vectors + 1 broadcast.
__attribute__((target("avx2,fma"))) void KernelAvx2(int64_t kc, const float* a, const float* b,
                                                     float* c, int64_t ldc, bool accumulate) {
  constexpr int MR = 6;
  __m256 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += MR;
    b += 16;
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    __m256 v0 = acc[i][0], v1 = acc[i][1];
    if (accumulate) {
      v0 = _mm256_add_ps(v0, _mm256_loadu_ps(row));
      v1 = _mm256_add_ps(v1, _mm256_loadu_ps(row + 8));
    }
    _mm256_storeu_ps(row, v0);
    _mm256_storeu_ps(row + 8, v1);
  }
}

void KernelPortable(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                    bool accumulate) {
  constexpr int MR = 4, NR = 16;
  float acc[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];
    a += MR;
    b += NR;
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) {
      if (accumulate) {
        c[i * ldc + j] += acc[i][j];
      } else {
        c[i * ldc + j] = acc[i][j];
      }
    }
}

const MicroKernel kAvx2Kernel{"avx2 6x16", 6, 16, &KernelAvx2};
const MicroKernel kPortableKernel{"portable 4x16", 4, 16, &KernelPortable};

}  // namespace

const MicroKernel* Avx2Kernel() {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return nullptr;
  return &kAvx2Kernel;
}

const MicroKernel& PortableKernel() { return kPortableKernel; }

namespace {
// The kernels of the best instruction set, in order of preference.
const std::vector<MicroKernel>& BestFamily() {
  static const std::vector<MicroKernel> family = [] {
    std::vector<MicroKernel> avx512 = Avx512Kernels();
    if (!avx512.empty()) return avx512;
    if (const MicroKernel* avx2 = Avx2Kernel()) return std::vector<MicroKernel>{*avx2};
    return std::vector<MicroKernel>{kPortableKernel};
  }();
  return family;
}
}  // namespace

const MicroKernel& BestKernel() { return BestFamily().front(); }

const MicroKernel& KernelForShape(int64_t m, int64_t n) {
  // Work done, partial tiles included (they are computed whole into a scratch tile).
  auto padded = [&](const MicroKernel& kernel) {
    return static_cast<double>((m + kernel.mr - 1) / kernel.mr * kernel.mr) *
           static_cast<double>((n + kernel.nr - 1) / kernel.nr * kernel.nr);
  };
  // The preferred kernel packs A fastest and measures best on full tiles: another shape must
  // save more than 5% of the padded work to win (784 x 128 stays 6x64, n = 32 goes to 14x32).
  const MicroKernel* best = &BestFamily().front();
  for (const MicroKernel& kernel : BestFamily())
    if (padded(kernel) < 0.95 * padded(*best)) best = &kernel;
  return *best;
}

}  // namespace cpu::gemm_detail

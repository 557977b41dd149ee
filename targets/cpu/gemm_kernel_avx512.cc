// AVX-512 GEMM micro-kernels (see gemm_kernels.h). Only the functions carrying the target
// attribute use AVX-512, so nothing here leaks AVX-512 code into inline functions shared with
// the rest of the program (as compiling the whole file with -mavx512f could).
//
// Register budget (32 zmm): MR x NV accumulators + NV B vectors + 1 broadcast. 14x32 uses 28 +
// 2 + 1; 6x64 uses 24 + 4 + 1; 8x48 uses 24 + 3 + 1; 12x32 leaves room to rename.
#include <immintrin.h>

#include "targets/cpu/gemm_kernels.h"

namespace cpu::gemm_detail {
namespace {

#define RETARGET_AVX512 __attribute__((target("avx512f,avx512vl,fma")))

template <int MR, int NV>
RETARGET_AVX512 void KernelAvx512(int64_t kc, const float* a, const float* b, float* c,
                                  int64_t ldc, bool accumulate) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();

  // The C tile is touched only at the end; start fetching it now (rows are ldc apart, often
  // 4 KiB, which the hardware prefetcher does not follow).
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16 * NV - 1), _MM_HINT_T0);
  }

#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
    // Prefetch the B panel a few iterations ahead; A is read in MR-float steps from L2.
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * 16 * NV), _MM_HINT_T0);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += 16 * NV;
  }

#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      __m512 value = acc[i][v];
      if (accumulate) value = _mm512_add_ps(value, _mm512_loadu_ps(row + 16 * v));
      _mm512_storeu_ps(row + 16 * v, value);
    }
  }
}

// Packing a 6-row A panel (dst[p * 6 + i] = rows[i][p]) 16 depths at a time: six row vectors
// are loaded, and each of the six output vectors (96 floats = 16 depths x 6 rows) is assembled
// from three two-row permutes (vpermt2ps) merged under masks. Output element e of vector o holds
// flat index f = 16 o + e, i.e. depth f / 6 of row f % 6.
struct Pack6Tables {
  alignas(64) int32_t index[6][16];  // depth within the block, + 16 for the odd row of a pair
  uint16_t mask[6][3];               // elements of output o that come from row pair q
};

constexpr Pack6Tables MakePack6Tables() {
  Pack6Tables t{};
  for (int o = 0; o < 6; ++o) {
    for (int e = 0; e < 16; ++e) {
      const int f = 16 * o + e, depth = f / 6, row = f % 6;
      t.index[o][e] = depth + (row % 2 == 1 ? 16 : 0);
      t.mask[o][row / 2] = static_cast<uint16_t>(t.mask[o][row / 2] | (1u << e));
    }
  }
  return t;
}
constexpr Pack6Tables kPack6 = MakePack6Tables();

RETARGET_AVX512 void PackRows6Avx512(const float* const* rows, int64_t depth, float* dst) {
  __m512i index[6];
#pragma GCC unroll 6
  for (int o = 0; o < 6; ++o) index[o] = _mm512_load_si512(kPack6.index[o]);
  int64_t p = 0;
  for (; p + 16 <= depth; p += 16) {
    __m512 row[6];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) row[i] = _mm512_loadu_ps(rows[i] + p);
#pragma GCC unroll 6
    for (int o = 0; o < 6; ++o) {
      // Rows 0-1 everywhere, then rows 2-3 and 4-5 merged in where they belong.
      __m512 out = _mm512_permutex2var_ps(row[0], index[o], row[1]);
      out = _mm512_mask_mov_ps(out, kPack6.mask[o][1],
                               _mm512_permutex2var_ps(row[2], index[o], row[3]));
      out = _mm512_mask_mov_ps(out, kPack6.mask[o][2],
                               _mm512_permutex2var_ps(row[4], index[o], row[5]));
      _mm512_storeu_ps(dst + p * 6 + 16 * o, out);
    }
  }
  for (; p < depth; ++p)
    for (int i = 0; i < 6; ++i) dst[p * 6 + i] = rows[i][p];
}

#undef RETARGET_AVX512

}  // namespace

PackRowsFn Avx512PackRows6() {
  if (!__builtin_cpu_supports("avx512f")) return nullptr;
  return &PackRows6Avx512;
}

std::vector<MicroKernel> Avx512Kernels() {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma")) return {};
  // Measured at 1024^3 on one core (docs/perf.md): all four within ~3%, 6x64 ahead. The order
  // is the preference when shapes tie (KernelForShape).
  return {
      {"avx512 6x64", 6, 64, &KernelAvx512<6, 4>},
      {"avx512 14x32", 14, 32, &KernelAvx512<14, 2>},
      {"avx512 12x32", 12, 32, &KernelAvx512<12, 2>},
      {"avx512 8x48", 8, 48, &KernelAvx512<8, 3>},
  };
}

}  // namespace cpu::gemm_detail

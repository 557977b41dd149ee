// Depthwise per-pixel kernels (see gemm_depthwise_kernels.h). The AVX-512 function alone carries
// the target attribute; 16 channels per zmm register, the channel tail through a mask.
#include "targets/cpu/gemm_depthwise_kernels.h"

#include <immintrin.h>

namespace cpu::gemm_detail {
namespace {

__attribute__((target("avx512f"))) void DepthwisePixelAvx512(const float* const* x,
                                                              const float* const* f, int taps,
                                                              int64_t channels, float* out,
                                                              bool accumulate) {
  for (int64_t c = 0; c < channels; c += 16) {
    const int64_t width = channels - c < 16 ? channels - c : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1u);
    __m512 acc = accumulate ? _mm512_maskz_loadu_ps(mask, out + c) : _mm512_setzero_ps();
    for (int t = 0; t < taps; ++t)
      acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, x[t] + c),
                            _mm512_maskz_loadu_ps(mask, f[t] + c), acc);
    _mm512_mask_storeu_ps(out + c, mask, acc);
  }
}

void DepthwisePixelPortable(const float* const* x, const float* const* f, int taps,
                            int64_t channels, float* out, bool accumulate) {
  if (!accumulate)
    for (int64_t c = 0; c < channels; ++c) out[c] = 0.0f;
  for (int t = 0; t < taps; ++t) {
    const float* __restrict xt = x[t];
    const float* __restrict ft = f[t];
    for (int64_t c = 0; c < channels; ++c) out[c] += xt[c] * ft[c];
  }
}

}  // namespace

DepthwisePixelFn BestDepthwisePixelKernel() {
  static const DepthwisePixelFn best =
      __builtin_cpu_supports("avx512f") ? &DepthwisePixelAvx512 : &DepthwisePixelPortable;
  return best;
}

DepthwisePixelFn PortableDepthwisePixelKernel() { return &DepthwisePixelPortable; }

}  // namespace cpu::gemm_detail

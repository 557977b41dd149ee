// The inner loop of the direct depthwise convolution (conv.cc), one per instruction set like the
// GEMM micro-kernels, chosen once at run time: the library is built for baseline x86-64, where
// g++ would vectorize a plain loop with 4-lane SSE only.
//
// Guarantees: out[c] (+)= sum_{t < taps} x[t][c] * f[t][c] for c < channels, summing t in
// increasing order; no alignment requirements; overwrites `out` unless `accumulate`.
#pragma once

#include <cstdint>

namespace cpu::gemm_detail {

using DepthwisePixelFn = void (*)(const float* const* x, const float* const* f, int taps,
                                  int64_t channels, float* out, bool accumulate);

// The best version for this CPU (AVX-512 when present, else portable C++).
DepthwisePixelFn BestDepthwisePixelKernel();
// The portable one, so that tests cover it on AVX-512 machines too.
DepthwisePixelFn PortableDepthwisePixelKernel();

}  // namespace cpu::gemm_detail

// RETARGET_VECTOR_CLONES: compiles a plain loop for AVX-512 and AVX2 next to the baseline (GCC
// function multiversioning picks one at load time). The runtime library is built for baseline
// x86-64, where such loops get 4-wide SSE2 only.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RETARGET_VECTOR_CLONES \
  __attribute__((target_clones("arch=skylake-avx512", "avx2", "default")))
#else
#define RETARGET_VECTOR_CLONES
#endif

// Convolution internals exposed for tests and benchmarks: cpu::Conv2D picks a path
// automatically; these entry points force one so both can be checked and measured.
#pragma once

#include "targets/cpu/gemm.h"

namespace cpu::gemm_detail {

enum class ConvPath {
  kAuto,             // what Conv2D does: direct loop for depthwise, GEMM otherwise
  kGemm,             // one GEMM per feature group over an implicit im2col
  kDirectDepthwise,  // vectorized direct loop; only for in_c == feature_groups (throws otherwise)
};

void Conv2DWithPath(const Conv2DArgs& args, ThreadPool* pool, ConvPath path);

}  // namespace cpu::gemm_detail

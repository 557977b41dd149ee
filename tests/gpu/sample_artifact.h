// A hand-built GPU artifact for tests and for the device check: out0 = relu((x + 1) . w + b).
//
// Step 0 is a hand-written PTX kernel `add_one` (t = x + 1, one thread per element), step 1 a
// cuBLASLt matmul with the RELU_BIAS epilogue. Shapes: x f32[m,k], w f32[k,n], b f32[n],
// out0 f32[m,n]. The expected result is computed here with plain loops, independently of the
// runtime, so the device check can compare the GPU's answer with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "targets/gpu/artifact.h"

namespace gpu::testing {

// The PTX of `add_one(const float* x, float* y, u32 count)`, ISA 8.0 for sm_90.
const std::string& AddOnePtx();

struct Sample {
  Artifact artifact;
  std::vector<float> x, w, b;  // inputs (deterministic values)
  std::vector<float> expected; // out0
};

Sample MakeSample(int64_t m, int64_t n, int64_t k);

// The same computation as HLO text (for the interpreter and for XLA through JAX).
std::string SampleHlo(int64_t m, int64_t n, int64_t k);

// A one-step cuDNN artifact: y = conv(x, w), x f32[2,3,16,16] (NCHW), w f32[8,3,3,3] (OIHW),
// stride 1, padding 1 on each side, y f32[2,8,16,16]; b is empty. Its HLO is ConvSampleHlo().
Sample MakeConvSample();
std::string ConvSampleHlo();

}  // namespace gpu::testing

// retarget-gpu-make-sample DIR [M N K]: writes the hand-built matmul sample (M x N x K, default
// 4 x 3 x 8) and the convolution sample, each as DIR/NAME.rtgpu, NAME.inputs.npz,
// NAME.expected.npz and NAME.hlo (the same computation as HLO): the layout device_check.sh reads.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "targets/gpu/runtime/npz.h"
#include "tests/gpu/sample_artifact.h"

namespace {

std::string Bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 5) {
    std::fprintf(stderr, "usage: retarget-gpu-make-sample DIR [M N K]\n");
    return 2;
  }
  const std::string dir = argv[1];
  int64_t m = 4, n = 3, k = 8;
  if (argc == 5) {
    m = std::atoll(argv[2]);
    n = std::atoll(argv[3]);
    k = std::atoll(argv[4]);
    if (m < 1 || n < 1 || k < 1 || m * k > (int64_t{1} << 28) || k * n > (int64_t{1} << 28)) {
      std::fprintf(stderr, "retarget-gpu-make-sample: sizes out of range\n");
      return 2;
    }
  }
  try {
    // The matmul sample of the requested size, and the convolution sample next to it.
    const gpu::testing::Sample s = gpu::testing::MakeSample(m, n, k);
    const std::string base = dir + "/" + s.artifact.manifest.module_name;
    gpu::WriteArtifactFile(s.artifact, base + ".rtgpu");
    gpu::runtime::WriteNpzFile({{"arg0", "<f4", {m, k}, Bytes(s.x)},
                                {"arg1", "<f4", {k, n}, Bytes(s.w)},
                                {"arg2", "<f4", {n}, Bytes(s.b)}},
                               base + ".inputs.npz");
    gpu::runtime::WriteNpzFile({{"out0", "<f4", {m, n}, Bytes(s.expected)}}, base + ".expected.npz");
    std::ofstream(base + ".hlo") << gpu::testing::SampleHlo(m, n, k);
    std::printf("%s.rtgpu\n", base.c_str());

    const gpu::testing::Sample c = gpu::testing::MakeConvSample();
    const gpu::Manifest& cm = c.artifact.manifest;
    const std::string conv_base = dir + "/" + cm.module_name;
    gpu::WriteArtifactFile(c.artifact, conv_base + ".rtgpu");
    gpu::runtime::WriteNpzFile({{"arg0", "<f4", cm.parameters[0].shape, Bytes(c.x)},
                                {"arg1", "<f4", cm.parameters[1].shape, Bytes(c.w)}},
                               conv_base + ".inputs.npz");
    gpu::runtime::WriteNpzFile({{"out0", "<f4", cm.results[0].shape, Bytes(c.expected)}}, conv_base + ".expected.npz");
    std::ofstream(conv_base + ".hlo") << gpu::testing::ConvSampleHlo();
    std::printf("%s.rtgpu\n", conv_base.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "retarget-gpu-make-sample: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

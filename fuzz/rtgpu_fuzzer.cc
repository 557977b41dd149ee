// libFuzzer target: the GPU artifact reader, gpu::ParseArtifact (container, section table,
// CRC-32s, manifest JSON, ManifestFromJson and every ValidateArtifact invariant).
//
// Inputs that start with the artifact magic are read as whole .rtgpu files. Any other input is
// taken as manifest JSON and wrapped in a well-formed container (with a PTX section and the
// section names the seeds use), because random mutations of a whole file almost always break a
// CRC-32 and would never reach the manifest. Any accepted artifact must serialize and read back
// to the same bytes. Everything else the reader does must end in gpu::ArtifactError.
// Seeds: the sample artifact and its manifest (reader_seed_writer) and, when the main build is
// present, artifacts the GPU backend wrote for run-corpus models (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "targets/gpu/artifact.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  fuzz::RunExpectingOnly<gpu::ArtifactError>("rtgpu_fuzzer", [&] {
    std::string wrapped;
    std::string_view bytes = input;
    if (input.substr(0, sizeof gpu::kArtifactMagic) !=
        std::string_view(gpu::kArtifactMagic, sizeof gpu::kArtifactMagic)) {
      static const std::string kPtx = ".version 8.0\n.target sm_90\n.address_size 64\n";
      static const std::string kConstant(64, '\1');
      wrapped = gpu::EncodeContainer({{gpu::kManifestSection, input},
                                      {"ptx.0", kPtx},
                                      {"const.0", kConstant}});
      bytes = wrapped;
    }
    const gpu::Artifact artifact = gpu::ParseArtifact(bytes, "fuzz.rtgpu");
    const std::string serialized = gpu::SerializeArtifact(artifact);
    fuzz::Require(gpu::SerializeArtifact(gpu::ParseArtifact(serialized, "reserialized.rtgpu")) ==
                      serialized,
                  "rtgpu_fuzzer", "a serialized artifact does not read back to the same bytes");
  });
  return 0;
}

// reader_seed_writer: seeds for the reader fuzzers that the repository and ../shared do not hold
// as files.
//
//   reader_seed_writer OUT_DIR FILE.sasm...
//
// Writes OUT_DIR/bin/<stem>.bin (each .sasm that assembles, for isa_binary_fuzzer),
// OUT_DIR/arch/<preset>.cfg (every preset printed with FormatConfig, for arch_config_fuzzer) and
// OUT_DIR/rtgpu/sample.rtgpu plus sample.manifest.json (the hand-built sample artifact and its
// manifest text, for rtgpu_fuzzer). Files that do not assemble are skipped with a message. Seeds
// are build outputs and are never committed.
#include <cstdio>
#include <filesystem>
#include <string>

#include "fuzz/seed_files.h"
#include "hlo/diagnostic.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/assembler.h"
#include "simulator/isa/encoding.h"
#include "targets/gpu/artifact.h"
#include "tests/gpu/sample_artifact.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: reader_seed_writer OUT_DIR FILE.sasm...\n");
    return 2;
  }
  const fs::path out = argv[1];
  bool ok = true;
  for (const char* folder : {"bin", "arch", "rtgpu"}) {
    std::error_code error;
    fs::create_directories(out / folder, error);
    if (error) {
      std::fprintf(stderr, "reader_seed_writer: cannot create %s\n", (out / folder).c_str());
      return 1;
    }
  }
  int binaries = 0;
  for (int i = 2; i < argc; ++i) {
    const fs::path source = argv[i];
    try {
      const systolic::Program program =
          systolic::Assemble(fuzz::ReadSeedFile(source), source.string());
      ok &= fuzz::WriteSeedFile(out / "bin" / (source.stem().string() + ".bin"),
                                systolic::WriteBinary(program));
      ++binaries;
    } catch (const hlo::Error& e) {
      std::fprintf(stderr, "reader_seed_writer: skipping %s: %s\n", source.c_str(), e.what());
    }
  }
  int presets = 0;
  for (const std::string_view name : systolic::PresetNames()) {
    const std::string file = std::string(name) + ".cfg";
    ok &= fuzz::WriteSeedFile(out / "arch" / file,
                              systolic::FormatConfig(systolic::Preset(name)));
    ++presets;
  }
  const gpu::testing::Sample sample = gpu::testing::MakeSample(8, 16, 4);
  ok &= fuzz::WriteSeedFile(out / "rtgpu" / "sample.rtgpu",
                            gpu::SerializeArtifact(sample.artifact));
  ok &= fuzz::WriteSeedFile(out / "rtgpu" / "sample.manifest.json",
                  gpu::JsonText(gpu::ManifestToJson(sample.artifact.manifest)) + "\n");
  std::fprintf(stderr, "reader_seed_writer: %d binaries, %d presets, 1 artifact in %s\n", binaries,
               presets, out.c_str());
  return ok ? 0 : 1;
}

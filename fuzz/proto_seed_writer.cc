// proto_seed_writer: builds the proto fuzzer's seed corpus from HLO text files.
//
//   proto_seed_writer OUT_DIR FILE.hlo...
//
// For each file that parses, writes OUT_DIR/<stem>.module.pb (a bare HloModuleProto) and
// OUT_DIR/<stem>.wrapped.pb (the xla.HloProto dump wrapper), both produced by our own writer,
// so the fuzzer starts from well-formed protos of real models. Files that do not parse are
// skipped with a message (the seed set is best effort; exit status is 0 unless OUT_DIR is
// unusable). Seeds are build outputs and are never committed.
#include <cstdio>
#include <filesystem>
#include <string>

#include "fuzz/seed_files.h"
#include "hlo/diagnostic.h"
#include "hlo/parser.h"
#include "hlo/proto_io.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: proto_seed_writer OUT_DIR FILE.hlo...\n");
    return 2;
  }
  const std::filesystem::path out_dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    std::fprintf(stderr, "proto_seed_writer: cannot create %s: %s\n", argv[1],
                 ec.message().c_str());
    return 1;
  }
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  int written = 0;
  for (int i = 2; i < argc; ++i) {
    const std::filesystem::path input = argv[i];
    try {
      auto module = hlo::ParseHloText(fuzz::ReadSeedFile(input), input.string(), quiet);
      const std::string stem = input.stem().string();
      bool ok = fuzz::WriteSeedFile(out_dir / (stem + ".module.pb"),
                                    hlo::WriteHloProto(*module, false)) &&
                fuzz::WriteSeedFile(out_dir / (stem + ".wrapped.pb"),
                                    hlo::WriteHloProto(*module, true));
      if (!ok) {
        std::fprintf(stderr, "proto_seed_writer: cannot write seeds for %s\n", argv[i]);
        return 1;
      }
      written += 2;
    } catch (const hlo::Error& e) {
      std::fprintf(stderr, "proto_seed_writer: skipping %s",
                   hlo::FormatError(e, argv[i]).c_str());
    }
  }
  std::fprintf(stderr, "proto_seed_writer: wrote %d seeds to %s\n", written, argv[1]);
  return 0;
}

// libFuzzer target: arbitrary text -> systolic::ParseConfigFile (the accelerator's architecture
// description, `--config FILE` of run/sim/report/sweep).
//
// Finds crashes, sanitizer reports, hangs and exceptions other than hlo::Error, and checks that
// any accepted configuration, printed with FormatConfig, parses back to the same configuration.
// Seeds: every preset printed by reader_seed_writer (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "simulator/isa/arch_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const systolic::ArchConfig base = systolic::Preset("tpu-v1");
  fuzz::RunExpectingOnlyHloErrors("arch_config_fuzzer", [&] {
    const systolic::ArchConfig config = systolic::ParseConfigFile(text, "fuzz.cfg", base);
    const std::string printed = systolic::FormatConfig(config);
    const systolic::ArchConfig again = systolic::ParseConfigFile(printed, "printed.cfg", base);
    fuzz::Require(systolic::FormatConfig(again) == printed, "arch_config_fuzzer",
                  "a printed configuration parses to a different configuration");
  });
  return 0;
}

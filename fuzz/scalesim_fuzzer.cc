// libFuzzer target: the SCALE-Sim compatibility readers, simulator::ParseScaleSimConfig (INI as
// Python's configparser reads it) and simulator::ParseScaleSimTopology (conv and GEMM CSV forms).
// Every input goes through all three, as `retarget scalesim -c CFG -t TOPOLOGY` may get any file.
//
// Finds crashes, sanitizer reports, hangs, allocation out of proportion to the input (a
// depthwise layer becomes one layer per channel) and exceptions other than hlo::Error. Seeds: ../shared/anchors/scalesim (configs and
// topologies, read in place by scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "simulator/scalesim_compat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::RunExpectingOnlyHloErrors("scalesim_fuzzer", [&] {
    (void)simulator::ParseScaleSimConfig(text, "fuzz.cfg");
  });
  fuzz::RunExpectingOnlyHloErrors("scalesim_fuzzer", [&] {
    (void)simulator::ParseScaleSimTopology(text, "fuzz.csv", /*gemm=*/false);
  });
  fuzz::RunExpectingOnlyHloErrors("scalesim_fuzzer", [&] {
    (void)simulator::ParseScaleSimTopology(text, "fuzz.csv", /*gemm=*/true);
  });
  return 0;
}

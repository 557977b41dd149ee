// The commands of DESIGN.md's CLI table that this build does not implement yet. They are listed
// and documented (so `--help` works and scripts can probe for them) and answer with a clear
// "not available yet" error and exit status 1 — never a crash or a usage error.
#include "tools/retarget/cli.h"

namespace cli {
namespace {

CommandSpec Unavailable(std::string name, std::string arguments, std::string summary,
                        std::vector<FlagSpec> flags) {
  CommandSpec spec;
  spec.name = std::move(name);
  spec.arguments = std::move(arguments);
  spec.summary = std::move(summary);
  spec.min_positional = 0;
  spec.max_positional = -1;
  spec.flags = std::move(flags);
  spec.available = false;
  return spec;
}

}  // namespace

std::vector<CommandSpec> UnavailableSpecs() {
  return {
      Unavailable("sim", "PROGRAM", "run a systolic-array program on the simulator",
                  {{"--config", "PRESET|FILE", "accelerator configuration", ""},
                   {"--set", "K=V", "override one configuration key", ""},
                   {"--trace", "OUT.json", "write a trace", ""},
                   {"--vcd", "OUT.vcd", "write a waveform", ""},
                   {"--stats-json", "OUT", "write cycle and energy statistics", ""}}),
      Unavailable("sweep", "FILE", "what-if studies over accelerator parameters",
                  {{"--set", "KEY=V1,V2,...", "values to sweep", ""},
                   {"--csv", "OUT", "write results as CSV", ""},
                   {"--html", "OUT", "write results as HTML", ""},
                   {"--jobs", "N", "parallel jobs", "-j"},
                   {"--manifest", "OUT", "write the run manifest", ""}}),
  };
}

}  // namespace cli

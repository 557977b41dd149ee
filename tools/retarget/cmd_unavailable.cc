// The commands of DESIGN.md's CLI table that this build does not implement yet. They are listed
// and documented (so `--help` works and scripts can probe for them) and answer with a clear
// "not available yet" error and exit status 1 — never a crash or a usage error.
#include "tools/retarget/cli.h"

namespace cli {
namespace {

// Unused while every command of the table is implemented; kept for the next one documented
// before it lands.
[[maybe_unused]] CommandSpec Unavailable(std::string name, std::string arguments, std::string summary,
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
  return {};  // every command of DESIGN.md's table is implemented
}

}  // namespace cli

// `retarget sim`: runs a systolic program on the simulator (cmd_sim.cc). Declared apart from
// cli.h so the command can be wired into main.cc's table without editing the shared header.
#pragma once

#include "tools/retarget/cli.h"

namespace cli {

CommandSpec SimSpec();
int RunSim(const ParsedArgs& args, const Context& context);

}  // namespace cli

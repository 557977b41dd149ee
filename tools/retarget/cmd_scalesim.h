// `retarget scalesim`: SCALE-Sim compatibility mode (cmd_scalesim.cc). Declared apart from cli.h
// so the command can be wired into main.cc's table without editing the shared header.
#pragma once

#include "tools/retarget/cli.h"

namespace cli {

CommandSpec ScalesimSpec();
int RunScalesim(const ParsedArgs& args, const Context& context);

}  // namespace cli

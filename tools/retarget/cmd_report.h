// `retarget report`: the portability report across targets (cmd_report.cc). Declared apart from
// cli.h so the command can be wired into main.cc's table without editing the shared header.
#pragma once

#include "tools/retarget/cli.h"

namespace cli {

CommandSpec ReportSpec();
int RunReport(const ParsedArgs& args, const Context& context);

}  // namespace cli

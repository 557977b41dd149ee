// `retarget`: the command-line entry point. Registers the backends explicitly (no static
// registration), dispatches to one cmd_*.cc per command, and turns every error into a message and
// an exit status (cli.h): nothing a user types or feeds in may crash it.
#include <iostream>
#include <string>
#include <vector>

#include "tools/retarget/backends.h"
#include "tools/retarget/cli.h"
#include "tools/retarget/cmd_report.h"
#include "tools/retarget/cmd_scalesim.h"
#include "tools/retarget/cmd_sim.h"
#include "tools/retarget/cmd_sweep.h"

namespace {

struct Command {
  cli::CommandSpec spec;
  int (*run)(const cli::ParsedArgs&, const cli::Context&);
};

std::vector<Command> Commands() {
  std::vector<Command> commands = {
      {cli::VerifySpec(), cli::RunVerify},
      {cli::PrintSpec(), cli::RunPrint},
      {cli::RunSpec(), cli::RunRun},
      {cli::CompareSpec(), cli::RunCompare},
      {cli::CompileSpec(), cli::RunCompile},
      {cli::OptSpec(), cli::RunOpt},
      {cli::ReportSpec(), cli::RunReport},
      {cli::ScalesimSpec(), cli::RunScalesim},
      {cli::SimSpec(), cli::RunSim},
      {cli::SweepSpec(), cli::RunSweep},
      {cli::SweepPointSpec(), cli::RunSweepPoint},  // internal: one point, run by `sweep`
      {cli::SweepMergeSpec(), cli::RunSweepMerge},
  };
  return commands;
}

std::vector<cli::CommandSpec> Specs(const std::vector<Command>& commands) {
  std::vector<cli::CommandSpec> specs;
  for (const Command& c : commands) specs.push_back(c.spec);
  return specs;
}

int Dispatch(const std::vector<std::string>& args, const cli::Context& context) {
  std::vector<Command> commands = Commands();
  if (args.empty()) {
    std::cerr << cli::ToolHelp(Specs(commands));
    return cli::kExitUsage;
  }
  const std::string& name = args[0];
  if (name == "-h" || name == "--help" || name == "help") {
    if (name == "help" && args.size() > 1) return Dispatch({args[1], "--help"}, context);
    std::cout << cli::ToolHelp(Specs(commands));
    return cli::kExitOk;
  }
  for (const Command& command : commands) {
    if (command.spec.name != name) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    try {
      cli::ParsedArgs parsed = cli::ParseArgs(command.spec, rest);
      if (parsed.help) {
        std::cout << cli::CommandHelp(command.spec);
        return cli::kExitOk;
      }
      return command.run(parsed, context);
    } catch (const cli::UsageError& e) {
      std::cerr << "retarget " << name << ": error: " << e.what() << "\n"
                << "usage: " << cli::Synopsis(command.spec) << "\n"
                << "Try 'retarget " << name << " --help'.\n";
      return cli::kExitUsage;
    }
  }
  std::cerr << "retarget: error: unknown command '" << name << "'\n"
            << "Try 'retarget --help' for the list of commands.\n";
  return cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  targets::BackendRegistry backends;
  cli::RegisterBackends(backends);
  cli::Context context{&backends};
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return Dispatch(args, context);
  } catch (const std::bad_alloc&) {
    std::cerr << "retarget: error: out of memory\n";
  } catch (const std::exception& e) {
    cli::ReportError(e);
  }
  return cli::kExitFailure;
}

// `retarget opt FILE --passes a,b,c --target T [...]`: runs exactly the named passes (from the
// pass registry, constructed for target T) and prints the resulting module as HLO text. This is
// the command golden tests run (tests/golden/*/*.hlo through FileCheck), so it always verifies
// after every pass and checks that a pass reporting "no change" left the module identical.
// Output files never replace FILE; an existing OUT is replaced only with --force.
#include <iostream>

#include "compiler/pass_registry.h"
#include "hlo/module_io.h"
#include "hlo/printer.h"
#include "tools/retarget/cli.h"
#include "tools/retarget/opt_support.h"

namespace cli {

CommandSpec OptSpec() {
  CommandSpec spec;
  spec.name = "opt";
  spec.arguments = "FILE";
  spec.summary = "run chosen optimizer passes on a module and print it (for pass tests)";
  spec.details =
      "Runs the passes of --passes in the given order (a pass may be named twice), each built\n"
      "for --target, then prints the module. After every pass the module is verified and, when\n"
      "the pass reports no change, compared with the module before it: a failure names the\n"
      "pass. An empty --passes list only parses, verifies and prints. --list-passes prints the\n"
      "registered passes.\n"
      "\nexamples:\n"
      "  retarget opt examples/mlp.hlo --passes dce,cse --target cpu\n"
      "  retarget opt examples/mlp.hlo --passes algebraic-simplifier --target gpu -o out.hlo\n";
  spec.min_positional = 0;  // FILE is optional with --list-passes only
  spec.max_positional = 1;
  spec.flags = {
      {"--passes", "LIST", "comma-separated pass names, run in this order", "", true},
      {"--target", "T", "interp, cpu, gpu or systolic (what the passes may assume)", "", true},
      {"--verify-each", "", "verify after every pass (always on for opt; accepted for scripts)",
       ""},
      {"--dump-dir", "D", "write NN.<pass>.hlo into D after every pass", ""},
      {"--output", "OUT", "write the module to OUT instead of stdout", "-o"},
      {"--force", "", "replace OUT if it exists (the input file is never replaced)", ""},
      {"--time-passes", "", "print the time of every pass on stderr", ""},
      {"--list-passes", "", "list the registered passes and exit", ""},
  };
  return spec;
}

int RunOpt(const ParsedArgs& args, const Context&) {
  if (args.Has("--list-passes")) {
    for (const compiler::PassEntry& entry : compiler::AllPasses()) std::cout << entry.name << "\n";
    return kExitOk;
  }
  if (args.positional.empty()) throw UsageError("missing argument FILE");
  const std::string& input = args.positional[0];
  const compiler::TargetDescription& target = TargetArgument(args);
  std::optional<std::string> passes = args.Get("--passes");
  if (!passes) throw UsageError("--passes is required (comma-separated pass names)");
  std::optional<std::string> output = args.Get("--output");
  if (output) CheckOutputPath(*output, input, args.Has("--force"));

  // Unknown pass names are reported (with the valid ones) before the module is even read.
  compiler::Pipeline pipeline("opt");
  for (const std::string& name : SplitCommaList(*passes)) {
    pipeline.Add(compiler::MakePass(name, target));
  }

  hlo::LoadedModule loaded = hlo::LoadModule(input);
  compiler::PipelineOptions options;
  options.verify_each = true;
  options.check_honest_change = true;
  options.dump_dir = args.Get("--dump-dir").value_or("");
  compiler::PipelineReport report = pipeline.Run(*loaded.module, options);
  if (args.Has("--time-passes")) std::cerr << report.ToTable();

  std::string text = hlo::PrintModule(*loaded.module);
  if (output) {
    WriteOutputFile(*output, text, args.Has("--force"), {input});
    return kExitOk;
  }
  std::cout << text;
  std::cout.flush();
  return std::cout ? kExitOk : kExitFailure;
}

}  // namespace cli

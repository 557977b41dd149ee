// `retarget print FILE [--format text|proto] [-o OUT] [--force]`: the module as canonical HLO
// text or as a binary HloModuleProto. FILE may be text or proto. Never writes over FILE; refuses
// to replace an existing OUT unless --force; refuses to send binary proto to a terminal.
#include <unistd.h>

#include <iostream>

#include "hlo/module_io.h"
#include "hlo/printer.h"
#include "hlo/proto_io.h"
#include "tools/retarget/cli.h"

namespace cli {

CommandSpec PrintSpec() {
  CommandSpec spec;
  spec.name = "print";
  spec.arguments = "FILE";
  spec.summary = "print a module as canonical HLO text or binary proto";
  spec.details =
      "FILE may be HLO text or a binary proto. The text output parses back to the same module.\n"
      "Without -o the result goes to stdout (binary proto only when stdout is not a terminal).\n"
      "\nexamples:\n"
      "  retarget print examples/mlp.hlo\n"
      "  retarget print examples/mlp.hlo --format proto -o out/mlp.pb\n";
  spec.min_positional = 1;
  spec.max_positional = 1;
  spec.flags = {
      {"--format", "text|proto", "text (default) or proto (an HloModuleProto)", ""},
      {"--output", "OUT", "write to OUT instead of stdout", "-o"},
      {"--force", "", "replace OUT if it exists (the input file is never replaced)", ""},
  };
  return spec;
}

int RunPrint(const ParsedArgs& args, const Context&) {
  const std::string& input = args.positional[0];
  std::string format = args.Get("--format").value_or("text");
  if (format != "text" && format != "proto") {
    throw UsageError("--format must be text or proto, got '" + format + "'");
  }
  std::optional<std::string> output = args.Get("--output");
  if (output) RefuseToOverwriteInputs(*output, {input});  // before the work, not after

  hlo::LoadedModule loaded = hlo::LoadModule(input);
  std::string bytes = format == "text" ? hlo::PrintModule(*loaded.module)
                                       : hlo::WriteHloProto(*loaded.module, /*wrap=*/false);
  if (output) {
    WriteOutputFile(*output, bytes, args.Has("--force"), {input});
    return kExitOk;
  }
  if (format == "proto" && isatty(STDOUT_FILENO)) {
    throw hlo::Error("refusing to write a binary proto to a terminal (use -o OUT or a pipe)");
  }
  std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::cout.flush();
  return std::cout ? kExitOk : kExitFailure;
}

}  // namespace cli

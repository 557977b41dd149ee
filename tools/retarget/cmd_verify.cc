// `retarget verify FILE...`: parse (text or proto, detected from the content) and verify each
// module. Prints one OK line per file on stdout; the first error is reported as
// FILE:LINE:COL: error: ... with a caret line, exit status 1.
#include <iostream>

#include "hlo/module_io.h"
#include "tools/retarget/cli.h"

namespace cli {

CommandSpec VerifySpec() {
  CommandSpec spec;
  spec.name = "verify";
  spec.arguments = "FILE...";
  spec.summary = "parse and verify HLO modules (text or binary proto)";
  spec.details =
      "Each FILE is read as HLO text or as a binary HloProto/HloModuleProto (detected from the\n"
      "content), parsed and verified. Success prints 'FILE: OK (...)'; the first error prints\n"
      "'FILE:LINE:COL: error: MESSAGE' with the offending line and a caret, and exits with 1.\n"
      "\nexample:\n  retarget verify examples/mlp.hlo\n";
  spec.min_positional = 1;
  spec.max_positional = -1;
  return spec;
}

int RunVerify(const ParsedArgs& args, const Context&) {
  for (const std::string& path : args.positional) {
    hlo::LoadedModule loaded = hlo::LoadModule(path);
    const hlo::Module& module = *loaded.module;
    std::cout << path << ": OK (module " << module.name() << ", " << module.computations().size()
              << " computations, " << module.instruction_count() << " instructions)\n";
  }
  return kExitOk;
}

}  // namespace cli

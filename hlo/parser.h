// HLO text parser: reads modules as XLA prints them today and in older dumps.
//
// Accepts both operand styles (`add(a, b)` and `add(f32[2] %a, f32[2] %b)`), missing layouts,
// missing ROOT (the last instruction is the root) and ENTRY (the last computation is the entry),
// `//` and `/* */` comments (including `/*index=N*/`), metadata, backend_config,
// frontend_attributes, sharding and header attributes (kept verbatim), and the trailing
// FileNames / FunctionNames / FileLocations / StackFrames tables (kept verbatim).
// Every error is an hlo::Error with the file, line and column of the offending token.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "hlo/ir.h"

namespace hlo {

struct ParseOptions {
  // Called with each warning (e.g. "constant values elided; filled deterministically").
  // Default: print "FILE: warning: ..." to stderr once per distinct message.
  std::function<void(const std::string&)> warn;
};

// Parses `text`; `filename` is used in error locations. Throws hlo::Error.
std::unique_ptr<Module> ParseHloText(std::string_view text, std::string_view filename,
                                     const ParseOptions& options = {});

}  // namespace hlo

// Loading a module from a file in any supported format: HLO text or binary proto (detected from
// the content, not the extension), then verified.
#pragma once

#include <memory>
#include <string>

#include "hlo/ir.h"
#include "hlo/parser.h"

namespace hlo {

struct LoadedModule {
  std::unique_ptr<Module> module;
  std::string source;  // file contents (for error carets); empty for protos
};

// Reads, parses and (unless verify=false) verifies. Throws hlo::Error.
LoadedModule LoadModule(const std::string& path, bool verify = true,
                        const ParseOptions& options = {});
bool LooksLikeProto(std::string_view bytes);

}  // namespace hlo

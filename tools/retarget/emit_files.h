// Writes what a backend emitted for `retarget compile --emit KIND` (targets::Emitted): the main
// file to -o OUT (or its stdout form without -o), the files beside OUT, the --dump-dir files,
// and the one-line summary on stderr. Nothing here knows a target: the backend decides what the
// files hold (Backend::Emit).
#pragma once

#include <optional>
#include <string>

#include "targets/backend.h"

namespace cli {

// Returns the exit status. OUT and the files beside it replace existing files only with
// `force`; none may be `input`. Dumps are rewritten on every run, like pass dumps.
int WriteEmitted(const targets::Emitted& emitted, const std::string& kind,
                 const std::string& input, const std::optional<std::string>& output,
                 const std::string& dump_dir, bool force);

}  // namespace cli

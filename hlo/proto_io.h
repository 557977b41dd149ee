// Binary proto I/O: xla.HloModuleProto and the xla.HloProto dump wrapper (module = field 1), with
// XLA's field numbers (hlo/hlo.proto is our schema, written from the documented numbers; unknown
// fields are skipped). Instruction ids are 64-bit keys; opcodes are strings.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hlo/ir.h"

namespace hlo {

// Reads either an HloProto (wrapper) or a bare HloModuleProto. Throws hlo::Error (with the file
// name and, where known, the offending instruction) on malformed input.
std::unique_ptr<Module> ReadHloProto(std::string_view bytes, std::string_view filename);

// Serializes `module` as an HloModuleProto (wrap=false) or an HloProto wrapper (wrap=true).
std::string WriteHloProto(const Module& module, bool wrap = false);

}  // namespace hlo

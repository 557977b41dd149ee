// HLO text printer: canonical text that XLA's own parser accepts, and that ParseHloText reads
// back to an identical module (print -> parse -> print is a fixed point).
//
// Canonical form: `HloModule name, entry_computation_layout={...}` plus kept header attributes;
// computations in definition order (callees first), the entry marked ENTRY; instructions as
// `[ROOT ]name = shape opcode(operand names), attributes...` with layouts on every array shape;
// opaque attributes printed verbatim after the typed ones; trailing tables verbatim.
#pragma once

#include <string>

#include "hlo/ir.h"

namespace hlo {

struct PrintOptions {
  bool print_layouts = true;
  bool print_opaque_attributes = true;  // metadata, backend_config, sharding, ...
  bool print_trailing_tables = true;  // the stack-frame tables, before and after the computations
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintComputation(const Computation& computation, const PrintOptions& options = {});
// One instruction line without indentation or trailing newline.
std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options = {});
// A literal as it appears inside constant(...): `1.5`, `{1, 2, 3}`, `{ {1, 2}, {3, 4} }`, `(1, 2)`.
std::string PrintLiteral(const Literal& literal);

}  // namespace hlo

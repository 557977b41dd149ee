// Internal interfaces shared by the HLO text printer's files (printer.cc: module, computation,
// instruction and literal text; printer_attributes.cc: typed attributes). Not part of the hlo/ API.
#pragma once

#include <string>
#include <vector>

#include "hlo/ir.h"

namespace hlo::printer_internal {

// `f32[2,3]{1,0}` with the effective layout on every array of rank >= 1.
void AppendShapeText(std::string& out, const Shape& shape);
// `{1,2,3}`
void AppendIntList(std::string& out, const std::vector<int64_t>& values);
// `, name=value` for each typed attribute and called computation of `inst`, in XLA's spelling.
void AppendTypedAttributes(std::string& out, const Instruction& inst);

}  // namespace hlo::printer_internal

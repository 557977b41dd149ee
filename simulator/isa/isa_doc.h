// Reference text generated from isa.def for docs/isa.md (the doc test checks that the committed
// document contains exactly this text, so the document cannot drift from the table).
#pragma once

#include <string>

namespace systolic {

// Markdown: the units, the symbol tables, the configuration registers, and one table per
// instruction with every field's bit range, width, kind and meaning.
std::string IsaReferenceMarkdown();

}  // namespace systolic

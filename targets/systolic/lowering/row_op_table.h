// The one table from elementwise HLO ops to the vector unit's row ops (row_program.h): which
// HLO op on which element type has an exact vector-unit equivalent, and which instruction(s)
// it becomes. AnalyzeRows consults it; emit_vector.cc expands each RowOpKind.
//
// Guarantees: a mapped op computes what hlo/ir.h defines (divide and sqrt within one ulp: a
// reciprocal (square root) and a multiply); everything else is nullopt with the reason.
#pragma once

#include <optional>
#include <string>

#include "hlo/ir.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

// The row op of elementwise `inst` whose element type is `dtype` (kind, opcode, compare set;
// srcs and dst left to the caller).
std::optional<RowOp> ElementwiseRowOp(const hlo::Instruction& inst, Dtype dtype, std::string* why);

}  // namespace systolic::lowering

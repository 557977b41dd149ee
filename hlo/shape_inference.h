// Shape inference: the result shape of an instruction from its opcode, operand shapes,
// attributes and called computations. Layouts of the result are the default ones.
// Throws hlo::Error (located at the instruction) when the operands are not valid for the op.
#pragma once

#include "hlo/ir.h"

namespace hlo {

Shape InferShape(const Instruction& instruction);

// Whether an elementwise opcode is defined on operands of element type `type` (floating-point
// only for exp/log/..., integers only for shifts/clz/popcnt, pred or integer for not/and/or/xor,
// numeric for arithmetic, anything for compare/select/convert/...). The one table behind the
// verifier's type check; code generators use it to reject what the verifier would.
bool ElementwiseAcceptsType(Opcode opcode, PrimitiveType type);

}  // namespace hlo

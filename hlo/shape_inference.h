// Shape inference: the result shape of an instruction from its opcode, operand shapes,
// attributes and called computations. Layouts of the result are the default ones.
// Throws hlo::Error (located at the instruction) when the operands are not valid for the op.
#pragma once

#include "hlo/ir.h"

namespace hlo {

Shape InferShape(const Instruction& instruction);

}  // namespace hlo

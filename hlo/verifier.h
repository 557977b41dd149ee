// The verifier: structural checks plus shape inference for every opcode in the table.
//
// Guarantees, when Verify returns: every computation has a root; computation names are unique
// per module and instruction names per computation (the scope XLA's text format gives them);
// every operand is defined in the same computation before its use (no cycles); operand counts
// match the opcode's arity; called computations exist, are not the entry, form no cycle, and
// have the signature their caller requires; each instruction's shape equals the inferred shape
// (layouts may differ); layouts are permutations of the dimensions; parameter numbers are dense;
// every array shape is within GlobalLimits(). Throws hlo::Error located at the instruction.
#pragma once

#include "hlo/ir.h"

namespace hlo {

void Verify(const Module& module);

}  // namespace hlo

// Array constants out of fusions, for the accelerator.
//
// The vector unit's row programs fill a scalar constant into a register (vfill) but have no way
// to hold an array constant inside a fused computation: an array lives in DRAM and reaches a
// program as an operand. Constant folding turns small iotas and index tables into such arrays
// (gemma3's attention masks, DLRM's offsets), and their fusions went to the host. Before
// lowering, every constant of more than one element in a fused computation becomes a new
// parameter of it, and each fusion calling that computation gets the constant as a new last
// operand (a constant of its own computation, a DRAM buffer like any other).
//
// Guarantees: the result computes what `module` computes; instruction names of `module` are
// kept (the new constants are named after the ones they replace, made unique); only fusions
// in computations that are not themselves fused are rewritten, and only fused computations no
// fusion inside a fusion calls (those keep their constants). nullptr when no fusion holds an
// array constant: nothing is copied.
#pragma once

#include <memory>

#include "hlo/ir.h"

namespace systolic::lowering {

std::unique_ptr<hlo::Module> OutlineFusedArrayConstants(const hlo::Module& module);

}  // namespace systolic::lowering

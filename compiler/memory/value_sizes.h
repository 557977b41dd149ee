// What a value costs in memory, shared by the scheduler and buffer assignment so that both
// agree on which instructions create storage.
//
// Guarantees: sizes never overflow (they saturate at INT64_MAX; verified shapes are far below
// that anyway, see hlo::GlobalLimits), and the aliasing rule below is the single definition
// used everywhere in compiler/memory/.
#pragma once

#include <cstdint>

#include "hlo/ir.h"

namespace compiler::memory {

// Instructions whose result is (part of) an operand's storage, so they create no buffer: tuple
// (its elements), get-tuple-element (one element), bitcast (a reinterpretation), opt-barrier
// (identity), and an annotation custom-call (Sharding, annotate_device_placement, ...:
// hlo::IsAnnotationCustomCall) of one operand with exactly the operand's shape (a one-device run
// gives it no code: its value is the operand's).
bool IsAliasing(const hlo::Instruction& instruction);

// Bytes of one array leaf (element count x element size); 0 for tokens and tuples.
int64_t ArrayBytes(const hlo::Shape& shape);
// Sum over every array leaf of a possibly nested tuple shape.
int64_t ShapeBytes(const hlo::Shape& shape);

// Bytes of new temporary storage the instruction's result needs: 0 for aliasing ops,
// parameters (caller-owned) and constants (read-only, allocated separately).
int64_t DefinedTempBytes(const hlo::Instruction& instruction);

}  // namespace compiler::memory

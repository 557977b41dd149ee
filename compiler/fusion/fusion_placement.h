// Placement: which side of the host/device boundary an instruction's kernel runs on, so the
// fusion passes never put host-fallback ops and device ops into one fusion.
//
// Guarantees: the side is derived from compiler::InstructionOwner (ownership.h), i.e. the very
// rule the ownership analysis and the lowering apply (per-element-type op rules included), so a
// fusion the passes form is either entirely executable on the device or entirely a host step.
// Instructions that generate no code (bitcast, tuple, small constants, ...) go with either side.
// This mirrors XLA's target-aware fusion: a producer is fused only if the consumer's emitter can
// handle it. On cpu/gpu nothing is host fallback, so the passes behave as before there.
#pragma once

#include <string>

#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler::fusion {

// kAlone: on the device, but only as a fusion of its own (TargetDescription::unfused_opcodes).
enum class Placement { kEither, kDevice, kHost, kAlone };

Placement PlacementOf(const hlo::Instruction& inst, const TargetDescription& target);

// Whether two sides may share a fusion (kEither goes with anything but kAlone, kAlone with
// nothing).
bool Compatible(Placement a, Placement b);
// The side of a group on side `a` after a member on side `b` joined (call only when Compatible).
Placement Combine(Placement a, Placement b);

// "" when `a` and `b` may share a fusion; otherwise the reason, e.g.
// "tan runs on the host on systolic, add natively".
std::string PlacementConflict(const hlo::Instruction& a, const hlo::Instruction& b,
                              const TargetDescription& target);

}  // namespace compiler::fusion

// One small, valid HLO module per opcode: the sample that tests/tour/add_an_op_test.cc drives
// through every place docs/add-an-op.md says an opcode must be handled.
//
// Guarantees: for an elementwise opcode (OpcodeClass kElementwise*), the example is generated
// from the opcode table and ElementwiseAcceptsType, so a new elementwise row gets one with no
// edit here (f32 if the op accepts it, else s32, else pred). Every other opcode has a
// hand-written module in op_examples.cc whose ROOT is the instruction of that opcode; a new
// non-elementwise opcode has none until its author adds one (the tour test then fails and says
// so: checklist step 11).
#pragma once

#include <optional>
#include <string>

#include "hlo/opcodes.h"

namespace tour {

// The module text, or nullopt when the opcode has no example yet.
std::optional<std::string> OpExample(hlo::Opcode op);

// The name of the instruction of opcode `op` in OpExample(op) (always "subject", the ROOT).
inline constexpr const char* kExampleInstruction = "subject";

}  // namespace tour

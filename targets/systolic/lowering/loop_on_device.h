// Which while loops the accelerator runs by itself, and the instruction that lets it.
//
// A loop runs on the device when its condition and its body lowered to accelerator programs
// only: no host step, no conditional (the host chooses branches), and every loop inside them on
// the device too. Its condition's last program then ends with `ctrl.test` on the predicate, and
// the control unit's loop sequencer reads the flag when that program halts (docs/isa.md):
// set, it starts the body's programs; clear, the loop ends. No host round trip per trip.
//
// Guarantees:
//   - HostDrivenReason is "" exactly when both modules are accelerator programs only, and
//     otherwise names the first thing that needs the host (its instruction and why).
//   - EndWithPredicateTest leaves the condition's last program computing what it did, then
//     reading the predicate (the root's one byte in DRAM) once every unit has drained; a
//     condition with no program (its predicate a parameter or a constant) gets one that only
//     tests it.
#pragma once

#include <string>

#include "targets/systolic/lowering/lowering.h"

namespace systolic::lowering {

std::string HostDrivenReason(const LoweredModule& condition, const LoweredModule& body);

void EndWithPredicateTest(LoweredModule& condition);

}  // namespace systolic::lowering

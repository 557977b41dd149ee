// Which while loops and conditionals the accelerator runs by itself, and the instructions that
// let it.
//
// A loop or a conditional runs on the device when every computation it calls (condition and
// body, or every branch) lowered to accelerator programs only: no host step, and every loop or
// conditional inside them on the device too. A loop's condition program then ends with
// `ctrl.test` on its predicate; a conditional's selector is read by `ctrl.test` (pred) or
// `ctrl.index` (s32) at the end of the program before it. The control unit's sequencer reads
// the flag or the index when that program halts (docs/isa.md) and starts the body or the
// chosen branch, or leaves the loop: no host round trip.
//
// Guarantees:
//   - HostNeed is "" exactly when a module is accelerator programs only, and otherwise names
//     the first thing that needs the host (its instruction and why).
//   - EndWithTest leaves the last program of `steps` computing what it did, then running `test`
//     once every unit has drained (so it reads what every earlier step wrote); when the last
//     step is not a program (a host step, none at all), it adds a program that only tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "targets/systolic/lowering/lowering.h"

namespace systolic::lowering {

std::string HostNeed(const LoweredModule& module);

// ctrl.test on the pred byte at `address`; ctrl.index on the s32 at `address` over `count`
// branches.
Instruction PredicateTest(uint64_t address);
Instruction BranchIndexTest(uint64_t address, int64_t count);

void EndWithTest(std::vector<Step>& steps, const Instruction& test);

}  // namespace systolic::lowering

// A memory-minimizing instruction order for one computation.
//
// ScheduleComputation returns every instruction of the computation exactly once, in a
// topological order (each operand before its users) that also keeps instructions with direct
// side effects (side-effecting custom-calls, rng, collectives, after-all) in their definition
// order. Among the instructions ready to run, a greedy list scheduler picks the one with the
// highest memory benefit:
//
//     benefit = bytes freed (operands whose last remaining user it is)
//             - bytes it defines (new temporary storage, see value_sizes.h)
//
// ties broken by definition order, so the result is deterministic. Priorities are kept
// incrementally (an operand that drops to one remaining user credits that user once), so the
// cost is O((instructions + operand edges) log instructions).
//
// Does NOT: look through aliases when crediting frees (freeing a get-tuple-element frees
// nothing; the tuple's elements are freed by their own last users), model in-place reuse, or
// schedule called computations (schedule each one separately). A verified computation is
// acyclic; a cycle is reported as hlo::Error naming the computation.
#pragma once

#include <vector>

#include "hlo/ir.h"

namespace compiler {

std::vector<const hlo::Instruction*> ScheduleComputation(const hlo::Computation& computation);

}  // namespace compiler

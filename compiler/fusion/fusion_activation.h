// Recognizing a GELU activation after a contraction, for output fusion. GELU uses its input
// several times (0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), or with erf), so it
// is not a single-consumer step: it is a small elementwise subgraph whose only inputs are the
// running value and constants, and whose only output is one instruction.
//
// MatchGelu grows that subgraph from the running value's users in topological order (at most
// kMaxActivationInstructions instructions), and succeeds when exactly one member has users
// outside it, every member reads only the value, members, constants or broadcasts of
// constants, and the subgraph contains a tanh or an erf. The value must not be the computation
// root, and neither may any member but the exit (which may be: a fusion replaces it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "hlo/ir.h"

namespace compiler::fusion {

inline constexpr int64_t kMaxActivationInstructions = 16;

struct ActivationMatch {
  std::vector<hlo::Instruction*> members;  // the subgraph plus its constant side inputs
  hlo::Instruction* exit = nullptr;        // the activation's result
};

// `position` gives a topological numbering of the value's computation.
std::optional<ActivationMatch> MatchGelu(
    const hlo::Instruction& value, const std::function<int64_t(const hlo::Instruction*)>& position);

}  // namespace compiler::fusion

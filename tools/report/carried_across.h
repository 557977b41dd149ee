// Carried-across analysis: the owner of every instruction of the ORIGINAL module on each target,
// and from it the share of the model the shared compiler handles on both targets of a pair.
//
// The mapping rule (docs/report-format.md, "carried across"): fusion keeps the names of the
// instructions it fuses, so an original instruction is found in the compiled module by name —
// either as a top-level instruction (its own owner) or inside a fusion (the fusion's owner, the
// attribution AnalyzeOwnership makes). A producer duplicated into several fusions takes the least
// portable of its copies' owners. An original instruction whose name is gone after the pipeline
// (simplified away, merged by CSE, renamed by inlining) takes the owner it has on that target in
// the unoptimized module. Names are looked up module-wide: two non-trivial instructions sharing a
// name in different computations share one lookup.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/ownership.h"
#include "tools/report/report.h"

namespace report {

struct OriginalInstruction {
  std::string name;
  hlo::Opcode opcode;
  double flops = 0;                // compiler::CostModel::Work of the instruction alone
  std::string custom_call_target;  // for custom-calls
};

// The non-trivial instructions of the module `stats` was computed for: every entry with code,
// and for a fusion the non-trivial instructions inside it (nested fusions included).
std::vector<OriginalInstruction> OriginalInstructions(const compiler::ModuleStats& stats);

// The owner of each original instruction on one target, by the rule above. `compiled` is the
// analysis of the target's compiled copy, `unoptimized` that of the original on the same target.
std::map<std::string, OriginalOwner> OwnersOfOriginals(
    const std::vector<OriginalInstruction>& originals, const compiler::ModuleStats& compiled,
    const compiler::ModuleStats& unoptimized);

// What a target needs from outside the shared compiler, grouped by owner and library / custom-call
// target / opcode, in a deterministic order.
std::vector<HandSupplied> HandSuppliedWork(const std::vector<OriginalInstruction>& originals,
                                           const std::map<std::string, OriginalOwner>& owners);

// The share (by instructions and by FLOPs) compiler-owned on both targets; a share of nothing (no
// non-trivial instructions / no FLOPs in the module) is left unset.
CarriedAcross CarriedBetween(const std::vector<OriginalInstruction>& originals,
                             const TargetCell& from, const TargetCell& to);

}  // namespace report

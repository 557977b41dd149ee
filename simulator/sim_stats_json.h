// SimStats as a JSON document (`retarget sim --stats-json`) and as the short terminal summary the
// CLI prints. docs/simulator-output.md documents every key; tests/simulator/trace_test.cc checks
// them against hand-computed values.
//
// Guarantees: the document is one valid JSON object (strings through hlo::JsonString, numbers
// through hlo::JsonNumber, so NaN/inf become null); every unit of isa.def and every byte level
// appears even when zero; ratios over zero cycles are 0, never NaN; integers are printed exactly.
#pragma once

#include <string>
#include <string_view>

#include "simulator/simulator.h"
#include "simulator/isa/arch_config.h"

namespace simulator {

// `program` names the simulated program (its path) in the document.
std::string SimStatsJson(const SimStats& stats, const systolic::ArchConfig& config,
                         std::string_view program);

// A few lines for a terminal: cycles and time, MAC utilization, per-unit busy %, bytes per
// level, energy.
std::string SimStatsSummary(const SimStats& stats, const systolic::ArchConfig& config);

}  // namespace simulator

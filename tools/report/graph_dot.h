// The HLO graph of the report's HTML page: the compiled entry computation of one target as
// Graphviz DOT text, nodes coloured by owner (report.h's kOwnerColours), and its rendering to
// SVG by running `dot -Tsvg` as a subprocess.
//
// Guarantees: EntryGraphDot emits at most `node_budget` nodes — when the entry computation has
// more, trivial instructions (parameters, constants, tuples, ...) are dropped first: every
// non-trivial instruction is kept (the first `node_budget` in program order if they alone are
// too many) and trivial ones fill what room is left, in program order; a note in the graph's
// label says how many of how many are shown. Edges join shown nodes only. Every name and label is escaped, so any module gives valid DOT.
// RenderSvg never hangs (a timeout kills `dot`), never throws for a missing or failing `dot`
// (it returns the reason instead) and reads at most kMaxSvgBytes of output.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/ownership.h"
#include "hlo/ir.h"

namespace report {

inline constexpr int64_t kDefaultGraphNodeBudget = 150;
inline constexpr int64_t kMaxSvgBytes = int64_t{32} << 20;

// `stats` is AnalyzeOwnership(compiled, target).
std::string EntryGraphDot(const hlo::Module& compiled, const compiler::ModuleStats& stats,
                          int64_t node_budget);

struct SvgResult {
  std::string svg;    // the <svg> element alone (XML prolog and doctype removed); "" on failure
  std::string error;  // why there is no SVG ("" on success)
};

SvgResult RenderSvg(const std::string& dot_text, const std::string& dot_program = "dot",
                    int timeout_seconds = 30);

}  // namespace report

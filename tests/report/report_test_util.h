// Shared by the report tests: the small modules whose owners are known by construction, and a
// helper that builds a report for a list of target names.
#pragma once

#include <string>
#include <vector>

#include "compiler/target_description.h"
#include "tests/small_modules.h"
#include "tests/test_support.h"
#include "tools/report/report.h"
#include "targets/descriptions.h"

namespace report_test {

using small_modules::kDotBiasRelu;
using small_modules::kSoftmax;

// One TransformerEngine custom-call (opaque: 0 FLOPs) and an add (4 FLOPs).
inline constexpr char kTeAttention[] = R"(HloModule te
ENTRY main {
  q = f32[4] parameter(0)
  a = f32[4] custom-call(q), custom_call_target="te_fused_attn_forward_ffi"
  ROOT r = f32[4] add(a, q)
}
)";

// An all-reduce (8 FLOPs: one add per element) followed by a negate (8 FLOPs).
inline constexpr char kAllReduce[] = R"(HloModule ar
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), replica_groups={}, to_apply=add_c
  ROOT n = f32[8] negate(ar)
}
)";

inline std::vector<const compiler::TargetDescription*> Targets(
    const std::vector<std::string>& names) {
  std::vector<const compiler::TargetDescription*> targets;
  for (const std::string& name : names) targets.push_back(targets::FindDescription(name));
  return targets;
}

inline report::ModelReport ReportOf(const std::string& text,
                                    const std::vector<const compiler::TargetDescription*>& targets,
                                    const report::ReportOptions& options = {}) {
  auto module = testing_support::ParseAndVerify(text);
  return report::BuildModelReport(module->name(), "", *module, targets, options);
}

inline const report::TargetCell& Cell(const report::ModelReport& model, const std::string& name) {
  for (const report::TargetCell& cell : model.targets) {
    if (cell.target == name) return cell;
  }
  throw std::runtime_error("no cell " + name);
}

inline const report::CarriedAcross& Pair(const report::ModelReport& model, const std::string& from,
                                         const std::string& to) {
  for (const report::CarriedAcross& pair : model.carried_across) {
    if (pair.from == from && pair.to == to) return pair;
  }
  throw std::runtime_error("no pair " + from + "->" + to);
}

// Only the non-zero owner counts, so expectations list what is there.
inline std::map<std::string, int64_t> NonZero(const report::TargetCell& cell) {
  std::map<std::string, int64_t> counts;
  for (const auto& [owner, count] : cell.owners) {
    if (count != 0) counts[owner] = count;
  }
  return counts;
}

}  // namespace report_test

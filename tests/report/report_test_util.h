// Shared by the report tests: the small modules whose owners are known by construction, and a
// helper that builds a report for a list of target names.
#pragma once

#include <string>
#include <vector>

#include "compiler/target_description.h"
#include "tests/test_support.h"
#include "tools/report/report.h"

namespace report_test {

// x[4,8] . w[8,16] + b, relu: dot (2*4*16*8 = 1024 FLOPs), 2 broadcasts (0), add (64),
// maximum (64): 5 non-trivial instructions, 1152 FLOPs.
inline constexpr char kDotBiasRelu[] = R"(HloModule dbr
ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  dot = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(b), dimensions={1}
  add = f32[4,16] add(dot, bb)
  zero = f32[] constant(0)
  zb = f32[4,16] broadcast(zero), dimensions={}
  ROOT relu = f32[4,16] maximum(add, zb)
}
)";

// softmax over rows of f32[2,8]: 2 reduces, 2 broadcasts, subtract, exp, divide = 7 non-trivial
// instructions; reduces, subtract, exp, divide touch 16 elements each: 80 FLOPs.
inline constexpr char kSoftmax[] = R"(HloModule softmax
max_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[2,8] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[2] reduce(p, ninf), dimensions={1}, to_apply=max_c
  mb = f32[2,8] broadcast(m), dimensions={0}
  s = f32[2,8] subtract(p, mb)
  e = f32[2,8] exponential(s)
  z = f32[] constant(0)
  sum = f32[2] reduce(e, z), dimensions={1}, to_apply=add_c
  sb = f32[2,8] broadcast(sum), dimensions={0}
  ROOT d = f32[2,8] divide(e, sb)
}
)";

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
  for (const std::string& name : names) targets.push_back(compiler::FindTarget(name));
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

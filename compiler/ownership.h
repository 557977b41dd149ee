// Ownership analysis and the cost model: after a target's pipeline, who runs each instruction,
// and what it costs.
//
// Post-condition of AnalyzeOwnership: every instruction of the entry computation and of every
// computation reachable through control flow (while/conditional/call bodies) gets exactly one
// Owner; instructions inside a fusion's computation are attributed to the fusion's owner (and
// counted as fused). FLOPs and bytes come from the cost model (compiler/cost_model.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler {

struct InstructionCost {
  double flops = 0;        // 2*M*N*K for dot, etc.; elementwise ops count 1 per element
  double bytes_read = 0;   // operand bytes touched from memory (fusion-internal values excluded)
  double bytes_written = 0;
  double transcendentals = 0;  // exp, log, tanh, rsqrt, ...: also counted in flops (1 each)
};

struct OwnerInfo {
  Owner owner = Owner::kNoCode;
  std::string library;     // for kLibrary: "cuBLASLt", "cuDNN", "Eigen", ...
  std::string detail;      // e.g. the custom-call target, or why it fell back to the host
};

struct OwnershipEntry {
  const hlo::Instruction* instruction = nullptr;  // top-level instruction (fusion or op)
  OwnerInfo info;
  InstructionCost cost;
  int64_t fused_instructions = 0;  // non-trivial instructions inside (1 for an unfused op)
};

struct ModuleStats {
  std::vector<OwnershipEntry> entries;
  std::map<std::string, int64_t> instructions_by_owner;  // OwnerName -> count (fused counted)
  std::map<std::string, double> flops_by_owner;
  int64_t kernel_count = 0;          // generated kernels + library calls + native ops launched
  double fusion_coverage = 0;        // share of non-trivial instructions inside a multi-op fusion
  int64_t peak_buffer_bytes = 0;     // from buffer assignment
  double total_flops = 0, total_bytes = 0;
  double total_transcendentals = 0;
  // Traffic to and from host memory (values whose layout says S(5), XLA's host offloading):
  // each such value's bytes once when written and once per instruction that reads it.
  double host_memory_bytes = 0;
  std::string target;                // TargetDescription::name the analysis ran for
};

// `lowered_on_host`, when a backend's lowering was asked (targets::Backend::HostSteps): the
// instructions it runs on the host, by name, with its reasons. Each becomes a host fallback
// whatever the description's rules say, with the lowering's reason: the lowering has the last
// word on what the target runs.
ModuleStats AnalyzeOwnership(const hlo::Module& module, const TargetDescription& target,
                             const std::map<std::string, std::string>* lowered_on_host = nullptr);

// The owner of one top-level instruction by the rules AnalyzeOwnership applies (a fusion: the
// owner of its fused kernel). The fusion passes use it to keep host-fallback and device ops in
// separate fusions.
OwnerInfo InstructionOwner(const hlo::Instruction& inst, const TargetDescription& target);

// The stats as one JSON object (the `retarget compile --stats-json` file; fields documented in
// docs/ownership.md), with the per-pass times in milliseconds under "pass_times_ms": the tree,
// for a caller that adds fields of its own, and its text.
nlohmann::ordered_json ModuleStatsJson(const ModuleStats& stats,
                                       const std::map<std::string, double>& pass_times_ms);
std::string ModuleStatsToJson(const ModuleStats& stats,
                              const std::map<std::string, double>& pass_times_ms);

}  // namespace compiler

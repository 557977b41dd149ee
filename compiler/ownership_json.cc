// ModuleStatsToJson: the `retarget compile --stats-json` file (fields in docs/ownership.md),
// built as an nlohmann::ordered_json tree.
//
// Guarantees: the output is one valid JSON object (RFC 8259) whatever the strings in the module
// hold (the library escapes them; bytes that are not valid UTF-8 become U+FFFD), and non-finite
// numbers are written as null. Fields come in the documented order and maps in key order, two
// spaces an indent, so the file is deterministic.
#include <cmath>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/ownership.h"
#include "hlo/json_text.h"

namespace compiler {
namespace {

using Json = nlohmann::ordered_json;

Json Number(double value) { return hlo::JsonNumberValue(value); }
Json Number(int64_t value) { return Json(value); }

template <typename Value>
Json Map(const std::map<std::string, Value>& values) {
  Json out = Json::object();
  for (const auto& [key, value] : values) out[key] = Number(value);
  return out;
}

Json EntryJson(const OwnershipEntry& entry) {
  const hlo::Instruction& inst = *entry.instruction;
  Json out = {{"computation", inst.parent() != nullptr ? inst.parent()->name() : ""},
              {"name", inst.name()},
              {"opcode", std::string(hlo::OpcodeName(inst.opcode()))},
              {"owner", std::string(OwnerName(entry.info.owner))}};
  if (!entry.info.library.empty()) out["library"] = entry.info.library;
  if (!entry.info.detail.empty()) out["detail"] = entry.info.detail;
  out["fused_instructions"] = entry.fused_instructions;
  out["flops"] = Number(entry.cost.flops);
  out["transcendentals"] = Number(entry.cost.transcendentals);
  out["bytes_read"] = Number(entry.cost.bytes_read);
  out["bytes_written"] = Number(entry.cost.bytes_written);
  return out;
}

}  // namespace

Json ModuleStatsJson(const ModuleStats& stats, const std::map<std::string, double>& pass_times_ms) {
  // Aggregates derived from the entries: per-library counts, and for the owners that explain
  // themselves (host fallback, unsupported custom-call, collective) how often each reason occurs.
  int64_t instructions = 0, no_code = 0;
  std::map<std::string, int64_t> library_instructions;
  std::map<std::string, double> library_flops;
  std::map<std::string, std::map<std::string, int64_t>> details;
  for (const OwnershipEntry& entry : stats.entries) {
    if (entry.info.owner == Owner::kNoCode) {
      ++no_code;
      continue;
    }
    instructions += entry.fused_instructions;
    if (entry.info.owner == Owner::kLibrary) {
      library_instructions[entry.info.library] += entry.fused_instructions;
      library_flops[entry.info.library] += entry.cost.flops;
    }
    if (entry.info.owner == Owner::kHostFallback ||
        entry.info.owner == Owner::kUnsupportedCustomCall ||
        entry.info.owner == Owner::kCollective) {
      details[std::string(OwnerName(entry.info.owner))][entry.info.detail] +=
          entry.fused_instructions;
    }
  }
  double total_pass_ms = 0;
  for (const auto& [name, ms] : pass_times_ms) total_pass_ms += ms;

  Json details_by_owner = Json::object();
  for (const auto& [owner, reasons] : details) details_by_owner[owner] = Map(reasons);
  // Instructions that generate no code are summarized by no_code_instructions only.
  Json entries = Json::array();
  for (const OwnershipEntry& entry : stats.entries) {
    if (entry.info.owner == Owner::kNoCode || entry.instruction == nullptr) continue;
    entries.push_back(EntryJson(entry));
  }
  return Json{{"target", stats.target},
              {"instructions", instructions},
              {"no_code_instructions", no_code},
              {"instructions_by_owner", Map(stats.instructions_by_owner)},
              {"flops_by_owner", Map(stats.flops_by_owner)},
              {"library_instructions", Map(library_instructions)},
              {"library_flops", Map(library_flops)},
              {"details_by_owner", std::move(details_by_owner)},
              {"kernel_count", stats.kernel_count},
              {"fusion_coverage", Number(stats.fusion_coverage)},
              {"peak_buffer_bytes", stats.peak_buffer_bytes},
              {"total_flops", Number(stats.total_flops)},
              {"total_transcendentals", Number(stats.total_transcendentals)},
              {"total_bytes", Number(stats.total_bytes)},
              {"host_memory_bytes", Number(stats.host_memory_bytes)},
              {"pass_times_ms", Map(pass_times_ms)},
              {"total_pass_time_ms", Number(total_pass_ms)},
              {"entries", std::move(entries)}};
}

std::string ModuleStatsToJson(const ModuleStats& stats,
                              const std::map<std::string, double>& pass_times_ms) {
  return hlo::JsonText(ModuleStatsJson(stats, pass_times_ms)) + "\n";
}

}  // namespace compiler

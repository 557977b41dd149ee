// ModuleStatsToJson: the `retarget compile --stats-json` file (fields in docs/ownership.md).
//
// Guarantees: the output is one valid JSON object (RFC 8259) whatever the strings in the module
// hold — quotes, backslashes and control characters are escaped, bytes that are not valid UTF-8
// become U+FFFD — and non-finite numbers are written as null. Maps are written in key order,
// so the file is deterministic. Standard library only.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <system_error>

#include "compiler/ownership.h"
#include "hlo/json_text.h"

namespace compiler {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 if it is not one.
void AppendString(std::string& out, const std::string& text) { out += hlo::JsonString(text); }

void AppendNumber(std::string& out, double value) { out += hlo::JsonNumber(value); }

void AppendNumber(std::string& out, int64_t value) { out += std::to_string(value); }

// {"key": number, ...} on one line.
template <typename Number>
void AppendMap(std::string& out, const std::map<std::string, Number>& values) {
  out += '{';
  bool first = true;
  for (const auto& [key, value] : values) {
    out += first ? "" : ", ";
    first = false;
    AppendString(out, key);
    out += ": ";
    AppendNumber(out, value);
  }
  out += '}';
}

void AppendKey(std::string& out, const char* key) {
  out += "  ";
  AppendString(out, key);
  out += ": ";
}

void AppendEntry(std::string& out, const OwnershipEntry& entry) {
  const hlo::Instruction& inst = *entry.instruction;
  out += "    {\"computation\": ";
  AppendString(out, inst.parent() != nullptr ? inst.parent()->name() : "");
  out += ", \"name\": ";
  AppendString(out, inst.name());
  out += ", \"opcode\": ";
  AppendString(out, std::string(hlo::OpcodeName(inst.opcode())));
  out += ", \"owner\": ";
  AppendString(out, std::string(OwnerName(entry.info.owner)));
  if (!entry.info.library.empty()) {
    out += ", \"library\": ";
    AppendString(out, entry.info.library);
  }
  if (!entry.info.detail.empty()) {
    out += ", \"detail\": ";
    AppendString(out, entry.info.detail);
  }
  out += ", \"fused_instructions\": ";
  AppendNumber(out, entry.fused_instructions);
  out += ", \"flops\": ";
  AppendNumber(out, entry.cost.flops);
  out += ", \"transcendentals\": ";
  AppendNumber(out, entry.cost.transcendentals);
  out += ", \"bytes_read\": ";
  AppendNumber(out, entry.cost.bytes_read);
  out += ", \"bytes_written\": ";
  AppendNumber(out, entry.cost.bytes_written);
  out += '}';
}

}  // namespace

std::string ModuleStatsToJson(const ModuleStats& stats,
                              const std::map<std::string, double>& pass_times_ms) {
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

  std::string out = "{\n";
  AppendKey(out, "target");
  AppendString(out, stats.target);
  out += ",\n";
  AppendKey(out, "instructions");
  AppendNumber(out, instructions);
  out += ",\n";
  AppendKey(out, "no_code_instructions");
  AppendNumber(out, no_code);
  out += ",\n";
  AppendKey(out, "instructions_by_owner");
  AppendMap(out, stats.instructions_by_owner);
  out += ",\n";
  AppendKey(out, "flops_by_owner");
  AppendMap(out, stats.flops_by_owner);
  out += ",\n";
  AppendKey(out, "library_instructions");
  AppendMap(out, library_instructions);
  out += ",\n";
  AppendKey(out, "library_flops");
  AppendMap(out, library_flops);
  out += ",\n";
  AppendKey(out, "details_by_owner");
  out += '{';
  bool first = true;
  for (const auto& [owner, reasons] : details) {
    out += first ? "" : ", ";
    first = false;
    AppendString(out, owner);
    out += ": ";
    AppendMap(out, reasons);
  }
  out += "},\n";
  AppendKey(out, "kernel_count");
  AppendNumber(out, stats.kernel_count);
  out += ",\n";
  AppendKey(out, "fusion_coverage");
  AppendNumber(out, stats.fusion_coverage);
  out += ",\n";
  AppendKey(out, "peak_buffer_bytes");
  AppendNumber(out, stats.peak_buffer_bytes);
  out += ",\n";
  AppendKey(out, "total_flops");
  AppendNumber(out, stats.total_flops);
  out += ",\n";
  AppendKey(out, "total_transcendentals");
  AppendNumber(out, stats.total_transcendentals);
  out += ",\n";
  AppendKey(out, "total_bytes");
  AppendNumber(out, stats.total_bytes);
  out += ",\n";
  AppendKey(out, "host_memory_bytes");
  AppendNumber(out, stats.host_memory_bytes);
  out += ",\n";
  AppendKey(out, "pass_times_ms");
  AppendMap(out, pass_times_ms);
  out += ",\n";
  AppendKey(out, "total_pass_time_ms");
  AppendNumber(out, total_pass_ms);
  out += ",\n";
  // Instructions that generate no code are summarized by no_code_instructions only.
  AppendKey(out, "entries");
  out += "[";
  first = true;
  for (const OwnershipEntry& entry : stats.entries) {
    if (entry.info.owner == Owner::kNoCode || entry.instruction == nullptr) continue;
    out += first ? "\n" : ",\n";
    first = false;
    AppendEntry(out, entry);
  }
  out += first ? "]\n" : "\n  ]\n";
  out += "}\n";
  return out;
}

}  // namespace compiler

// ReportToJson: the JSON document of docs/report-format.md.
//
// Guarantees: one valid JSON object (RFC 8259) whatever the strings hold (quotes, backslashes
// and control characters escaped; bytes that are not UTF-8 pass through only as U+FFFD escapes);
// non-finite numbers and unknown figures are null; keys are written in the documented order, so
// the output is deterministic. Standard library only.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <system_error>

#include "hlo/json_text.h"
#include "tools/report/report.h"

namespace report {
namespace {

std::string Str(const std::string& text) { return hlo::JsonString(text); }
std::string Num(double value) { return hlo::JsonNumber(value); }
std::string Num(const std::optional<double>& value) { return value ? Num(*value) : "null"; }

template <typename Value, typename Format>
std::string OwnerMap(const std::map<std::string, Value>& values, Format format) {
  std::string out = "{";
  for (std::string_view key : kOwnerKeys) {
    auto it = values.find(std::string(key));
    out += (out.size() > 1 ? ", " : "") + Str(std::string(key)) + ": " +
           (it == values.end() ? std::string("null") : format(it->second));
  }
  return out + "}";
}

std::string CellJson(const TargetCell& cell) {
  const bool ok = !cell.error;
  auto or_null = [&](const std::string& json) { return ok ? json : std::string("null"); };
  std::string out = "{";
  out += "\"owners\": " +
         or_null(OwnerMap(cell.owners, [](int64_t n) { return std::to_string(n); }));
  out += ", \"owners_original\": " +
         or_null(OwnerMap(cell.owners_original, [](int64_t n) { return std::to_string(n); }));
  out += ", \"flops_share\": " + or_null(OwnerMap(cell.flops_share, [](double x) { return Num(x); }));
  out += ", \"flops_share_original\": " +
         or_null(OwnerMap(cell.flops_share_original, [](double x) { return Num(x); }));
  out += ", \"bytes_share\": " + or_null(OwnerMap(cell.bytes_share, [](double x) { return Num(x); }));
  out += ", \"fusion_coverage\": " + or_null(Num(cell.fusion_coverage));
  out += ", \"kernels\": " + or_null(std::to_string(cell.kernels));
  std::string calls = "[";
  for (const CustomCallUse& use : cell.custom_calls) {
    calls += (calls.size() > 1 ? ", " : "") + std::string("{\"target\": ") + Str(use.target) +
             ", \"count\": " + std::to_string(use.count) +
             ", \"supported\": " + (use.supported ? "true" : "false") +
             ", \"owner\": " + Str(use.owner) + "}";
  }
  out += ", \"custom_calls\": " + or_null(calls + "]");
  out += ", \"host_memory_bytes\": " + or_null(Num(cell.host_memory_bytes));
  out += ", \"latency_ms\": " + or_null(Num(cell.latency_ms));
  out += ", \"latency_source\": " + or_null(Str(cell.latency_source));
  out += ", \"latency_host_share\": " +
         (ok && cell.latency_host_share ? Num(*cell.latency_host_share) : std::string("null"));
  out += ", \"latency_device\": " +
         (ok && !cell.latency_device.empty() ? Str(cell.latency_device) : std::string("null"));
  out += ", \"latency_note\": " +
         (ok && !cell.latency_note.empty() ? Str(cell.latency_note) : std::string("null"));
  out += ", \"energy_mj\": " + Num(cell.energy_mj);
  out += ", \"energy_source\": " + (ok && cell.energy_mj ? Str(cell.energy_source) : "null");
  out += ", \"cost_per_1m_usd\": " + Num(cell.cost_per_1m_usd);
  out += ", \"usd_per_hour\": " + (ok ? Num(cell.price.usd_per_hour) : "null");
  out += ", \"price_source\": " +
         (ok && cell.price.usd_per_hour ? Str(cell.price.source) : std::string("null"));
  std::string hand = "[";
  for (const HandSupplied& work : cell.by_hand) {
    hand += (hand.size() > 1 ? ", " : "") + std::string("{\"owner\": ") + Str(work.owner) +
            ", \"what\": " + Str(work.what) +
            ", \"instructions\": " + std::to_string(work.instructions) + "}";
  }
  out += ", \"by_hand\": " + or_null(hand + "]");
  if (ok && cell.collectives > 0) {
    out += ", \"communication\": {\"collectives\": " + std::to_string(cell.collectives) +
           ", \"ms\": " + Num(cell.communication_ms) + ", \"source\": \"estimated\"" +
           ", \"share_of_estimate\": " +
           (cell.communication_ms ? Num(cell.communication_share) : std::string("null")) +
           ", \"interconnect\": " +
           (cell.interconnect.empty() ? std::string("null") : Str(cell.interconnect)) +
           ", \"note\": " +
           (cell.communication_note.empty() ? std::string("null") : Str(cell.communication_note)) +
           "}";
  }
  if (cell.error) out += ", \"error\": " + Str(*cell.error);
  return out + "}";
}

std::string PairJson(const CarriedAcross& pair) {
  std::string out = "{\"instructions\": " + Num(pair.instructions) + ", \"flops\": " +
                    Num(pair.flops);
  if (pair.error) out += ", \"error\": " + Str(*pair.error);
  return out + "}";
}

std::string ModelJson(const ModelReport& model) {
  std::string out = "    {\"name\": " + Str(model.name) + ", \"file\": " + Str(model.file) +
                    ", \"module\": " + Str(model.module) +
                    ", \"instructions\": " + std::to_string(model.instructions) +
                    ", \"flops\": " + Num(model.flops);
  if (model.error) out += ", \"error\": " + Str(*model.error);
  out += ",\n     \"targets\": {";
  bool first = true;
  for (const TargetCell& cell : model.targets) {
    out += std::string(first ? "\n" : ",\n") + "       " + Str(cell.target) + ": " +
           CellJson(cell);
    first = false;
  }
  out += first ? "},\n" : "\n     },\n";
  out += "     \"carried_across\": {";
  first = true;
  for (const CarriedAcross& pair : model.carried_across) {
    out += std::string(first ? "\n" : ",\n") + "       " + Str(pair.from + "->" + pair.to) +
           ": " + PairJson(pair);
    first = false;
  }
  out += first ? "}" : "\n     }";
  std::string calls = "[";
  for (const ModelCustomCall& call : model.custom_calls) {
    std::string by = "[";
    for (const std::string& target : call.implemented_by) {
      by += (by.size() > 1 ? ", " : "") + Str(target);
    }
    calls += std::string(calls.size() > 1 ? ",\n       " : "\n       ") +
             "{\"target\": " + Str(call.target) + ", \"count\": " + std::to_string(call.count) +
             ", \"implemented_by\": " + by + "], \"kernel_locked\": " +
             (call.kernel_locked ? "true" : "false") + "}";
  }
  out += ",\n     \"custom_calls\": " + calls + (calls.size() > 1 ? "\n     ]}" : "]}");
  return out;
}

}  // namespace

std::string ReportToJson(const Report& report) {
  std::string out = "{\"models\": [";
  for (size_t i = 0; i < report.models.size(); ++i) {
    out += (i ? ",\n" : "\n") + ModelJson(report.models[i]);
  }
  out += report.models.empty() ? "]" : "\n  ]";
  out += ",\n \"systolic_config\": " +
         (report.systolic_config.empty() ? std::string("null") : Str(report.systolic_config));
  return out + "}\n";
}

}  // namespace report

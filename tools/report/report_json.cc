// ReportToJson: the JSON document of docs/report-format.md, built as an nlohmann::ordered_json
// tree.
//
// Guarantees: one valid JSON object (RFC 8259) whatever the strings hold (the library escapes
// them; bytes that are not UTF-8 are replaced by U+FFFD); non-finite numbers and unknown figures
// are null; counts are integers; keys are written in the documented order, two spaces an
// indent, so the output is deterministic and diffs line by line.
#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hlo/json_text.h"
#include "tools/report/report.h"

namespace report {
namespace {

using Json = nlohmann::ordered_json;

Json Num(double value) { return hlo::JsonNumberValue(value); }
Json Num(const std::optional<double>& value) { return value ? Num(*value) : Json(nullptr); }
Json TextOrNull(bool present, const std::string& text) {
  return present ? Json(text) : Json(nullptr);
}

template <typename Value>
Json OwnerMap(const std::map<std::string, Value>& values) {
  Json out = Json::object();
  for (std::string_view key : kOwnerKeys) {
    auto it = values.find(std::string(key));
    if (it == values.end()) {
      out[std::string(key)] = nullptr;
    } else if constexpr (std::is_floating_point_v<Value>) {
      out[std::string(key)] = Num(it->second);
    } else {
      out[std::string(key)] = it->second;
    }
  }
  return out;
}

Json CellJson(const TargetCell& cell) {
  const bool ok = !cell.error;
  auto or_null = [&](Json json) { return ok ? std::move(json) : Json(nullptr); };
  Json out = Json::object();
  out["owners"] = or_null(OwnerMap(cell.owners));
  out["owners_original"] = or_null(OwnerMap(cell.owners_original));
  out["flops_share"] = or_null(OwnerMap(cell.flops_share));
  out["flops_share_original"] = or_null(OwnerMap(cell.flops_share_original));
  out["bytes_share"] = or_null(OwnerMap(cell.bytes_share));
  out["fusion_coverage"] = or_null(Num(cell.fusion_coverage));
  out["kernels"] = or_null(cell.kernels);
  Json calls = Json::array();
  for (const CustomCallUse& use : cell.custom_calls) {
    calls.push_back({{"target", use.target}, {"count", use.count},
                     {"supported", use.supported}, {"owner", use.owner}});
  }
  out["custom_calls"] = or_null(std::move(calls));
  out["host_memory_bytes"] = or_null(Num(cell.host_memory_bytes));
  out["latency_ms"] = or_null(Num(cell.latency_ms));
  out["latency_source"] = or_null(cell.latency_source);
  out["latency_host_share"] =
      ok && cell.latency_host_share ? Num(*cell.latency_host_share) : Json(nullptr);
  out["latency_device"] = TextOrNull(ok && !cell.latency_device.empty(), cell.latency_device);
  out["latency_note"] = TextOrNull(ok && !cell.latency_note.empty(), cell.latency_note);
  out["energy_mj"] = Num(cell.energy_mj);
  out["energy_source"] = TextOrNull(ok && cell.energy_mj, cell.energy_source);
  out["cost_per_1m_usd"] = Num(cell.cost_per_1m_usd);
  out["usd_per_hour"] = ok ? Num(cell.price.usd_per_hour) : Json(nullptr);
  out["price_source"] = TextOrNull(ok && cell.price.usd_per_hour, cell.price.source);
  Json hand = Json::array();
  for (const HandSupplied& work : cell.by_hand) {
    hand.push_back(
        {{"owner", work.owner}, {"what", work.what}, {"instructions", work.instructions}});
  }
  out["by_hand"] = or_null(std::move(hand));
  if (ok && cell.collectives > 0) {
    out["communication"] = {
        {"collectives", cell.collectives},
        {"ms", Num(cell.communication_ms)},
        {"source", "estimated"},
        {"share_of_estimate",
         cell.communication_ms ? Num(cell.communication_share) : Json(nullptr)},
        {"interconnect", TextOrNull(!cell.interconnect.empty(), cell.interconnect)},
        {"note", TextOrNull(!cell.communication_note.empty(), cell.communication_note)}};
  }
  if (cell.error) out["error"] = *cell.error;
  return out;
}

Json PairJson(const CarriedAcross& pair) {
  Json out = {{"instructions", Num(pair.instructions)}, {"flops", Num(pair.flops)}};
  if (pair.error) out["error"] = *pair.error;
  return out;
}

Json ModelJson(const ModelReport& model) {
  Json out = {{"name", model.name},
              {"file", model.file},
              {"module", model.module},
              {"instructions", model.instructions},
              {"flops", Num(model.flops)}};
  if (model.error) out["error"] = *model.error;
  Json targets = Json::object();
  for (const TargetCell& cell : model.targets) targets[cell.target] = CellJson(cell);
  out["targets"] = std::move(targets);
  Json pairs = Json::object();
  for (const CarriedAcross& pair : model.carried_across) {
    pairs[pair.from + "->" + pair.to] = PairJson(pair);
  }
  out["carried_across"] = std::move(pairs);
  Json calls = Json::array();
  for (const ModelCustomCall& call : model.custom_calls) {
    calls.push_back({{"target", call.target},
                     {"count", call.count},
                     {"implemented_by", call.implemented_by},
                     {"kernel_locked", call.kernel_locked}});
  }
  out["custom_calls"] = std::move(calls);
  return out;
}

}  // namespace

std::string ReportToJson(const Report& report) {
  Json models = Json::array();
  for (const ModelReport& model : report.models) models.push_back(ModelJson(model));
  const Json document = {
      {"models", std::move(models)},
      {"systolic_config", TextOrNull(!report.systolic_config.empty(), report.systolic_config)}};
  return hlo::JsonText(document) + "\n";
}

}  // namespace report

// SimStatsJson and SimStatsSummary (sim_stats_json.h). The key names here are the ones
// docs/simulator-output.md documents; change both together. The JSON is an nlohmann::ordered_json
// tree, written with two spaces an indent.
#include "simulator/sim_stats_json.h"

#include <cmath>
#include <cstdio>
#include <variant>

#include <nlohmann/json.hpp>

#include "hlo/json_text.h"

namespace simulator {
namespace {

using Json = nlohmann::ordered_json;

// part / whole, 0 when whole is 0 (a zero-cycle run): both outputs use it, so they agree.
double Fraction(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}
Json Number(double value) { return hlo::JsonNumberValue(value); }
std::string Integer(int64_t value) { return std::to_string(value); }

// Every configuration key with its value: numbers as numbers, the rest as their config-file text.
Json ConfigJson(const systolic::ArchConfig& config) {
  Json object = Json::object();
  for (const systolic::ArchKey& key : systolic::ArchKeys()) {
    switch (key.type) {
      case systolic::KeyType::kInt:
      case systolic::KeyType::kBytes:
        object[key.key] = config.*std::get<int64_t systolic::ArchConfig::*>(key.member);
        break;
      case systolic::KeyType::kDouble:
        object[key.key] = Number(config.*std::get<double systolic::ArchConfig::*>(key.member));
        break;
      case systolic::KeyType::kString:
      case systolic::KeyType::kDataflow:
      case systolic::KeyType::kDtypes:
      case systolic::KeyType::kTopology:
        object[key.key] = systolic::FormatValue(config, key);
        break;
    }
  }
  return object;
}

int64_t TotalStalls(const UnitStats& unit) {
  int64_t total = 0;
  for (const auto& [cause, cycles] : unit.stall_cycles) total += cycles;
  return total;
}

Json UnitsJson(const SimStats& stats) {
  Json units = Json::object();
  for (size_t u = 0; u < kUnitCount; ++u) {
    const UnitStats& unit = stats.units[u];
    Json stalls = Json::object();
    for (const auto& [cause, cycles] : unit.stall_cycles) stalls[cause] = cycles;
    units[std::string(systolic::UnitName(static_cast<systolic::Unit>(u)))] = {
        {"instructions", unit.instructions},
        {"busy_cycles", unit.busy_cycles},
        {"utilization", Number(Fraction(unit.busy_cycles, stats.cycles))},
        {"stall_cycles_total", TotalStalls(unit)},
        {"stall_cycles", std::move(stalls)}};
  }
  return units;
}

// The sum of the components (the same figure as SimStats::total_energy_pj()).
double EnergyTotal(const SimStats& stats) {
  double total = 0;
  for (const auto& [component, pj] : stats.energy_pj) total += pj;
  return total;
}

std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f %%", 100 * fraction);
  return buffer;
}

std::string Fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

}  // namespace

std::string SimStatsJson(const SimStats& stats, const systolic::ArchConfig& config,
                         std::string_view program) {
  int64_t instructions = 0;
  for (const UnitStats& unit : stats.units) instructions += unit.instructions;
  const double ops_per_second = stats.seconds > 0 ? 2.0 * static_cast<double>(stats.macs) /
                                                        stats.seconds
                                                  : 0.0;
  Json energy = Json::object();
  for (const auto& [component, pj] : stats.energy_pj) energy[component] = Number(pj);
  energy["total"] = Number(EnergyTotal(stats));

  const Json document = {
      {"format", "retarget-sim-stats"},
      {"version", 1},
      {"program", std::string(program)},
      {"config", ConfigJson(config)},
      {"cycles", stats.cycles},
      {"clock_mhz", Number(stats.clock_mhz)},
      {"seconds", Number(stats.seconds)},
      {"instructions", instructions},
      {"macs", stats.macs},
      {"peak_macs_per_cycle", systolic::PeakMacsPerCycle(config)},
      {"mac_utilization", Number(stats.mac_utilization)},
      {"ops_per_second", Number(ops_per_second)},
      {"vector_element_ops", stats.vector_element_ops},
      {"units", UnitsJson(stats)},
      {"bytes",
       {{"dram_read", stats.dram_bytes_read},
        {"dram_written", stats.dram_bytes_written},
        {"ub_read", stats.ub_bytes_read},
        {"ub_written", stats.ub_bytes_written},
        {"acc_read", stats.acc_bytes_read},
        {"acc_written", stats.acc_bytes_written}}},
      {"peak_bytes_live", {{"ub", stats.ub_peak_bytes_live}, {"acc", stats.acc_peak_bytes_live}}},
      {"energy_pj", std::move(energy)}};
  return hlo::JsonText(document) + "\n";
}

std::string SimStatsSummary(const SimStats& stats, const systolic::ArchConfig& config) {
  std::string out = "cycles: " + Integer(stats.cycles) + " (" +
                    Fixed(stats.seconds * 1e6, 3) + " us at " + hlo::JsonNumber(stats.clock_mhz) +
                    " MHz, config " + config.name + ", " + Integer(config.array_rows) + "x" +
                    Integer(config.array_cols) + " " +
                    std::string(systolic::DataflowName(config.dataflow)) + ")\n";
  out += "MAC utilization: " + Percent(stats.mac_utilization) + " (" + Integer(stats.macs) +
         " MACs of " + Integer(systolic::PeakMacsPerCycle(config)) + " per cycle), " +
         Integer(stats.vector_element_ops) + " vector element ops\n";
  out += "busy:";
  for (size_t u = 0; u < kUnitCount; ++u) {
    out += std::string(u ? "," : "") + " " +
           std::string(systolic::UnitName(static_cast<systolic::Unit>(u))) + " " +
           Percent(Fraction(stats.units[u].busy_cycles, stats.cycles));
  }
  out += "\nstalls:";
  bool any_stall = false;
  for (size_t u = 0; u < kUnitCount; ++u) {
    for (const auto& [cause, cycles] : stats.units[u].stall_cycles) {
      if (cycles == 0) continue;
      out += std::string(any_stall ? "," : "") + " " +
             std::string(systolic::UnitName(static_cast<systolic::Unit>(u))) + " " + cause + " " +
             Integer(cycles);
      any_stall = true;
    }
  }
  out += any_stall ? "\n" : " none\n";
  out += "bytes: dram read " + Integer(stats.dram_bytes_read) + " written " +
         Integer(stats.dram_bytes_written) + ", ub read " + Integer(stats.ub_bytes_read) +
         " written " + Integer(stats.ub_bytes_written) + ", acc read " +
         Integer(stats.acc_bytes_read) + " written " + Integer(stats.acc_bytes_written) + "\n";
  auto peak = [](int64_t bytes) { return bytes < 0 ? std::string("not tracked") : Integer(bytes); };
  out += "peak live bytes: ub " + peak(stats.ub_peak_bytes_live) + ", acc " +
         peak(stats.acc_peak_bytes_live) + "\n";
  out += "energy: " + Fixed(EnergyTotal(stats), 1) + " pJ";
  std::string parts;
  for (const auto& [component, pj] : stats.energy_pj) {
    parts += (parts.empty() ? "" : ", ") + component + " " + Fixed(pj, 1);
  }
  out += parts.empty() ? "\n" : " (" + parts + ")\n";
  return out;
}

}  // namespace simulator

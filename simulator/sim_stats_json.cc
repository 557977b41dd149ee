// SimStatsJson and SimStatsSummary (sim_stats_json.h). The key names here are the ones
// docs/simulator-output.md documents; change both together.
#include "simulator/sim_stats_json.h"

#include <cstdio>
#include <variant>

#include "hlo/json_text.h"

namespace simulator {
namespace {

std::string Quote(std::string_view text) { return hlo::JsonString(text); }
// part / whole, 0 when whole is 0 (a zero-cycle run): both outputs use it, so they agree.
double Fraction(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}
std::string Number(double value) { return hlo::JsonNumber(value); }
std::string Integer(int64_t value) { return std::to_string(value); }

// Builds one pretty-printed JSON object; values are already-encoded JSON text.
class ObjectText {
 public:
  explicit ObjectText(int depth) : depth_(depth) {}
  ObjectText& Add(std::string_view key, const std::string& json) {
    if (!text_.empty()) text_ += ',';
    text_ += '\n';
    text_.append(Indent(depth_ + 1)).append(Quote(key)).append(": ").append(json);
    return *this;
  }
  std::string Close() const {
    return text_.empty() ? "{}" : "{" + text_ + "\n" + Indent(depth_) + "}";
  }

 private:
  static std::string Indent(int depth) { return std::string(2 * static_cast<size_t>(depth), ' '); }
  int depth_;
  std::string text_;
};

// Every configuration key with its value: numbers as numbers, the rest as their config-file text.
std::string ConfigJson(const systolic::ArchConfig& config) {
  ObjectText object(1);
  for (const systolic::ArchKey& key : systolic::ArchKeys()) {
    std::string value;
    switch (key.type) {
      case systolic::KeyType::kInt:
      case systolic::KeyType::kBytes:
        value = Integer(config.*std::get<int64_t systolic::ArchConfig::*>(key.member));
        break;
      case systolic::KeyType::kDouble:
        value = Number(config.*std::get<double systolic::ArchConfig::*>(key.member));
        break;
      case systolic::KeyType::kString:
      case systolic::KeyType::kDataflow:
      case systolic::KeyType::kDtypes:
        value = Quote(systolic::FormatValue(config, key));
        break;
    }
    object.Add(key.key, value);
  }
  return object.Close();
}

int64_t TotalStalls(const UnitStats& unit) {
  int64_t total = 0;
  for (const auto& [cause, cycles] : unit.stall_cycles) total += cycles;
  return total;
}

std::string UnitsJson(const SimStats& stats) {
  ObjectText units(1);
  for (size_t u = 0; u < kUnitCount; ++u) {
    const UnitStats& unit = stats.units[u];
    ObjectText stalls(3);
    for (const auto& [cause, cycles] : unit.stall_cycles) stalls.Add(cause, Integer(cycles));
    units.Add(systolic::UnitName(static_cast<systolic::Unit>(u)),
              ObjectText(2)
                  .Add("instructions", Integer(unit.instructions))
                  .Add("busy_cycles", Integer(unit.busy_cycles))
                  .Add("utilization", Number(Fraction(unit.busy_cycles, stats.cycles)))
                  .Add("stall_cycles_total", Integer(TotalStalls(unit)))
                  .Add("stall_cycles", stalls.Close())
                  .Close());
  }
  return units.Close();
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
  ObjectText energy(1);
  for (const auto& [component, pj] : stats.energy_pj) energy.Add(component, Number(pj));
  energy.Add("total", Number(EnergyTotal(stats)));

  return ObjectText(0)
             .Add("format", Quote("retarget-sim-stats"))
             .Add("version", "1")
             .Add("program", Quote(program))
             .Add("config", ConfigJson(config))
             .Add("cycles", Integer(stats.cycles))
             .Add("clock_mhz", Number(stats.clock_mhz))
             .Add("seconds", Number(stats.seconds))
             .Add("instructions", Integer(instructions))
             .Add("macs", Integer(stats.macs))
             .Add("peak_macs_per_cycle", Integer(systolic::PeakMacsPerCycle(config)))
             .Add("mac_utilization", Number(stats.mac_utilization))
             .Add("ops_per_second", Number(ops_per_second))
             .Add("vector_element_ops", Integer(stats.vector_element_ops))
             .Add("units", UnitsJson(stats))
             .Add("bytes", ObjectText(1)
                               .Add("dram_read", Integer(stats.dram_bytes_read))
                               .Add("dram_written", Integer(stats.dram_bytes_written))
                               .Add("ub_read", Integer(stats.ub_bytes_read))
                               .Add("ub_written", Integer(stats.ub_bytes_written))
                               .Add("acc_read", Integer(stats.acc_bytes_read))
                               .Add("acc_written", Integer(stats.acc_bytes_written))
                               .Close())
             .Add("peak_bytes_live", ObjectText(1)
                                         .Add("ub", Integer(stats.ub_peak_bytes_live))
                                         .Add("acc", Integer(stats.acc_peak_bytes_live))
                                         .Close())
             .Add("energy_pj", energy.Close())
             .Close() +
         "\n";
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

// Final statistics and energy of a run (sim_stats.h).
#include "simulator/sim_stats.h"

namespace simulator {

double SimStats::total_energy_pj() const {
  double total = 0;
  for (const auto& [component, picojoules] : energy_pj) total += picojoules;
  return total;
}

namespace sim {

SimStats FinishStats(Run& run) {
  SimStats stats = std::move(run.stats);
  const systolic::ArchConfig& config = run.config;
  stats.cycles = run.end_cycle;
  run.occupancy.Finish(run.options.trace);
  stats.ub_peak_bytes_live = run.occupancy.ub_peak();
  stats.acc_peak_bytes_live = run.occupancy.acc_peak();
  stats.clock_mhz = config.clock_mhz;
  stats.seconds = static_cast<double>(stats.cycles) / (config.clock_mhz * 1e6);
  const double peak_macs =
      static_cast<double>(stats.cycles) * static_cast<double>(config.array_rows * config.array_cols);
  stats.mac_utilization = peak_macs > 0 ? static_cast<double>(stats.macs) / peak_macs : 0;

  for (size_t unit = 0; unit < kUnitCount; ++unit) {
    for (size_t cause = 0; cause < kStallCauseNames.size(); ++cause) {
      if (run.stall_cycles[unit][cause] != 0) {
        stats.units[unit].stall_cycles[std::string(kStallCauseNames[cause])] =
            run.stall_cycles[unit][cause];
      }
    }
  }

  auto as_double = [](int64_t value) { return static_cast<double>(value); };
  stats.energy_pj["mac"] = as_double(run.macs_by_dtype[0]) * config.energy_mac_int8_pj +
                           as_double(run.macs_by_dtype[1]) * config.energy_mac_bf16_pj +
                           as_double(run.macs_by_dtype[2]) * config.energy_mac_f32_pj;
  stats.energy_pj["vector"] = as_double(stats.vector_element_ops) * config.energy_vector_op_pj;
  stats.energy_pj["ub"] =
      as_double(stats.ub_bytes_read + stats.ub_bytes_written) * config.energy_ub_pj_per_byte;
  stats.energy_pj["acc"] =
      as_double(stats.acc_bytes_read + stats.acc_bytes_written) * config.energy_acc_pj_per_byte;
  stats.energy_pj["dram"] = as_double(stats.dram_bytes_read + stats.dram_bytes_written) *
                            config.energy_dram_pj_per_byte;
  return stats;
}

}  // namespace sim
}  // namespace simulator

// SystolicTargetFromConfig (contract and the derivation rules in arch_target.h).
#include "tools/report/arch_target.h"

#include <cstdio>

namespace report {
namespace {

using hlo::PrimitiveType;

// Matrix rate per MXU input type: native types at the array's peak, the others in several
// passes of the native multipliers.
std::map<PrimitiveType, double> MatrixRates(const systolic::ArchConfig& config) {
  const double peak = systolic::PeakOpsPerSecond(config);
  const bool bf16 = (config.mxu_dtypes & systolic::kMxuBf16) != 0;
  const bool f32 = (config.mxu_dtypes & systolic::kMxuF32) != 0;
  std::map<PrimitiveType, double> rates;
  rates[PrimitiveType::kS8] = peak;  // int8 fits every native multiplier
  rates[PrimitiveType::kBF16] = bf16 || f32 ? peak : peak / 4;
  rates[PrimitiveType::kF32] = f32 ? peak : bf16 ? peak / 4 : peak / 16;
  return rates;
}

double MacPicojoules(const systolic::ArchConfig& config) {
  if (config.mxu_dtypes & systolic::kMxuBf16) return config.energy_mac_bf16_pj;
  if (config.mxu_dtypes & systolic::kMxuInt8) return config.energy_mac_int8_pj;
  return config.energy_mac_f32_pj;
}

}  // namespace

compiler::TargetDescription SystolicTargetFromConfig(const systolic::ArchConfig& config) {
  compiler::TargetDescription t = compiler::SystolicTarget();
  const double clock_hz = config.clock_mhz * 1e6;
  char description[200];
  std::snprintf(description, sizeof description,
                "systolic array from config '%s': %lldx%lld MXU at %g MHz, %lld lanes, %g GB/s",
                config.name.c_str(), static_cast<long long>(config.array_rows),
                static_cast<long long>(config.array_cols), config.clock_mhz,
                static_cast<long long>(config.vector_lanes), config.dram_bandwidth_gbps);
  t.description = description;
  t.device_memory_bytes = config.dram_bytes;
  t.on_chip_memory_bytes = config.ub_bytes;
  t.alignment_bytes = config.ub_bank_width_bytes;

  t.peak.matrix_ops_per_second = MatrixRates(config);
  t.peak.vector_ops_per_second = static_cast<double>(config.vector_lanes) * clock_hz;
  t.peak.memory_bytes_per_second = config.dram_bandwidth_gbps * 1e9;

  t.energy.joules_per_flop = MacPicojoules(config) * 1e-12 / 2;
  t.energy.joules_per_vector_op = config.energy_vector_op_pj * 1e-12;
  t.energy.joules_per_dram_byte = config.energy_dram_pj_per_byte * 1e-12;
  t.energy.idle_watts = 0;
  return t;
}

}  // namespace report

// SystolicTargetFromConfig (contract and the derivation rules in arch_target.h).
#include "tools/report/arch_target.h"

#include <cstdio>
#include <set>

#include "targets/descriptions.h"
#include "targets/systolic/description.h"

namespace report {
namespace {

using hlo::PrimitiveType;

// The MXU's input types (array.dtypes) as element types: what the lowering runs natively; a dot
// or convolution of another type goes to the host (targets/systolic/lowering).
std::set<PrimitiveType> NativeMatrixTypes(const systolic::ArchConfig& config) {
  std::set<PrimitiveType> types;
  if (config.mxu_dtypes & systolic::kMxuInt8) types.insert(PrimitiveType::kS8);
  if (config.mxu_dtypes & systolic::kMxuBf16) types.insert(PrimitiveType::kBF16);
  if (config.mxu_dtypes & systolic::kMxuF32) types.insert(PrimitiveType::kF32);
  return types;
}

// Matrix rate: the array's peak for every native type.
std::map<PrimitiveType, double> MatrixRates(const systolic::ArchConfig& config) {
  std::map<PrimitiveType, double> rates;
  for (PrimitiveType type : NativeMatrixTypes(config)) {
    rates[type] = systolic::PeakOpsPerSecond(config);
  }
  return rates;
}

double MacPicojoules(const systolic::ArchConfig& config) {
  if (config.mxu_dtypes & systolic::kMxuBf16) return config.energy_mac_bf16_pj;
  if (config.mxu_dtypes & systolic::kMxuInt8) return config.energy_mac_int8_pj;
  return config.energy_mac_f32_pj;
}

}  // namespace

compiler::TargetDescription SystolicTargetFromConfig(const systolic::ArchConfig& config) {
  compiler::TargetDescription t = targets::SystolicDescription();
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

  // Dot and convolution are native exactly for the configured MXU types, as the lowering does.
  for (hlo::Opcode op : {hlo::Opcode::kDot, hlo::Opcode::kConvolution}) {
    t.op_rules[op] = compiler::OpRule{compiler::OpHandling::kNative, "", NativeMatrixTypes(config),
                                      compiler::OpHandling::kHostFallback};
  }
  t.peak.matrix_ops_per_second = MatrixRates(config);
  t.peak.vector_ops_per_second = static_cast<double>(config.vector_lanes) * clock_hz;
  t.peak.memory_bytes_per_second = config.dram_bandwidth_gbps * 1e9;

  t.interconnect = targets::ChipLinks(config);
  t.energy.joules_per_flop = MacPicojoules(config) * 1e-12 / 2;
  t.energy.joules_per_vector_op = config.energy_vector_op_pj * 1e-12;
  t.energy.joules_per_dram_byte = config.energy_dram_pj_per_byte * 1e-12;
  t.energy.idle_watts = 0;
  return t;
}

}  // namespace report

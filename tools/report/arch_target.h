// The systolic column of the report under `--config PRESET|FILE [--set k=v]...`: a copy of the
// built-in systolic TargetDescription whose cost-model numbers come from an accelerator
// ArchConfig (simulator/isa/arch_config.h) instead of the TPU-v1 figures compiled in.
//
// What is derived (docs/report.md, "--config"), everything else is the built-in target's:
//   * dot and convolution are accelerator-native exactly for the MXU types the config lists
//     (array.dtypes), at 2 * rows * cols * clock; any other type falls back to the host, as the
//     lowering does, so an estimate and a simulation of one config agree on who runs what;
//   * vector rate: vector.lanes * clock; DRAM bandwidth and capacity; unified buffer = on-chip
//     memory; alignment = one unified-buffer bank row;
//   * energy: the config's per-operation energies (a MAC is 2 FLOPs, at the preferred native
//     type: bf16, else int8, else f32), its DRAM energy per byte; no idle power (a config gives
//     dynamic energy only), so energy_mj is dynamic energy.
// Host fallbacks keep the built-in host link (14 GB/s) and per-step issue cost (10 us): the
// systolic simulator charges every config's host steps with those figures, and the report's
// estimate charges host fallbacks the same way (report.cc, HostFallbackSeconds).
// The name stays "systolic" (the same column, the same price); the description names the config.
// This is for the cost model only: the simulator will replace the estimate with `simulated`.
#pragma once

#include "compiler/target_description.h"
#include "simulator/isa/arch_config.h"

namespace report {

compiler::TargetDescription SystolicTargetFromConfig(const systolic::ArchConfig& config);

}  // namespace report

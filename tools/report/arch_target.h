// The systolic column of the report under `--config PRESET|FILE [--set k=v]...`: a copy of the
// built-in systolic TargetDescription whose cost-model numbers come from an accelerator
// ArchConfig (targets/systolic/arch_config.h) instead of the TPU-v1 figures compiled in.
//
// What is derived (docs/report.md, "--config"), everything else is the built-in target's:
//   * matrix rate: 2 * rows * cols * clock for every MXU type the config lists (array.dtypes);
//     a type it does not list but the lowering still accepts (s8, bf16, f32) runs in several
//     passes: bf16 at 1/4 and f32 at 1/16 of the int8 rate (the built-in target's assumption),
//     f32 at 1/4 of the bf16 rate when bf16 is native; int8 operands fit every native
//     multiplier, so int8 always runs at the peak;
//   * vector rate: vector.lanes * clock; DRAM bandwidth and capacity; unified buffer = on-chip
//     memory; alignment = one unified-buffer bank row;
//   * energy: the config's per-operation energies (a MAC is 2 FLOPs, at the preferred native
//     type: bf16, else int8, else f32), its DRAM energy per byte; no idle power (a config gives
//     dynamic energy only), so energy_mj is dynamic energy.
// The name stays "systolic" (the same column, the same price); the description names the config.
// This is for the cost model only: the simulator will replace the estimate with `simulated`.
#pragma once

#include "compiler/target_description.h"
#include "targets/systolic/arch_config.h"

namespace report {

compiler::TargetDescription SystolicTargetFromConfig(const systolic::ArchConfig& config);

}  // namespace report

// Turns a finished run's counters into SimStats: total cycles and seconds, per-unit stall maps,
// MAC utilization and energy by component from the energy.* keys of the ArchConfig:
//   mac    = MACs of each input dtype x energy.mac_{int8,bf16,f32}_pj
//   vector = vector element operations x energy.vector_op_pj
//   ub     = UB bytes read + written x energy.ub_pj_per_byte (DMA, matrix and vector unit)
//   acc    = accumulator bytes read + written x energy.acc_pj_per_byte
//   dram   = DRAM bytes read + written (payload, not burst padding) x energy.dram_pj_per_byte
#pragma once

#include "simulator/sim_shared.h"

namespace simulator::sim {

SimStats FinishStats(Run& run);

}  // namespace simulator::sim

// The vector unit process (sim_vector.h).
#include "simulator/sim_vector.h"

#include <algorithm>

#include "simulator/unit_timing.h"

namespace simulator::sim {

VectorUnit::VectorUnit(sc_core::sc_module_name name, Shared& shared)
    : UnitProcess(name, shared, systolic::Unit::kVector) {}

void VectorUnit::Execute(size_t index, const systolic::Instruction& inst) {
  Run& run = shared_.run();
  // ComputeCost rejects instructions that are not the vector unit's.
  const UnitCost cost = ComputeCost(inst, run.config, run.registers, run.weights);
  const PortGrant grant = AcquirePorts(cost.ub_bytes_read + cost.ub_bytes_written,
                                       cost.acc_bytes_read + cost.acc_bytes_written, cost.cycles);
  const int64_t end = grant.start + std::max(cost.cycles, grant.cycles);
  shared_.CheckCycleLimit(end);  // before the host work
  ExecuteVector(inst, run.registers, run.memories);
  run.stats.vector_element_ops += cost.vector_element_ops;
  run.stats.ub_bytes_read += cost.ub_bytes_read;
  run.stats.ub_bytes_written += cost.ub_bytes_written;
  run.stats.acc_bytes_read += cost.acc_bytes_read;
  run.stats.acc_bytes_written += cost.acc_bytes_written;
  shared_.Busy(unit_, grant.start, end, index, grant.stall);
  shared_.WaitUntil(end);
}

}  // namespace simulator::sim

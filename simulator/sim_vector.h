// The vector unit process: every v* instruction, one at a time.
//
// Timing (docs/simulator.md): an instruction starts when the UB/accumulator ports it touches are
// free ("ub_port" / "acc_port" stall) and occupies the unit for ComputeCost()'s cycles, or for
// the cycles the ports need to move its bytes when that is longer (a wide vector unit on a
// narrow buffer is bandwidth-bound). The data effect is functional.h's ExecuteVector.
#pragma once

#include "simulator/sim_unit.h"

namespace simulator::sim {

class VectorUnit final : public UnitProcess {
 public:
  VectorUnit(sc_core::sc_module_name name, Shared& shared);

 protected:
  void Execute(size_t index, const systolic::Instruction& inst) override;
};

}  // namespace simulator::sim

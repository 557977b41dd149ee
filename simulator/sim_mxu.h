// The matrix unit process: mxu.ldw, mxu.matmul and mxu.conv with double-buffered weights.
//
// Timing (docs/simulator.md): the unit keeps two timelines of its own, the weight loader and
// the array, so an mxu.ldw into one buffer runs while the array computes from the other (TPU
// v1's weight FIFO, Gemmini's preload). The issuing thread only waits when the next instruction
// needs something not ready yet:
//   - mxu.ldw into buffer b starts when the loader is free and the earlier matmul/conv reading
//     b no longer need its tile (UnitCost::weights_hold after their start; not a stall: the unit
//     is busy meanwhile), then occupies the loader for ComputeCost() cycles;
//   - mxu.matmul / mxu.conv on buffer b starts when the array accepts a new instruction
//     (UnitCost::issue_interval after the previous one started: in ws the next tile streams in
//     while the previous one drains) and b's weights are loaded (a "weights" stall for the part
//     spent waiting on the loader); its results are complete ComputeCost().cycles after its
//     start (or later if the UB/accumulator ports cannot keep up).
// sem.signal on the mxu waits for both timelines (WaitUntilDrained()), so a consumer synchronized
// by a semaphore sees finished results. The rules are MxuSchedule's (mxu_schedule.h).
// Data effects (functional.h's ExecuteMxu) happen in program order when an instruction starts;
// the hazards above guarantee no later instruction observes a half-finished tile.
#pragma once

#include "simulator/mxu_schedule.h"
#include "simulator/sim_unit.h"

namespace simulator::sim {

class MxuUnit final : public UnitProcess {
 public:
  MxuUnit(sc_core::sc_module_name name, Shared& shared);
  void Reset() override;

 protected:
  void Execute(size_t index, const systolic::Instruction& inst) override;
  void WaitUntilDrained() override;
  std::optional<int64_t> KnownDrainCycle() const override { return schedule_.Drained(); }

 private:
  void LoadWeights(size_t index, const systolic::Instruction& inst);
  void Compute(size_t index, const systolic::Instruction& inst, size_t buffer,
               systolic::Dtype dtype);

  MxuSchedule schedule_;  // the loader and array timelines (mxu_schedule.h)
};

}  // namespace simulator::sim

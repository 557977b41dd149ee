// The matrix unit's scheduling rules at transaction level, free of SystemC so that tests can
// replay an instruction sequence against the processing-element model (pe_sequence.h) cycle for
// cycle. sim_mxu.cc drives it from the SystemC process; it only keeps "busy until" values.
//
// Rules (docs/simulator.md "Matrix unit and double buffering", docs/isa.md "Matrix-unit timing"),
// instructions starting in program order:
//   - mxu.ldw into buffer b starts at max(request, loader free, b released), where b is released
//     weights_hold cycles after the start of every earlier matmul/conv reading b; it occupies the
//     loader for its cycles and b holds the new tile at its end.
//   - mxu.matmul / mxu.conv on b starts at max(request, array accepts, b loaded). The array
//     accepts the next instruction issue_interval cycles after this one started (ws: its m rows
//     have entered), and the results are complete `cycles` after the start (the latency).
//   - The unit is drained when the loader and every started instruction have completed.
// Port-bound instructions (the UB / accumulator ports slower than the array) stretch all three
// figures by the extra port cycles.
#pragma once

#include <array>
#include <cstdint>

#include "simulator/unit_timing.h"

namespace simulator {

class MxuSchedule {
 public:
  struct Slot {
    int64_t start = 0;
    int64_t end = 0;
  };
  // The earliest start of an mxu.ldw into `buffer` requested at `now`.
  int64_t LoadStart(int64_t now, size_t buffer) const;
  // Records the mxu.ldw started at `start` that takes `cycles`; returns its slot.
  Slot Load(size_t buffer, int64_t start, int64_t cycles);
  // The cycle the array can take a new instruction, and when one on `buffer` can start.
  int64_t ArrayReady(int64_t now) const;
  int64_t ComputeStart(int64_t now, size_t buffer) const;
  // Records the matmul/conv started at `start` whose operands need `port_cycles` of the UB /
  // accumulator ports; returns its slot (end = when its results are in the accumulators).
  Slot Compute(size_t buffer, int64_t start, const UnitCost& cost, int64_t port_cycles);
  // Every recorded instruction has completed at this cycle.
  int64_t Drained() const;

 private:
  int64_t loader_free_ = 0;
  int64_t array_accepts_ = 0;
  int64_t array_done_ = 0;
  std::array<int64_t, 2> loaded_at_{};    // buffer b holds its tile from
  std::array<int64_t, 2> released_at_{};  // its readers no longer need buffer b from
};

}  // namespace simulator

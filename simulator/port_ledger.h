// The bandwidth of one local-memory port (the unified buffer's, the accumulators') over time.
//
// Every unit streams its operands through the port at its own pace: a matmul reads one
// activation row per cycle for m cycles, a vector instruction moves its elements over its
// cycles, a DMA engine writes at the DRAM channel's rate. A request moves `bytes` at up to
// `max_rate` bytes per cycle, from its start, taking in each cycle what the earlier requests
// left of the port's capacity (first come, first served); it ends when its last byte has moved.
// A request that finds the port busy therefore takes longer than its own pace (a port stall)
// instead of waiting for a window, and a long, slow stream (a DMA) leaves the rest of the
// bandwidth to everyone else.
//
// Guarantees: the reserved rates never exceed the capacity in any cycle; a request of b > 0
// bytes ends no earlier than start + ceil(b / min(max_rate, capacity)); requests start at
// non-decreasing cycles, none before the last Forget().
#pragma once

#include <cstdint>
#include <map>

namespace simulator {

class PortLedger {
 public:
  explicit PortLedger(int64_t capacity = 1) : capacity_(capacity) {}

  // Moves `bytes` from `start` at up to `max_rate` bytes per cycle; returns the cycle after
  // the last byte moved (`start` when bytes <= 0).
  int64_t Reserve(int64_t start, int64_t bytes, int64_t max_rate);
  // Folds the usage before `cycle` away (no later request starts before it).
  void Forget(int64_t cycle);

 private:
  int64_t capacity_;
  int64_t base_ = 0;                  // usage in the cycles before the first step
  std::map<int64_t, int64_t> steps_;  // cycle -> change of usage from that cycle on
};

}  // namespace simulator

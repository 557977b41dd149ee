// The matrix unit's transaction-level scheduling rules (mxu_schedule.h).
#include "simulator/mxu_schedule.h"

#include <algorithm>

namespace simulator {

int64_t MxuSchedule::LoadStart(int64_t now, size_t buffer) const {
  return std::max({now, loader_free_, released_at_[buffer & 1]});
}

MxuSchedule::Slot MxuSchedule::Load(size_t buffer, int64_t start, int64_t cycles) {
  const Slot slot{start, start + cycles};
  loader_free_ = loaded_at_[buffer & 1] = slot.end;
  return slot;
}

int64_t MxuSchedule::ArrayReady(int64_t now) const { return std::max(now, array_accepts_); }

int64_t MxuSchedule::ComputeStart(int64_t now, size_t buffer) const {
  return std::max(ArrayReady(now), loaded_at_[buffer & 1]);
}

MxuSchedule::Slot MxuSchedule::Compute(size_t buffer, int64_t start, const UnitCost& cost,
                                       int64_t port_cycles) {
  // Ports slower than the array stream the operands more slowly: everything after the stream
  // moves by the difference.
  const int64_t stretch = std::max<int64_t>(0, port_cycles - cost.issue_interval);
  const Slot slot{start, start + cost.cycles + stretch};
  array_accepts_ = start + cost.issue_interval + stretch;
  array_done_ = std::max(array_done_, slot.end);
  int64_t& released = released_at_[buffer & 1];
  released = std::max(released, start + cost.weights_hold + stretch);
  return slot;
}

int64_t MxuSchedule::Drained() const { return std::max(loader_free_, array_done_); }

}  // namespace simulator

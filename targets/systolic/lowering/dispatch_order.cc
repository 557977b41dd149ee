// HoistLoads (dispatch_order.h).
#include "targets/systolic/lowering/dispatch_order.h"

#include <array>
#include <cstdint>
#include <vector>

namespace systolic::lowering {

void HoistLoads(Program& program, const ArchConfig& config) {
  // One less than the unit queue's depth: a load may wait in it without stopping the front end.
  const auto hoist_ahead = static_cast<size_t>(config.queue_depth - 1);
  std::vector<Instruction>& list = program.instructions;
  const bool halts = !list.empty() && list.back().opcode == Opcode::kHalt;
  const size_t body = list.size() - (halts ? 1 : 0);
  std::vector<Instruction> loads, others;
  std::vector<size_t> others_before;  // per load: how many other instructions preceded it
  for (size_t i = 0; i < body; ++i) {
    if (ExecutingUnit(list[i]) == Unit::kLoad) {
      loads.push_back(list[i]);
      others_before.push_back(others.size());
    } else {
      others.push_back(list[i]);
    }
  }
  std::vector<Instruction> out;
  out.reserve(list.size());
  // Signals minus waits placed so far, per semaphore.
  std::array<int64_t, kSemaphoreCount> available{};
  auto place = [&](const Instruction& inst) {
    if (inst.opcode == Opcode::kSemSignal) {
      available[inst.get(SemSignalField::sem) % kSemaphoreCount] +=
          static_cast<int64_t>(inst.get(SemSignalField::count));
    } else if (inst.opcode == Opcode::kSemWait) {
      available[inst.get(SemWaitField::sem) % kSemaphoreCount] -=
          static_cast<int64_t>(inst.get(SemWaitField::count));
    }
    out.push_back(inst);
  };
  size_t next_load = 0;
  size_t others_placed = 0;
  auto place_loads = [&] {
    for (; next_load < loads.size(); ++next_load) {
      // At most hoist_ahead loads from behind the next other instruction: more would fill the
      // load queue, and the front end would wait there, DRAM-paced, instead of dispatching it.
      size_t ahead = 0;
      for (size_t l = next_load; l-- > 0 && others_before[l] > others_placed;) ++ahead;
      if (others_before[next_load] > others_placed && ahead >= hoist_ahead) return;
      const Instruction& inst = loads[next_load];
      if (inst.opcode == Opcode::kSemWait &&
          available[inst.get(SemWaitField::sem) % kSemaphoreCount] <
              static_cast<int64_t>(inst.get(SemWaitField::count))) {
        return;  // its signal comes later in program order
      }
      place(inst);
    }
  };
  place_loads();
  for (const Instruction& inst : others) {
    place(inst);
    ++others_placed;
    place_loads();
  }
  for (; next_load < loads.size(); ++next_load) out.push_back(loads[next_load]);  // unpaired
  if (halts) out.push_back(list.back());
  list = std::move(out);
}

}  // namespace systolic::lowering

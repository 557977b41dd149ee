// HoistLoads (dispatch_order.h).
#include "targets/systolic/lowering/dispatch_order.h"

#include <array>
#include <cstdint>
#include <vector>

namespace systolic::lowering {

void HoistLoads(Program& program) {
  std::vector<Instruction>& list = program.instructions;
  const bool halts = !list.empty() && list.back().opcode == Opcode::kHalt;
  const size_t body = list.size() - (halts ? 1 : 0);
  std::vector<Instruction> loads, others;
  for (size_t i = 0; i < body; ++i) {
    (ExecutingUnit(list[i]) == Unit::kLoad ? loads : others).push_back(list[i]);
  }
  std::vector<Instruction> out;
  out.reserve(list.size());
  std::array<int64_t, 32> available{};  // signals minus waits placed so far, per semaphore
  auto place = [&](const Instruction& inst) {
    if (inst.opcode == Opcode::kSemSignal) {
      available[inst.get(SemSignalField::sem) % 32] +=
          static_cast<int64_t>(inst.get(SemSignalField::count));
    } else if (inst.opcode == Opcode::kSemWait) {
      available[inst.get(SemWaitField::sem) % 32] -=
          static_cast<int64_t>(inst.get(SemWaitField::count));
    }
    out.push_back(inst);
  };
  size_t next_load = 0;
  auto place_loads = [&] {
    for (; next_load < loads.size(); ++next_load) {
      const Instruction& inst = loads[next_load];
      if (inst.opcode == Opcode::kSemWait &&
          available[inst.get(SemWaitField::sem) % 32] <
              static_cast<int64_t>(inst.get(SemWaitField::count))) {
        return;  // its signal comes later in program order
      }
      place(inst);
    }
  };
  place_loads();
  for (const Instruction& inst : others) {
    place(inst);
    place_loads();
  }
  for (; next_load < loads.size(); ++next_load) out.push_back(loads[next_load]);  // unpaired
  if (halts) out.push_back(list.back());
  list = std::move(out);
}

}  // namespace systolic::lowering

// Collectives between chips (chip_links.h).
#include "targets/systolic/chip_links.h"

#include <algorithm>

#include "compiler/communication.h"
#include "targets/systolic/description.h"

namespace targets {

LinkCost CollectiveLinkCost(const hlo::Instruction& collective, int64_t group,
                            const systolic::ArchConfig& config) {
  const compiler::CollectiveTime time =
      compiler::CollectiveSeconds(collective, group, ChipLinks(config));
  LinkCost cost;
  cost.cycles = static_cast<int64_t>(time.seconds * config.clock_mhz * 1e6 + 0.5);
  cost.bytes_sent = time.bytes_sent;
  cost.energy_pj = time.bytes_sent * config.energy_link_pj_per_byte;
  return cost;
}

int64_t LastArrival(const hlo::Instruction& collective, const hlo::DeviceView& device,
                    std::span<const int64_t> group, int64_t now) {
  if (group.size() <= 1 || device.runtime == nullptr) return now;
  const auto rank =
      std::find(group.begin(), group.end(), device.device) - group.begin();
  hlo::Literal clock(hlo::Shape::Array(hlo::PrimitiveType::kS64, {}));
  clock.SetFromInt64(0, now);
  const hlo::Literal* offered[] = {&clock};
  // A name of its own: the exchange of values that follows meets under the instruction's.
  auto meeting = device.runtime->Meet(collective.name() + "#arrival", collective.location(),
                                      device.device, group, rank, offered);
  int64_t last = now;
  for (size_t r = 0; r < group.size(); ++r) {
    last = std::max(last, meeting->operands(static_cast<int64_t>(r)).front()->GetAsInt64(0));
  }
  return last;
}

}  // namespace targets

// The rendezvous of a multi-device evaluation (collective_runtime.h).
//
// One mutex and one condition variable serve every meeting: runs have a handful of devices and
// meet at most once per collective, so contention does not matter and one lock keeps the
// deadlock test (every device waiting or finished) exact. A device counts as blocked from the
// moment it waits for arrivals until the arrival that completes its meeting, which releases
// the whole group at once, so a device that has been released but not yet scheduled never
// makes the test fire.
#include "hlo/collective_runtime.h"

#include <algorithm>

namespace hlo {
namespace {

std::string JoinDevices(const std::vector<int64_t>& devices) {
  std::string text;
  for (size_t i = 0; i < devices.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(devices[i]);
  }
  return text;
}

}  // namespace

CollectiveRuntime::CollectiveRuntime(const DeviceGrid& grid)
    : grid_(grid),
      executions_(static_cast<size_t>(grid.size())),
      waiting_in_(static_cast<size_t>(grid.size()), nullptr),
      finished_(static_cast<size_t>(grid.size()), 0) {}

std::unique_ptr<CollectiveRuntime::Meeting> CollectiveRuntime::Meet(
    const std::string& name, const SourceLocation& where, int64_t device,
    std::span<const int64_t> group, int64_t rank, std::span<const Literal* const> operands) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (failure_) throw Error("stopped: " + failure_->message());
  const int64_t execution = executions_[static_cast<size_t>(device)][name]++;
  const auto key = std::make_tuple(name, group.front(), execution);
  std::shared_ptr<Slot>& open = open_[key];
  if (!open) {
    open = std::make_shared<Slot>();
    open->name = name;
    open->where = where;
    open->group.assign(group.begin(), group.end());
    open->operands.resize(group.size());
    open->arrived.assign(group.size(), 0);
  }
  std::shared_ptr<Slot> slot = open;
  if (!std::equal(group.begin(), group.end(), slot->group.begin(), slot->group.end())) {
    throw Error("device " + std::to_string(device) + " meets devices {" +
                JoinDevices({group.begin(), group.end()}) + "} but device " +
                std::to_string(slot->group.front()) + " meets {" + JoinDevices(slot->group) +
                "}");
  }
  const auto r = static_cast<size_t>(rank);
  slot->operands[r].assign(operands.begin(), operands.end());
  slot->arrived[r] = 1;
  const int64_t size = static_cast<int64_t>(slot->group.size());
  if (++slot->arrivals == size) {
    open_.erase(key);
    blocked_ -= size - 1;  // the waiting members are released now, before they wake
    for (int64_t member : slot->group) waiting_in_[static_cast<size_t>(member)] = nullptr;
    changed_.notify_all();
  } else {
    waiting_in_[static_cast<size_t>(device)] = slot.get();
    ++blocked_;
    CheckDeadlock();
    changed_.wait(lock, [&] { return slot->arrivals == size || failure_.has_value(); });
    if (slot->arrivals != size) {
      waiting_in_[static_cast<size_t>(device)] = nullptr;
      throw Error(failure_->message());
    }
  }
  return std::make_unique<Meeting>(*this, std::move(slot));
}

void CollectiveRuntime::Leave(Slot& slot) {
  // Not a blocked wait in the deadlock sense: every member has arrived and is computing or
  // leaving, so this wait always ends, and it must end even after a failure elsewhere because
  // the others may still be reading this device's operands.
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t size = static_cast<int64_t>(slot.group.size());
  if (++slot.departures == size) {
    changed_.notify_all();
    return;
  }
  changed_.wait(lock, [&] { return slot.departures == size; });
}

void CollectiveRuntime::Finished(int64_t device) {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_[static_cast<size_t>(device)] = 1;
  ++finished_count_;
  CheckDeadlock();
}

void CollectiveRuntime::Failed(int64_t device, const Error& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_[static_cast<size_t>(device)] = 1;
  ++finished_count_;
  if (!failure_) {
    failure_ = Error(error.location(), "device " + std::to_string(device) + ": " + error.message());
  }
  changed_.notify_all();
}

std::optional<Error> CollectiveRuntime::FirstFailure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

void CollectiveRuntime::CheckDeadlock() {
  if (failure_ || blocked_ == 0 || blocked_ + finished_count_ < grid_.size()) return;
  // Located at the first waiting device's collective, so the CLI prints FILE:LINE:COL.
  SourceLocation where;
  for (const Slot* slot : waiting_in_) {
    if (slot != nullptr) {
      where = slot->where;
      break;
    }
  }
  failure_ = Error(where, "collective deadlock: " + DescribeWaits());
  changed_.notify_all();
}

std::string CollectiveRuntime::DescribeWaits() const {
  std::string text;
  std::vector<int64_t> done;
  for (size_t d = 0; d < waiting_in_.size(); ++d) {
    if (finished_[d]) done.push_back(static_cast<int64_t>(d));
    const Slot* slot = waiting_in_[d];
    if (slot == nullptr) continue;
    std::vector<int64_t> missing;
    for (size_t r = 0; r < slot->group.size(); ++r) {
      if (!slot->arrived[r]) missing.push_back(slot->group[r]);
    }
    text += (text.empty() ? "" : "; ") + std::string("device ") + std::to_string(d) +
            " waits in '" + slot->name + "' for device(s) " + JoinDevices(missing);
  }
  if (!done.empty()) text += "; device(s) " + JoinDevices(done) + " finished";
  return text;
}

CollectiveRuntime::Meeting::Meeting(CollectiveRuntime& runtime, std::shared_ptr<Slot> slot)
    : runtime_(runtime), slot_(std::move(slot)) {}

CollectiveRuntime::Meeting::~Meeting() { runtime_.Leave(*slot_); }

std::span<const Literal* const> CollectiveRuntime::Meeting::operands(int64_t rank) const {
  return slot_->operands[static_cast<size_t>(rank)];
}

}  // namespace hlo

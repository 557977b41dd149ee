// The meeting point of the devices of a multi-device run (multi_device.h): one rendezvous per
// execution of a collective by one group of devices. The evaluator's collectives use it, and so
// does any backend that runs a device per thread (the cpu backend's collective thunks).
//
// Guarantees:
//  - Meet returns only when every device of the group has offered its operands for the same
//    execution (the n-th time each of them runs the instruction of that name — a name, not an
//    address, so devices running separately compiled copies of a module meet), and hands the
//    operands of all of them to every device in group order. The operands stay valid until
//    every device of the group has left (the Meeting's destructor waits for that), so results
//    are computed from other devices' values without copying them first.
//  - Deadlock is detected, not waited out: when every device is waiting or finished and a
//    meeting is still incomplete, every waiting device throws an hlo::Error that names each
//    waiting device's instruction and the devices it waits for.
//  - When one device fails, the others stop at their next wait with an error that names it;
//    FirstFailure() is the failure that started it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/multi_device.h"

namespace hlo {

class CollectiveRuntime {
  struct Slot;

 public:
  explicit CollectiveRuntime(const DeviceGrid& grid);
  const DeviceGrid& grid() const { return grid_; }

  // One device's part in a meeting: the operands of every device of the group.
  class Meeting {
   public:
    Meeting(CollectiveRuntime& runtime, std::shared_ptr<Slot> slot);
    ~Meeting();  // waits until every device of the group is done reading
    Meeting(const Meeting&) = delete;
    Meeting& operator=(const Meeting&) = delete;
    // Operands of the device at `rank` in the group (rank order = the group's order).
    std::span<const Literal* const> operands(int64_t rank) const;

   private:
    CollectiveRuntime& runtime_;
    std::shared_ptr<Slot> slot_;
  };

  // `device` (at `rank` in `group`) offers `operands` at this execution of `inst`; blocks
  // until the whole group has. Throws on deadlock or when another device failed.
  std::unique_ptr<Meeting> Meet(const Instruction& inst, int64_t device,
                                std::span<const int64_t> group, int64_t rank,
                                std::span<const Literal* const> operands) {
    return Meet(inst.name(), inst.location(), device, group, rank, operands);
  }
  // The same for a collective known by name and location alone (a step of a compiled program
  // that carries its instruction's name, as the gpu emulator's are).
  std::unique_ptr<Meeting> Meet(const std::string& name, const SourceLocation& where,
                                int64_t device, std::span<const int64_t> group, int64_t rank,
                                std::span<const Literal* const> operands);

  // A device's thread ends: normally, or with the error it reports.
  void Finished(int64_t device);
  void Failed(int64_t device, const Error& error);
  // The first device failure ("device D: ..." at its location) or the deadlock.
  std::optional<Error> FirstFailure() const;

 private:
  struct Slot {
    std::string name;  // the collective's
    SourceLocation where;
    std::vector<int64_t> group;
    std::vector<std::vector<const Literal*>> operands;  // per rank
    std::vector<uint8_t> arrived;                       // per rank
    int64_t arrivals = 0;
    int64_t departures = 0;
  };
  void CheckDeadlock();  // under mutex_
  std::string DescribeWaits() const;
  void Leave(Slot& slot);

  DeviceGrid grid_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  // Open meetings by (instruction name, first device of the group, execution number).
  std::map<std::tuple<std::string, int64_t, int64_t>, std::shared_ptr<Slot>> open_;
  // Per device: executions of each collective (by name) so far.
  std::vector<std::unordered_map<std::string, int64_t>> executions_;
  // Per device: the slot it waits in (nullptr when running or finished).
  std::vector<const Slot*> waiting_in_;
  std::vector<uint8_t> finished_;
  int64_t blocked_ = 0;   // devices waiting on a condition not yet met
  int64_t finished_count_ = 0;
  std::optional<Error> failure_;
};

// What a collective needs to know about the device running it (EvaluatorOptions::device); none
// on a one-device run (Evaluate), where every group has one member.
struct DeviceView {
  CollectiveRuntime* runtime = nullptr;
  DeviceGrid grid;
  int64_t device = 0;
};

}  // namespace hlo

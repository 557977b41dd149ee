// Which devices a collective exchanges with (multi_device.h): XLA's collective group modes over
// a replicas x partitions grid.
#include <algorithm>
#include <string>
#include <vector>

#include "hlo/multi_device.h"

namespace hlo {
namespace {

[[noreturn]] void Fail(const Instruction& inst, const std::string& message) {
  throw Error(inst.location(), message);
}

bool IsPermute(Opcode op) {
  return op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart;
}

std::string ListText(const std::vector<int64_t>& ids) {
  std::string text = "{";
  for (size_t i = 0; i < ids.size(); ++i) text += (i ? "," : "") + std::to_string(ids[i]);
  return text + "}";
}

const CollectiveAttrs& AttrsOf(const Instruction& inst) {
  if (!inst.has_attr<CollectiveAttrs>()) {
    Fail(inst, "'" + inst.name() + "' is not a collective with replica groups");
  }
  return inst.attr<CollectiveAttrs>();
}

// The id space a mode's groups list ("replica", "partition", "device"), its size, and the id
// `device` has in it.
struct IdSpace {
  const char* what;
  int64_t size;
  int64_t own;
};
IdSpace SpaceOf(CollectiveGroupMode mode, const DeviceGrid& grid, int64_t device) {
  switch (mode) {
    case CollectiveGroupMode::kCrossPartition:
      return {"partition", grid.partitions, grid.Partition(device)};
    case CollectiveGroupMode::kFlattenedId:
      return {"device", grid.size(), device};
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      break;
  }
  return {"replica", grid.replicas, grid.Replica(device)};
}

std::string GridText(const DeviceGrid& grid) {
  return std::to_string(grid.replicas) + " replica(s) x " + std::to_string(grid.partitions) +
         " partition(s)";
}

}  // namespace

CollectiveGroupMode GroupModeOf(const Instruction& inst) {
  const CollectiveAttrs& attrs = AttrsOf(inst);
  const bool channel = attrs.channel_id != 0;
  // all-to-all and collective-permute have no use_global_device_ids: a channel makes them
  // cross-partition.
  if (inst.opcode() == Opcode::kAllToAll || IsPermute(inst.opcode())) {
    return channel ? CollectiveGroupMode::kCrossPartition : CollectiveGroupMode::kCrossReplica;
  }
  if (!channel) {
    if (attrs.use_global_device_ids) Fail(inst, "use_global_device_ids=true needs a channel_id");
    return CollectiveGroupMode::kCrossReplica;
  }
  return attrs.use_global_device_ids ? CollectiveGroupMode::kFlattenedId
                                     : CollectiveGroupMode::kCrossReplicaAndPartition;
}

std::vector<int64_t> CollectiveGroup(const Instruction& inst, const DeviceGrid& grid,
                                     int64_t device) {
  const CollectiveAttrs& attrs = AttrsOf(inst);
  const CollectiveGroupMode mode = GroupModeOf(inst);
  const IdSpace space = SpaceOf(mode, grid, device);
  const int64_t replica = grid.Replica(device), partition = grid.Partition(device);
  std::vector<int64_t> ids;
  if (attrs.replica_groups.empty() || IsPermute(inst.opcode())) {
    if (mode == CollectiveGroupMode::kFlattenedId) {
      Fail(inst, "use_global_device_ids=true needs explicit replica_groups");
    }
    for (int64_t id = 0; id < space.size; ++id) ids.push_back(id);
  } else {
    std::vector<uint8_t> seen(static_cast<size_t>(space.size), 0);
    for (const std::vector<int64_t>& group : attrs.replica_groups) {
      for (int64_t id : group) {
        if (id < 0 || id >= space.size) {
          Fail(inst, "replica group " + ListText(group) + " names " + space.what + " " +
                         std::to_string(id) + ", outside the run of " + GridText(grid));
        }
        if (seen[static_cast<size_t>(id)]++) {
          Fail(inst, std::string(space.what) + " " + std::to_string(id) +
                         " is in two replica groups");
        }
      }
      if (std::find(group.begin(), group.end(), space.own) != group.end()) ids = group;
    }
    if (ids.empty()) {
      Fail(inst, std::string(space.what) + " " + std::to_string(space.own) + " (device " +
                     std::to_string(device) + ") is in none of the replica groups");
    }
  }
  std::vector<int64_t> devices;
  for (int64_t id : ids) {
    switch (mode) {
      case CollectiveGroupMode::kCrossReplica:
        devices.push_back(id * grid.partitions + partition);
        break;
      case CollectiveGroupMode::kCrossPartition:
        devices.push_back(replica * grid.partitions + id);
        break;
      case CollectiveGroupMode::kCrossReplicaAndPartition:
        for (int64_t p = 0; p < grid.partitions; ++p) devices.push_back(id * grid.partitions + p);
        break;
      case CollectiveGroupMode::kFlattenedId:
        devices.push_back(id);
        break;
    }
  }
  return devices;
}

int64_t PermuteSource(const Instruction& inst, const DeviceGrid& grid, int64_t device) {
  const CollectiveAttrs& attrs = AttrsOf(inst);
  const IdSpace space = SpaceOf(GroupModeOf(inst), grid, device);
  std::vector<uint8_t> sends(static_cast<size_t>(space.size), 0), receives(sends);
  int64_t source = -1;
  for (const auto& [from, to] : attrs.source_target_pairs) {
    for (int64_t id : {from, to}) {
      if (id < 0 || id >= space.size) {
        Fail(inst, "source_target_pairs name " + std::string(space.what) + " " +
                       std::to_string(id) + ", outside the run of " + GridText(grid));
      }
    }
    if (sends[static_cast<size_t>(from)]++) {
      Fail(inst, std::to_string(from) + " is the source of two pairs");
    }
    if (receives[static_cast<size_t>(to)]++) {
      Fail(inst, std::to_string(to) + " is the target of two pairs");
    }
    if (to == space.own) source = from;
  }
  if (source < 0) return -1;
  const std::vector<int64_t> line = CollectiveGroup(inst, grid, device);
  return line[static_cast<size_t>(source)];
}

}  // namespace hlo

// Running one module on several devices at once: the programs JAX and XLA write for
// replica_count × num_partitions devices, whose collectives (all-reduce, all-gather,
// reduce-scatter, all-to-all, collective-permute and their -start/-done forms) exchange values
// between the devices.
//
// Devices are numbered as XLA's default device assignment numbers them: device d is replica
// d / partitions, partition d % partitions (the id `use_global_device_ids=true` groups list).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "hlo/literal.h"

namespace hlo {

struct DeviceGrid {
  int64_t replicas = 1;
  int64_t partitions = 1;
  int64_t size() const { return replicas * partitions; }
  int64_t Replica(int64_t device) const { return device / partitions; }
  int64_t Partition(int64_t device) const { return device % partitions; }
};

// The most devices one run may have: every device is a thread of this process.
inline constexpr int64_t kMaxDevices = 1024;

// replica_count and num_partitions from the module's header (1 where absent). Throws
// hlo::Error when a value is not a positive integer or the product exceeds kMaxDevices.
DeviceGrid ModuleDeviceGrid(const Module& module);

// The grid of a run on `devices` devices: the module's num_partitions partitions, and
// devices / num_partitions replicas; 1 device is device 0 alone (1 x 1). Throws hlo::Error
// when `devices` is not 1 or a multiple of num_partitions, or exceeds kMaxDevices.
DeviceGrid GridForDevices(const Module& module, int64_t devices);

// How a collective's replica_groups name devices (XLA's collective group modes): without a
// channel_id they list replicas, each partition meeting its own (kCrossReplica); with one,
// all-to-all and collective-permute list partitions (kCrossPartition), the others list replicas
// standing for all their partitions (kCrossReplicaAndPartition, replica-major), or global
// device ids with use_global_device_ids=true (kFlattenedId). No groups: every id of the mode.
enum class CollectiveGroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition,
                                 kFlattenedId };
CollectiveGroupMode GroupModeOf(const Instruction& collective);

// The devices `device` exchanges with at `collective`, itself included, in group order; for
// collective-permute every device of its line of the grid (the pairs say who sends). Throws
// hlo::Error at the instruction for an id outside the grid, an id in two groups, or a device
// in none.
std::vector<int64_t> CollectiveGroup(const Instruction& collective, const DeviceGrid& grid,
                                     int64_t device);

// The device whose operand collective-permute delivers to `device`, or -1 when no pair targets
// it (it receives zeros). Throws for ids outside the grid and for an id that is the source or
// target of two pairs.
int64_t PermuteSource(const Instruction& collective, const DeviceGrid& grid, int64_t device);

struct DeviceView;  // collective_runtime.h

// Runs `run_device(view)` for every device of `grid` at once, one thread per device, every view
// sharing one CollectiveRuntime; element d of the result is device d's. A device's failure or a
// deadlock is reported as EvaluateOnDevices says below. Backends that run each device as
// their own executable (the cpu backend) use this; EvaluateOnDevices is it with the evaluator.
std::vector<Literal> RunOnDevices(const DeviceGrid& grid,
                                  const std::function<Literal(const DeviceView&)>& run_device);

// Evaluates the entry computation on every device of `grid` at once, one thread per device:
// `arguments[d]` are device d's entry arguments, and element d of the result is device d's
// result. Each device runs exactly as Evaluate does; a collective waits until every device of
// its group has reached it (the n-th execution of an instruction on one device meets the n-th
// on the others), then each device computes its own result from the group's operands.
//
// Throws hlo::Error: the first failure of any device (the other devices stop at their next
// collective), a replica group naming a device outside the grid, operands whose shapes differ
// across a group, and a deadlock — every device waiting at a collective or finished while some
// group is incomplete — named with the instruction, the waiting devices and the missing ones.
std::vector<Literal> EvaluateOnDevices(const Module& module, const DeviceGrid& grid,
                                       std::span<const std::vector<Literal>> arguments,
                                       const EvaluatorOptions& options = {});

}  // namespace hlo

// The matrix unit process (sim_mxu.h).
#include "simulator/sim_mxu.h"

#include <algorithm>

#include "simulator/unit_timing.h"

namespace simulator::sim {

using systolic::Dtype;
using systolic::Opcode;
using systolic::Unit;

namespace {

// Index into Run::macs_by_dtype (the energy.mac_*_pj keys), or -1 for a dtype the array does
// not multiply (ExecuteMxu rejects it).
int MacEnergyIndex(Dtype dtype) {
  switch (dtype) {
    case Dtype::kS8:
      return 0;
    case Dtype::kBf16:
      return 1;
    case Dtype::kF32:
      return 2;
    case Dtype::kU8:
    case Dtype::kS32:
    case Dtype::kF16:
    case Dtype::kPred:
      return -1;
  }
  return -1;
}

}  // namespace

MxuUnit::MxuUnit(sc_core::sc_module_name name, Shared& shared)
    : UnitProcess(name, shared, Unit::kMxu) {}

void MxuUnit::Reset() { schedule_ = MxuSchedule{}; }

void MxuUnit::WaitUntilDrained() { shared_.WaitUntil(schedule_.Drained()); }

void MxuUnit::Execute(size_t index, const systolic::Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kMxuLoadWeights:
      LoadWeights(index, inst);
      return;
    case Opcode::kMxuMatmul:
      Compute(index, inst, inst.get(systolic::MxuMatmulField::buf),
              static_cast<Dtype>(inst.get(systolic::MxuMatmulField::dtype)));
      return;
    case Opcode::kMxuConv:
      Compute(index, inst, inst.get(systolic::MxuConvField::buf),
              static_cast<Dtype>(inst.get(systolic::MxuConvField::dtype)));
      return;
    default:  // ExecutingUnit() routes only mxu.* instructions here
      throw hlo::Error("not a matrix-unit instruction");
  }
}

void MxuUnit::LoadWeights(size_t index, const systolic::Instruction& inst) {
  Run& run = shared_.run();
  const size_t buffer = inst.get(systolic::MxuLoadWeightsField::buf);
  const int64_t now = shared_.Now();
  // The loader shifts one tile at a time, and must not overwrite weights still in use. Not a
  // stall: until `start` the loader or the array is busy, so the unit is working.
  const int64_t start = schedule_.LoadStart(now, buffer);
  shared_.WaitUntil(start);

  const UnitCost cost = ComputeCost(inst, run.config, run.registers, run.weights);
  const PortGrant grant = AcquirePorts(cost.ub_bytes_read + cost.ub_bytes_written,
                                       cost.acc_bytes_read + cost.acc_bytes_written, cost.cycles);
  const int64_t end = schedule_.Load(buffer, grant.start, std::max(cost.cycles, grant.cycles)).end;
  shared_.CheckCycleLimit(end);  // before the host work, which may be large
  ExecuteMxu(inst, run.config, run.registers, run.weights, run.memories);
  run.stats.ub_bytes_read += cost.ub_bytes_read;
  run.stats.ub_bytes_written += cost.ub_bytes_written;
  shared_.Busy(unit_, grant.start, end, index, grant.stall);
  // No wait: the loader works in the background while the next instruction issues.
}

void MxuUnit::Compute(size_t index, const systolic::Instruction& inst, size_t buffer,
                      Dtype dtype) {
  Run& run = shared_.run();
  const int64_t now = shared_.Now();
  const int64_t array_ready = schedule_.ArrayReady(now);
  const int64_t start = schedule_.ComputeStart(now, buffer);
  // Waiting for the array to accept is not a stall; the array idling while the loader finishes
  // this tile's weights is (the stall double buffering exists to hide).
  shared_.Stall(unit_, array_ready, start, StallCause::kWeights);
  shared_.WaitUntil(start);

  const UnitCost cost = ComputeCost(inst, run.config, run.registers, run.weights);
  // The functional model really multiplies: bound the host work one instruction can demand (a
  // 1023x1023 conv tile on a 4096x4096 array would be ~10^13 MACs, hours of host time).
  const int64_t max_macs = hlo::GlobalLimits().max_elements_per_array;
  if (cost.macs > max_macs) {
    throw hlo::Error(std::to_string(cost.macs) + " multiply-accumulates exceed the limit of " +
                     std::to_string(max_macs) + " per instruction");
  }
  // Operands stream in one row per cycle over the issue interval.
  const PortGrant grant = AcquirePorts(cost.ub_bytes_read + cost.ub_bytes_written,
                                       cost.acc_bytes_read + cost.acc_bytes_written,
                                       cost.issue_interval);
  shared_.CheckCycleLimit(grant.start + cost.cycles + grant.cycles);  // before the host work
  const int64_t end = schedule_.Compute(buffer, grant.start, cost, grant.cycles).end;
  ExecuteMxu(inst, run.config, run.registers, run.weights, run.memories);

  run.stats.macs += cost.macs;
  if (const int mac_index = MacEnergyIndex(dtype); mac_index >= 0) {
    run.macs_by_dtype[static_cast<size_t>(mac_index)] += cost.macs;
  }
  run.stats.ub_bytes_read += cost.ub_bytes_read;
  run.stats.ub_bytes_written += cost.ub_bytes_written;
  run.stats.acc_bytes_read += cost.acc_bytes_read;
  run.stats.acc_bytes_written += cost.acc_bytes_written;
  shared_.Busy(unit_, grant.start, end, index, grant.stall);
  // No wait: the array computes in the background; the next instruction waits only if it needs
  // the array or this buffer.
}

}  // namespace simulator::sim

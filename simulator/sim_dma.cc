// The DMA engines and the DRAM channel (sim_dma.h).
#include "simulator/sim_dma.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "simulator/numeric_types.h"

namespace simulator::sim {

using systolic::ConfigRegister;
using systolic::Opcode;
using systolic::Unit;

namespace {

// Cycles a transfer holds the DRAM channel.
int64_t ChannelCycles(const Run& run, int64_t bus_bytes) {
  const double cycles = static_cast<double>(bus_bytes) / run.dram_bytes_per_cycle;
  // The relative epsilon keeps an exact quotient (64 B at 16 B/cycle) from rounding up to 5
  // through floating-point noise in the bandwidth conversion.
  return static_cast<int64_t>(std::ceil(cycles * (1 - 1e-12)));
}

}  // namespace

DmaUnit::DmaUnit(sc_core::sc_module_name name, Shared& shared, Unit unit)
    : UnitProcess(name, shared, unit) {
  shared.MakeAbortable(load_issued_, load_issued_or_abort_);
  shared.MakeAbortable(load_completed_, load_completed_or_abort_);
  if (unit == Unit::kLoad) {
    SC_HAS_PROCESS(DmaUnit);
    SC_THREAD(WritebackThread);
    set_stack_size(kThreadStackBytes);
  }
}

void DmaUnit::Reset() {
  in_flight_.clear();
  stores_complete_at_ = 0;
}

void DmaUnit::WaitUntilDrained() {
  while (!in_flight_.empty()) shared_.WaitFor(load_completed_or_abort_);
  shared_.WaitUntil(stores_complete_at_);
}

void DmaUnit::Execute(size_t index, const systolic::Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kDmaLoad:
      IssueLoad(index, Decode(inst));
      return;
    case Opcode::kDmaStore:
      IssueStore(index, Decode(inst));
      return;
    case Opcode::kDmaGather:
      IssueLoad(index, Decode(inst));
      return;
    case Opcode::kDmaScatter:
      IssueStore(index, Decode(inst));
      return;
    default:  // ExecutingUnit() routes only DMA instructions here
      throw hlo::Error("not a DMA instruction");
  }
}

DmaUnit::Transfer DmaUnit::Decode(const systolic::Instruction& inst) const {
  Run& run = shared_.run();
  return DecodeDma(inst, run.registers, run.config, run.memories);
}

int64_t DmaUnit::AcquireChannel(const Transfer& transfer, int64_t channel_cycles) {
  Run& run = shared_.run();
  const int64_t now = shared_.Now();
  const int64_t start = Shared::Reserve(run.dram_free, now, channel_cycles);
  shared_.Stall(unit_, now, start, StallCause::kDram);
  if (channel_cycles > 0) {
    // The achieved DRAM bandwidth while this transfer holds the channel, in GB/s.
    shared_.Counter("dram_gbps", start,
                    static_cast<double>(transfer.bytes) / static_cast<double>(channel_cycles) *
                        run.config.clock_mhz / 1000);
    shared_.Counter("dram_gbps", start + channel_cycles, 0);
  }
  return start;
}

void DmaUnit::IssueLoad(size_t index, const Transfer& transfer) {
  Run& run = shared_.run();
  const auto max_in_flight = static_cast<size_t>(run.config.dma_max_in_flight);
  if (in_flight_.size() >= max_in_flight) {  // every request slot taken: wait for one
    const int64_t requested = shared_.Now();
    while (in_flight_.size() >= max_in_flight) shared_.WaitFor(load_completed_or_abort_);
    shared_.Stall(unit_, requested, shared_.Now(), StallCause::kDram);
  }
  const int64_t channel_cycles = ChannelCycles(run, transfer.bus_bytes);
  const int64_t channel_start = AcquireChannel(transfer, channel_cycles);
  const int64_t data_end = channel_start + channel_cycles + run.dram_latency_cycles;
  shared_.CheckCycleLimit(data_end);
  in_flight_.push_back({index, transfer, channel_start, data_end});
  ++run.loads_in_flight;
  load_issued_.notify();
  // The engine is busy issuing its bursts until its slot ends; the latency overlaps what follows.
  shared_.WaitUntil(channel_start + channel_cycles);
}

void DmaUnit::WritebackThread() {
  for (;;) {
    try {
      for (;;) {
        while (in_flight_.empty()) shared_.WaitFor(load_issued_or_abort_);
        const InFlightLoad load = in_flight_.front();
        try {
          CompleteLoad(load);
        } catch (const hlo::Error& e) {
          shared_.Fail(load.index, e.message());
        } catch (const std::exception& e) {
          shared_.Fail(load.index, e.what());
        }
        in_flight_.pop_front();
        --shared_.run().loads_in_flight;
        shared_.unit_finished().notify();
        load_completed_.notify();
      }
    } catch (const AbortRun&) {
      sc_core::wait(shared_.run_started());
    }
  }
}

void DmaUnit::CompleteLoad(const InFlightLoad& load) {
  Run& run = shared_.run();
  const Transfer& transfer = load.transfer;
  const bool to_acc = (transfer.local & systolic::kAccumulatorBit) != 0;
  // The local port takes the data as it arrives, at the channel's pace: from the first byte's
  // arrival (the channel slot's start plus the latency) to data_end.
  const int64_t arriving = load.data_end - run.dram_latency_cycles - load.channel_start;
  shared_.WaitUntil(std::max(shared_.Now(), load.data_end - arriving));
  const PortGrant grant =
      AcquirePorts(to_acc ? 0 : transfer.bytes, to_acc ? transfer.bytes : 0, arriving);
  Copy(transfer, /*dram_to_local=*/true);

  const int64_t end = std::max(load.data_end, grant.start + grant.cycles);
  run.stats.dram_bytes_read += transfer.bytes;
  run.stats.ub_bytes_read += transfer.index_bytes;
  (to_acc ? run.stats.acc_bytes_written : run.stats.ub_bytes_written) += transfer.bytes;
  shared_.Busy(unit_, load.channel_start, end, load.index, grant.stall);
  shared_.WaitUntil(end);
}

void DmaUnit::IssueStore(size_t index, const Transfer& transfer) {
  Run& run = shared_.run();
  const bool from_acc = (transfer.local & systolic::kAccumulatorBit) != 0;
  const int64_t channel_cycles = ChannelCycles(run, transfer.bus_bytes);
  // The store cannot end before this: refuse a run past the limit before copying anything.
  shared_.CheckCycleLimit(shared_.Now() + channel_cycles + run.dram_latency_cycles);
  // Read the local data through the port at the channel's pace; the channel carries it as it
  // is read, so its slot ends no earlier than the last byte read.
  const PortGrant grant =
      AcquirePorts(from_acc ? 0 : transfer.bytes, from_acc ? transfer.bytes : 0, channel_cycles);
  Copy(transfer, /*dram_to_local=*/false);
  const int64_t port_end = grant.start + grant.cycles;
  shared_.WaitUntil(std::max(shared_.Now(), port_end - channel_cycles));
  const int64_t channel_earliest = shared_.Now();
  const int64_t channel_start = AcquireChannel(transfer, channel_cycles);
  const int64_t end =
      std::max(channel_start + channel_cycles, port_end) + run.dram_latency_cycles;
  run.stats.dram_bytes_written += transfer.bytes;
  if (transfer.add_dtype) run.stats.dram_bytes_read += transfer.bytes;
  run.stats.ub_bytes_read += transfer.index_bytes;
  (from_acc ? run.stats.acc_bytes_read : run.stats.ub_bytes_read) += transfer.bytes;
  shared_.Busy(unit_, grant.start, end, index,
               grant.stall + (channel_start - channel_earliest));
  stores_complete_at_ = std::max(stores_complete_at_, end);
  // Free for the next store once its slot ends; the latency overlaps what follows.
  shared_.WaitUntil(std::max(channel_start + channel_cycles, port_end));
}

void DmaUnit::Copy(const Transfer& transfer, bool dram_to_local) {
  CopyDma(transfer, dram_to_local, shared_.run().memories);
}

}  // namespace simulator::sim

// The two DMA engines (load: DRAM -> UB/accumulators, store: the reverse) and the DRAM model.
//
// Timing of one dma.load / dma.store (docs/simulator.md):
//   - DRAM: one channel shared by both engines, granted first come first served. A transfer
//     holds it for ceil(bus bytes / (dram.bandwidth_gbps * 1000 / clock.mhz)) cycles, where the
//     bus bytes are each row rounded up to whole dram.burst_bytes bursts; waiting for it is a
//     "dram" stall. The data is complete dram.latency_ns (in cycles, rounded up) after the slot.
//   - Latency is pipelined: an engine issues its next transfer as soon as its channel slot ends,
//     with up to dma.max_in_flight transfers outstanding; transfers complete in order. sem.signal
//     on an engine waits until all of its transfers completed.
//   - Local side: the UB or accumulator port moves the bytes at its per-cycle width. A load
//     writes them as the data arrives (the port is requested when the last port-width is due,
//     by the engine's write-back process), a store reads them before asking for the channel. A
//     busy port is a "ub_port" / "acc_port" stall.
// Data effect: a 3-D strided copy using the load.* / store.* stride registers (0 = packed) as
// they were when the instruction issued, bounds-checked by Memories; a load's bytes land when
// it completes, a store's are read when it issues. load./store.dram_offset (times the scale)
// moves the DRAM address of every transfer of that engine. dma.gather times like a load of
// `rows` rows; its row addresses come from the s32 index array, read (and checked against
// load.index_bound) when it issues. dma.scatter times like a store of the rows it does not
// skip (twice the bus bytes when it adds: each row is read, then written). Transfers above
// hlo::GlobalLimits().max_bytes_per_allocation are refused before anything is copied.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "simulator/dma_transfer.h"
#include "simulator/sim_unit.h"

namespace simulator::sim {


class DmaUnit final : public UnitProcess {
 public:
  // `unit` is systolic::Unit::kLoad or kStore.
  DmaUnit(sc_core::sc_module_name name, Shared& shared, systolic::Unit unit);
  void Reset() override;

 protected:
  void Execute(size_t index, const systolic::Instruction& inst) override;
  void WaitUntilDrained() override;

 private:
  using Transfer = DmaTransfer;
  // A load whose data is on its way.
  struct InFlightLoad {
    size_t index = 0;
    Transfer transfer;
    int64_t channel_start = 0;
    int64_t data_end = 0;
  };

  Transfer Decode(const systolic::Instruction& inst) const;  // DecodeDma on this run
  void IssueLoad(size_t index, const Transfer& transfer);
  void IssueStore(size_t index, const Transfer& transfer);
  // Reserves the DRAM channel at the current cycle; returns the start of the slot.
  int64_t AcquireChannel(const Transfer& transfer, int64_t channel_cycles);
  void Copy(const Transfer& transfer, bool dram_to_local);  // CopyDma on this run
  // The load engine's second process: completes in-flight loads in order.
  void WritebackThread();
  void CompleteLoad(const InFlightLoad& load);

  std::deque<InFlightLoad> in_flight_;  // load engine only
  int64_t stores_complete_at_ = 0;      // store engine: the latest completion issued
  sc_core::sc_event load_issued_, load_completed_;
  sc_core::sc_event_or_list load_issued_or_abort_, load_completed_or_abort_;
};

}  // namespace simulator::sim

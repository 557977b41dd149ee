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

// dram[address ...] += row, element by element in `dtype` (floats round to the dtype after the
// addition, integers wrap), the order a sequential scatter with an add combiner takes.
void AddRow(Dram& dram, uint64_t address, std::span<const uint8_t> row, systolic::Dtype dtype) {
  const auto bytes = static_cast<size_t>(systolic::DtypeBytes(dtype));
  if (dtype == systolic::Dtype::kPred || row.size() % bytes != 0) {
    throw hlo::Error("store.scatter_add in " + std::string(systolic::DtypeName(dtype)) +
                     " on a row of " + std::to_string(row.size()) + " bytes");
  }
  std::vector<uint8_t> sum(row.size());
  dram.Read(address, sum);
  for (size_t i = 0; i < row.size(); i += bytes) {
    if (IsFloatDtype(dtype)) {
      StoreFloat(dtype, &sum[i], LoadFloat(dtype, &sum[i]) + LoadFloat(dtype, &row[i]));
    } else {
      StoreIntWrapping(dtype, &sum[i], LoadInt(dtype, &sum[i]) + LoadInt(dtype, &row[i]));
    }
  }
  dram.Write(address, sum);
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
  if (inst.opcode == Opcode::kDmaGather || inst.opcode == Opcode::kDmaScatter) {
    return DecodeIndexed(inst);
  }
  const RegisterFile& registers = shared_.run().registers;
  Transfer t;
  ConfigRegister dram_row, dram_plane, local_row, local_plane;
  if (inst.opcode == Opcode::kDmaLoad) {
    t.dram = inst.get(systolic::DmaLoadField::dram);
    t.local = inst.get(systolic::DmaLoadField::local);
    t.row_bytes = inst.get(systolic::DmaLoadField::row_bytes);
    t.rows = inst.get(systolic::DmaLoadField::rows);
    t.planes = inst.get(systolic::DmaLoadField::planes);
    dram_row = ConfigRegister::kLoadDramRowStride, dram_plane = ConfigRegister::kLoadDramPlaneStride;
    local_row = ConfigRegister::kLoadLocalRowStride;
    local_plane = ConfigRegister::kLoadLocalPlaneStride;
  } else {
    t.dram = inst.get(systolic::DmaStoreField::dram);
    t.local = inst.get(systolic::DmaStoreField::local);
    t.row_bytes = inst.get(systolic::DmaStoreField::row_bytes);
    t.rows = inst.get(systolic::DmaStoreField::rows);
    t.planes = inst.get(systolic::DmaStoreField::planes);
    dram_row = ConfigRegister::kStoreDramRowStride;
    dram_plane = ConfigRegister::kStoreDramPlaneStride;
    local_row = ConfigRegister::kStoreLocalRowStride;
    local_plane = ConfigRegister::kStoreLocalPlaneStride;
  }
  // A stride register at 0 means packed: rows back to back, planes back to back.
  auto reg = [&](ConfigRegister r) { return uint64_t{registers[static_cast<size_t>(r)]}; };
  t.dram = OffsetAddress(t.dram, inst.opcode == Opcode::kDmaLoad);
  t.dram_row_stride = reg(dram_row) != 0 ? reg(dram_row) : t.row_bytes;
  t.dram_plane_stride = reg(dram_plane) != 0 ? reg(dram_plane) : t.rows * t.dram_row_stride;
  t.local_row_stride = reg(local_row) != 0 ? reg(local_row) : t.row_bytes;
  t.local_plane_stride = reg(local_plane) != 0 ? reg(local_plane) : t.rows * t.local_row_stride;

  // Field widths (16 + 16 + 12 bits) keep these products below 2^44: no overflow.
  const uint64_t bytes = t.row_bytes * t.rows * t.planes;
  const auto limit = static_cast<uint64_t>(hlo::GlobalLimits().max_bytes_per_allocation);
  if (bytes > limit) {
    throw hlo::Error("transfer of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                     std::to_string(limit) + " bytes per instruction");
  }
  const auto burst = static_cast<uint64_t>(shared_.run().config.dram_burst_bytes);
  t.bytes = static_cast<int64_t>(bytes);
  t.bus_bytes = static_cast<int64_t>((t.row_bytes + burst - 1) / burst * burst * t.rows * t.planes);
  return t;
}

// The dynamic offset registers (load./store.dram_offset times the scale) added to a DRAM
// address; a result below 0 or past the 40-bit address space is an error.
uint64_t DmaUnit::OffsetAddress(uint64_t dram, bool is_load) const {
  const RegisterFile& registers = shared_.run().registers;
  const auto offset = static_cast<int64_t>(static_cast<int32_t>(registers[static_cast<size_t>(
      is_load ? ConfigRegister::kLoadDramOffset : ConfigRegister::kStoreDramOffset)]));
  const auto scale = static_cast<int64_t>(registers[static_cast<size_t>(
      is_load ? ConfigRegister::kLoadOffsetScale : ConfigRegister::kStoreOffsetScale)]);
  if (offset == 0) return dram;
  // |offset| < 2^31 and scale < 2^32: the product fits in 64 bits.
  const int64_t address = static_cast<int64_t>(dram) + offset * scale;
  if (address < 0 || address >= (int64_t{1} << 40)) {
    throw hlo::Error(std::string(is_load ? "load" : "store") + ".dram_offset " +
                     std::to_string(offset) + " x scale " + std::to_string(scale) +
                     " moves DRAM address " + std::to_string(dram) + " outside the address space");
  }
  return static_cast<uint64_t>(address);
}

// dma.gather / dma.scatter: one row per index. A gather's index outside load.index_bound is an
// error (HLO clamps gather indices, so the program should have); a scatter's is skipped (HLO
// drops out-of-bounds scatter updates).
DmaUnit::Transfer DmaUnit::DecodeIndexed(const systolic::Instruction& inst) const {
  const bool gather = inst.opcode == Opcode::kDmaGather;
  using G = systolic::DmaGatherField;
  using S = systolic::DmaScatterField;
  Run& run = shared_.run();
  const RegisterFile& registers = run.registers;
  auto reg = [&](ConfigRegister r) { return uint64_t{registers[static_cast<size_t>(r)]}; };
  Transfer t;
  t.dram = OffsetAddress(gather ? inst.get(G::dram) : inst.get(S::dram), gather);
  t.local = gather ? inst.get(G::local) : inst.get(S::local);
  t.row_bytes = gather ? inst.get(G::row_bytes) : inst.get(S::row_bytes);
  t.rows = gather ? inst.get(G::rows) : inst.get(S::rows);
  t.planes = 1;
  const uint64_t dram_stride = reg(gather ? ConfigRegister::kLoadDramRowStride
                                          : ConfigRegister::kStoreDramRowStride);
  const uint64_t local_stride = reg(gather ? ConfigRegister::kLoadLocalRowStride
                                           : ConfigRegister::kStoreLocalRowStride);
  t.dram_row_stride = dram_stride != 0 ? dram_stride : t.row_bytes;
  t.local_row_stride = local_stride != 0 ? local_stride : t.row_bytes;
  t.dram_plane_stride = 0;
  t.local_plane_stride = t.rows * t.local_row_stride;
  const uint64_t bound =
      reg(gather ? ConfigRegister::kLoadIndexBound : ConfigRegister::kStoreIndexBound);
  if (gather && bound == 0) {
    throw hlo::Error("dma.gather with load.index_bound 0 (no index is in bounds)");
  }
  if (!gather) {
    const uint64_t add = reg(ConfigRegister::kStoreScatterAdd);
    if (add > systolic::DtypeSymbols().size()) {
      throw hlo::Error("store.scatter_add " + std::to_string(add) + " names no dtype");
    }
    if (add != 0) t.add_dtype = static_cast<systolic::Dtype>(add - 1);
  }
  const uint64_t index = gather ? inst.get(G::index) : inst.get(S::index);
  std::span<const uint8_t> bytes =
      run.memories.Local(index).Read(Memories::LocalOffset(index), t.rows * 4);
  t.row_dram.reserve(t.rows);
  uint64_t moved = 0;
  for (uint64_t r = 0; r < t.rows; ++r) {
    int32_t value = 0;
    std::memcpy(&value, bytes.data() + r * 4, 4);
    if (value < 0 || static_cast<uint64_t>(value) >= bound) {
      if (gather) {
        throw hlo::Error("dma.gather index[" + std::to_string(r) + "] = " +
                         std::to_string(value) + " is outside [0, " + std::to_string(bound) +
                         ") (load.index_bound)");
      }
      t.row_dram.push_back(kSkippedRow);
      continue;
    }
    // value < 2^31 and the stride < 2^32: no overflow.
    t.row_dram.push_back(t.dram + static_cast<uint64_t>(value) * t.dram_row_stride);
    ++moved;
  }
  t.index_bytes = static_cast<int64_t>(t.rows * 4);
  const auto burst = static_cast<uint64_t>(run.config.dram_burst_bytes);
  t.bytes = static_cast<int64_t>(t.row_bytes * moved);
  // A scatter-add reads each row before writing it back: twice the bus traffic.
  const uint64_t passes = t.add_dtype ? 2 : 1;
  t.bus_bytes =
      static_cast<int64_t>((t.row_bytes + burst - 1) / burst * burst * moved * passes);
  return t;
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

void DmaUnit::Copy(const Transfer& t, bool dram_to_local) {
  Memories& memories = shared_.run().memories;
  LocalMemory& local = memories.Local(t.local);
  const uint64_t local_base = Memories::LocalOffset(t.local);
  for (uint64_t plane = 0; plane < t.planes; ++plane) {
    for (uint64_t row = 0; row < t.rows; ++row) {
      const uint64_t dram_address = t.row_dram.empty()
                                        ? t.dram + plane * t.dram_plane_stride +
                                              row * t.dram_row_stride
                                        : t.row_dram[row];
      if (dram_address == kSkippedRow) continue;
      const uint64_t local_offset =
          local_base + plane * t.local_plane_stride + row * t.local_row_stride;
      if (dram_to_local) {
        memories.dram.Read(dram_address, local.Write(local_offset, t.row_bytes));
      } else if (t.add_dtype) {
        AddRow(memories.dram, dram_address, local.Read(local_offset, t.row_bytes), *t.add_dtype);
      } else {
        memories.dram.Write(dram_address, local.Read(local_offset, t.row_bytes));
      }
    }
  }
}

}  // namespace simulator::sim

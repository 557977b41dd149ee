// The DMA instructions' decoding and data effect (dma_transfer.h).
#include "simulator/dma_transfer.h"

#include <cstring>
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/numeric_types.h"

namespace simulator {

using systolic::ConfigRegister;
using systolic::Opcode;

namespace {

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

// The dynamic offset registers (load./store.dram_offset times the scale) added to a DRAM
// address; a result below 0 or past the 40-bit address space is an error.
uint64_t OffsetAddress(const RegisterFile& registers, uint64_t dram, bool is_load) {
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
DmaTransfer DecodeIndexed(const systolic::Instruction& inst, const RegisterFile& registers,
                          const systolic::ArchConfig& config, Memories& memories) {
  const bool gather = inst.opcode == Opcode::kDmaGather;
  using G = systolic::DmaGatherField;
  using S = systolic::DmaScatterField;
  auto reg = [&](ConfigRegister r) { return uint64_t{registers[static_cast<size_t>(r)]}; };
  DmaTransfer t;
  t.dram = OffsetAddress(registers, gather ? inst.get(G::dram) : inst.get(S::dram), gather);
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
      memories.Local(index).Read(Memories::LocalOffset(index), t.rows * 4);
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
  const auto burst = static_cast<uint64_t>(config.dram_burst_bytes);
  t.bytes = static_cast<int64_t>(t.row_bytes * moved);
  // A scatter-add reads each row before writing it back: twice the bus traffic.
  const uint64_t passes = t.add_dtype ? 2 : 1;
  t.bus_bytes =
      static_cast<int64_t>((t.row_bytes + burst - 1) / burst * burst * moved * passes);
  return t;
}

}  // namespace

DmaTransfer DecodeDma(const systolic::Instruction& inst, const RegisterFile& registers,
                      const systolic::ArchConfig& config, Memories& memories) {
  if (inst.opcode == Opcode::kDmaGather || inst.opcode == Opcode::kDmaScatter) {
    return DecodeIndexed(inst, registers, config, memories);
  }
  DmaTransfer t;
  ConfigRegister dram_row, dram_plane, local_row, local_plane;
  if (inst.opcode == Opcode::kDmaLoad) {
    t.dram = inst.get(systolic::DmaLoadField::dram);
    t.local = inst.get(systolic::DmaLoadField::local);
    t.row_bytes = inst.get(systolic::DmaLoadField::row_bytes);
    t.rows = inst.get(systolic::DmaLoadField::rows);
    t.planes = inst.get(systolic::DmaLoadField::planes);
    dram_row = ConfigRegister::kLoadDramRowStride;
    dram_plane = ConfigRegister::kLoadDramPlaneStride;
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
  t.dram = OffsetAddress(registers, t.dram, inst.opcode == Opcode::kDmaLoad);
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
  const auto burst = static_cast<uint64_t>(config.dram_burst_bytes);
  t.bytes = static_cast<int64_t>(bytes);
  t.bus_bytes = static_cast<int64_t>((t.row_bytes + burst - 1) / burst * burst * t.rows * t.planes);
  return t;
}

void CopyDma(const DmaTransfer& t, bool dram_to_local, Memories& memories) {
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

}  // namespace simulator

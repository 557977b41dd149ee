// The DMA instructions (dma.load, dma.store, dma.gather, dma.scatter) decoded into one transfer,
// and their data effect: what the SystemC model's DMA engines (sim_dma.h) time and move, and what
// a replay (replay.h) moves without timing.
//
// Guarantees:
//   - DecodeDma applies the registers as they are when the instruction issues: the stride
//     registers (0 = packed), load./store.dram_offset times its scale, the index bound and
//     store.scatter_add; an indexed transfer reads its s32 index array from local memory then.
//     A gather index outside load.index_bound, an offset address outside the 40-bit space, a
//     transfer above hlo::GlobalLimits().max_bytes_per_allocation and a scatter_add naming no
//     dtype are hlo::Errors, thrown before anything is copied.
//   - CopyDma is the 3-D strided copy (or the row list of an indexed transfer) bounds-checked by
//     Memories; a scatter skips rows outside store.index_bound and, with scatter_add, adds each
//     row to DRAM's in its dtype (floats rounded to the dtype, integers wrapping), in row order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "simulator/functional.h"
#include "simulator/memory.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace simulator {

// A decoded transfer: planes x rows x row_bytes with effective (non-zero) strides.
struct DmaTransfer {
  uint64_t dram = 0;
  uint64_t local = 0;  // local address (bit 25 selects the accumulators)
  uint64_t row_bytes = 0, rows = 0, planes = 0;
  uint64_t dram_row_stride = 0, dram_plane_stride = 0;
  uint64_t local_row_stride = 0, local_plane_stride = 0;
  int64_t bytes = 0;      // payload
  int64_t bus_bytes = 0;  // payload with each row rounded up to whole bursts
  // dma.gather / dma.scatter: each row's DRAM address, resolved from the index array at issue
  // (the array may be overwritten once the instruction issued); empty for strided transfers.
  std::vector<uint64_t> row_dram;  // kSkippedRow: a scatter row outside store.index_bound
  int64_t index_bytes = 0;  // the index array's bytes read from local memory
  std::optional<systolic::Dtype> add_dtype;  // dma.scatter with store.scatter_add
};

inline constexpr uint64_t kSkippedRow = ~uint64_t{0};

DmaTransfer DecodeDma(const systolic::Instruction& inst, const RegisterFile& registers,
                      const systolic::ArchConfig& config, Memories& memories);

// Loads and gathers copy DRAM -> local (`dram_to_local`), stores and scatters the reverse.
void CopyDma(const DmaTransfer& transfer, bool dram_to_local, Memories& memories);

}  // namespace simulator

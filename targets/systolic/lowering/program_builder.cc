// ProgramBuilder (program_builder.h): field-width splitting, register caching, tokens.
#include "targets/systolic/lowering/program_builder.h"

#include <algorithm>
#include <string>

#include "hlo/diagnostic.h"

namespace systolic::lowering {
namespace {

// ISA field limits (isa.def): row_bytes and rows are 16-bit (program_builder.h), planes 12-bit.
constexpr int64_t kMaxRowBytes = kMaxDmaRowBytes;
constexpr int64_t kMaxRows = kMaxDmaRows;
constexpr int64_t kMaxPlanes = 4095;
constexpr int64_t kMaxGatherRows = 4095;  // dma.gather's and dma.scatter's 12-bit rows
// The cached value of a register cfg.load wrote: no value SetRegister is asked for equals it.
constexpr int64_t kUnknownValue = -1;
// Contiguous blocks are cut into rows of this size (a power of two below kMaxRowBytes).
constexpr int64_t kFlatChunk = 32768;

bool IsWorkingUnit(Unit unit) { return unit != Unit::kControl; }

}  // namespace

int ProgramBuilder::SemaphoreFor(Unit from, Unit to, int bank) {
  if (!IsWorkingUnit(from) || !IsWorkingUnit(to) || from == to || bank < 0 || bank > 1) {
    throw hlo::Error("internal: no token between " + std::string(UnitName(from)) + " and " +
                     std::string(UnitName(to)));
  }
  return 16 * bank + static_cast<int>(from) * 4 + static_cast<int>(to);
}

Program ProgramBuilder::Take() {
  program_.instructions.push_back(MakeInstruction(Opcode::kHalt));
  Program out = std::move(program_);
  program_ = {};
  registers_.clear();
  outstanding_ = {};
  return out;
}

void ProgramBuilder::Splice(const Instruction& inst) {
  if (inst.opcode == Opcode::kCfgSet) {
    SetRegister(static_cast<ConfigRegister>(inst.get(CfgSetField::reg)),
                static_cast<int64_t>(inst.get(CfgSetField::value)));
  } else if (inst.opcode == Opcode::kCfgLoad) {
    LoadRegister(static_cast<ConfigRegister>(inst.get(CfgLoadField::reg)),
                 inst.get(CfgLoadField::src));
  } else {
    Append(inst);
  }
}

void ProgramBuilder::SetRegister(ConfigRegister reg, int64_t value) {
  if (value < 0 || value > int64_t{0xffffffff}) {
    throw hlo::Error("stride of " + std::to_string(value) +
                     " bytes does not fit a 32-bit configuration register");
  }
  auto it = registers_.find(reg);
  int64_t current = it == registers_.end() ? 0 : it->second;
  if (current == value) return;
  registers_[reg] = value;
  Instruction inst = MakeInstruction(Opcode::kCfgSet);
  inst.set(CfgSetField::reg, static_cast<uint64_t>(reg));
  inst.set(CfgSetField::value, static_cast<uint64_t>(value));
  Append(inst);
}

void ProgramBuilder::LoadRegister(ConfigRegister reg, uint64_t local) {
  registers_[reg] = kUnknownValue;
  Instruction inst = MakeInstruction(Opcode::kCfgLoad);
  inst.set(CfgLoadField::reg, static_cast<uint64_t>(reg));
  inst.set(CfgLoadField::src, local);
  Append(inst);
}

void ProgramBuilder::Gather(uint64_t dram, int64_t dram_row_stride, uint64_t local,
                            int64_t local_row_stride, uint64_t index, int64_t row_bytes,
                            int64_t rows) {
  SetRegister(ConfigRegister::kLoadDramRowStride, dram_row_stride);
  SetRegister(ConfigRegister::kLoadLocalRowStride, local_row_stride);
  IndexedTransfer(Opcode::kDmaGather, dram, local, local_row_stride, index, row_bytes, rows);
}

void ProgramBuilder::Scatter(uint64_t local, int64_t local_row_stride, uint64_t dram,
                             int64_t dram_row_stride, uint64_t index, int64_t row_bytes,
                             int64_t rows) {
  SetRegister(ConfigRegister::kStoreDramRowStride, dram_row_stride);
  SetRegister(ConfigRegister::kStoreLocalRowStride, local_row_stride);
  IndexedTransfer(Opcode::kDmaScatter, dram, local, local_row_stride, index, row_bytes, rows);
}

// dma.gather and dma.scatter share their fields but for the order of `local` and `dram`.
void ProgramBuilder::IndexedTransfer(Opcode opcode, uint64_t dram, uint64_t local,
                                     int64_t local_row_stride, uint64_t index, int64_t row_bytes,
                                     int64_t rows) {
  const bool gather = opcode == Opcode::kDmaGather;
  // Column chunks of whole 8-byte words: a scatter-add must not cut an element in two.
  constexpr int64_t kColumnChunk = kMaxRowBytes / 8 * 8;
  for (int64_t col = 0; col < row_bytes; col += kColumnChunk) {
    const int64_t width = std::min(kColumnChunk, row_bytes - col);
    for (int64_t first = 0; first < rows; first += kMaxGatherRows) {
      const int64_t count = std::min(kMaxGatherRows, rows - first);
      Instruction inst = MakeInstruction(opcode);
      const uint64_t row_dram = dram + static_cast<uint64_t>(col);
      const uint64_t row_local = local + static_cast<uint64_t>(first * local_row_stride + col);
      const uint64_t row_index = index + static_cast<uint64_t>(first * 4);
      if (gather) {
        inst.set(DmaGatherField::dram, row_dram);
        inst.set(DmaGatherField::local, row_local);
        inst.set(DmaGatherField::index, row_index);
        inst.set(DmaGatherField::row_bytes, static_cast<uint64_t>(width));
        inst.set(DmaGatherField::rows, static_cast<uint64_t>(count));
      } else {
        inst.set(DmaScatterField::local, row_local);
        inst.set(DmaScatterField::dram, row_dram);
        inst.set(DmaScatterField::index, row_index);
        inst.set(DmaScatterField::row_bytes, static_cast<uint64_t>(width));
        inst.set(DmaScatterField::rows, static_cast<uint64_t>(count));
      }
      Append(inst);
    }
  }
}

void ProgramBuilder::Transfer(bool is_load, uint64_t dram, int64_t dram_stride, uint64_t local,
                              int64_t local_stride, int64_t row_bytes, int64_t rows) {
  if (row_bytes <= 0 || rows <= 0) return;
  // A contiguous block on both sides is re-cut into kFlatChunk-byte rows.
  if (dram_stride == row_bytes && local_stride == row_bytes && row_bytes > kMaxRowBytes) {
    int64_t total = row_bytes * rows;
    int64_t full_rows = total / kFlatChunk;
    if (full_rows > 0) {
      Transfer(is_load, dram, kFlatChunk, local, kFlatChunk, kFlatChunk, full_rows);
    }
    int64_t done = full_rows * kFlatChunk;
    if (done < total) {
      Transfer(is_load, dram + done, total - done, local + done, total - done, total - done, 1);
    }
    return;
  }
  for (int64_t col = 0; col < row_bytes; col += kMaxRowBytes) {
    int64_t width = std::min(kMaxRowBytes, row_bytes - col);
    for (int64_t row = 0; row < rows; row += kMaxRows) {
      int64_t count = std::min(kMaxRows, rows - row);
      uint64_t d = dram + static_cast<uint64_t>(row * dram_stride + col);
      uint64_t l = local + static_cast<uint64_t>(row * local_stride + col);
      // A single row needs no stride; leaving the register alone saves a cfg.set.
      if (count > 1) {
        SetRegister(is_load ? ConfigRegister::kLoadDramRowStride
                            : ConfigRegister::kStoreDramRowStride,
                    dram_stride == width ? 0 : dram_stride);
        SetRegister(is_load ? ConfigRegister::kLoadLocalRowStride
                            : ConfigRegister::kStoreLocalRowStride,
                    local_stride == width ? 0 : local_stride);
      }
      Instruction inst = MakeInstruction(is_load ? Opcode::kDmaLoad : Opcode::kDmaStore);
      if (is_load) {
        inst.set(DmaLoadField::dram, d);
        inst.set(DmaLoadField::local, l);
        inst.set(DmaLoadField::row_bytes, static_cast<uint64_t>(width));
        inst.set(DmaLoadField::rows, static_cast<uint64_t>(count));
        inst.set(DmaLoadField::planes, 1);
      } else {
        inst.set(DmaStoreField::local, l);
        inst.set(DmaStoreField::dram, d);
        inst.set(DmaStoreField::row_bytes, static_cast<uint64_t>(width));
        inst.set(DmaStoreField::rows, static_cast<uint64_t>(count));
        inst.set(DmaStoreField::planes, 1);
      }
      Append(inst);
    }
  }
}

void ProgramBuilder::Load(uint64_t dram, int64_t dram_stride, uint64_t local,
                          int64_t local_stride, int64_t row_bytes, int64_t rows) {
  Transfer(true, dram, dram_stride, local, local_stride, row_bytes, rows);
}

void ProgramBuilder::Store(uint64_t local, int64_t local_stride, uint64_t dram,
                           int64_t dram_stride, int64_t row_bytes, int64_t rows) {
  Transfer(false, dram, dram_stride, local, local_stride, row_bytes, rows);
}

void ProgramBuilder::LoadPlanes(uint64_t dram, int64_t dram_row_stride,
                                int64_t dram_plane_stride, uint64_t local,
                                int64_t local_row_stride, int64_t local_plane_stride,
                                int64_t row_bytes, int64_t rows, int64_t planes) {
  TransferPlanes(true, dram, dram_row_stride, dram_plane_stride, local, local_row_stride,
                 local_plane_stride, row_bytes, rows, planes);
}

void ProgramBuilder::StorePlanes(uint64_t local, int64_t local_row_stride,
                                 int64_t local_plane_stride, uint64_t dram,
                                 int64_t dram_row_stride, int64_t dram_plane_stride,
                                 int64_t row_bytes, int64_t rows, int64_t planes) {
  TransferPlanes(false, dram, dram_row_stride, dram_plane_stride, local, local_row_stride,
                 local_plane_stride, row_bytes, rows, planes);
}

void ProgramBuilder::TransferPlanes(bool is_load, uint64_t dram, int64_t dram_row_stride,
                                    int64_t dram_plane_stride, uint64_t local,
                                    int64_t local_row_stride, int64_t local_plane_stride,
                                    int64_t row_bytes, int64_t rows, int64_t planes) {
  if (row_bytes > kMaxRowBytes || rows > kMaxRows) {
    throw hlo::Error("internal: planar DMA tile too large");
  }
  using R = ConfigRegister;
  SetRegister(is_load ? R::kLoadDramRowStride : R::kStoreDramRowStride, dram_row_stride);
  SetRegister(is_load ? R::kLoadLocalRowStride : R::kStoreLocalRowStride, local_row_stride);
  SetRegister(is_load ? R::kLoadDramPlaneStride : R::kStoreDramPlaneStride, dram_plane_stride);
  SetRegister(is_load ? R::kLoadLocalPlaneStride : R::kStoreLocalPlaneStride,
              local_plane_stride);
  for (int64_t p = 0; p < planes; p += kMaxPlanes) {
    // dma.load and dma.store share their field layout but for the order of dram and local.
    Instruction inst = MakeInstruction(is_load ? Opcode::kDmaLoad : Opcode::kDmaStore);
    const uint64_t d = dram + static_cast<uint64_t>(p * dram_plane_stride);
    const uint64_t l = local + static_cast<uint64_t>(p * local_plane_stride);
    const uint64_t count = static_cast<uint64_t>(std::min(kMaxPlanes, planes - p));
    if (is_load) {
      inst.set(DmaLoadField::dram, d);
      inst.set(DmaLoadField::local, l);
      inst.set(DmaLoadField::row_bytes, static_cast<uint64_t>(row_bytes));
      inst.set(DmaLoadField::rows, static_cast<uint64_t>(rows));
      inst.set(DmaLoadField::planes, count);
    } else {
      inst.set(DmaStoreField::local, l);
      inst.set(DmaStoreField::dram, d);
      inst.set(DmaStoreField::row_bytes, static_cast<uint64_t>(row_bytes));
      inst.set(DmaStoreField::rows, static_cast<uint64_t>(rows));
      inst.set(DmaStoreField::planes, count);
    }
    Append(inst);
  }
}

void ProgramBuilder::SignalOpDone() {
  for (Unit unit : {Unit::kMxu, Unit::kVector, Unit::kStore}) {
    int sem = SemaphoreFor(unit, Unit::kLoad, 1);
    Instruction inst = MakeInstruction(Opcode::kSemSignal);
    inst.set(SemSignalField::unit, static_cast<uint64_t>(unit));
    inst.set(SemSignalField::sem, static_cast<uint64_t>(sem));
    inst.set(SemSignalField::count, 1);
    Append(inst);
    ++outstanding_[static_cast<size_t>(sem)];
  }
}

void ProgramBuilder::WaitOpDone() {
  for (Unit unit : {Unit::kMxu, Unit::kVector, Unit::kStore}) {
    int sem = SemaphoreFor(unit, Unit::kLoad, 1);
    Instruction inst = MakeInstruction(Opcode::kSemWait);
    inst.set(SemWaitField::unit, static_cast<uint64_t>(Unit::kLoad));
    inst.set(SemWaitField::sem, static_cast<uint64_t>(sem));
    inst.set(SemWaitField::count, 1);
    Append(inst);
    --outstanding_[static_cast<size_t>(sem)];
  }
}

void ProgramBuilder::EraseStores(size_t first, size_t end, uint64_t dram_begin,
                                 uint64_t dram_end) {
  auto& list = program_.instructions;
  end = std::min(end, list.size());
  if (first >= end) return;
  auto erased = std::remove_if(list.begin() + static_cast<std::ptrdiff_t>(first),
                               list.begin() + static_cast<std::ptrdiff_t>(end),
                               [&](const Instruction& inst) {
                                 if (inst.opcode != Opcode::kDmaStore) return false;
                                 uint64_t dram = inst.get(DmaStoreField::dram);
                                 return dram >= dram_begin && dram < dram_end;
                               });
  list.erase(erased, list.begin() + static_cast<std::ptrdiff_t>(end));
}

void ProgramBuilder::Signal(Unit from, Unit to, int bank) {
  int sem = SemaphoreFor(from, to, bank);
  Instruction inst = MakeInstruction(Opcode::kSemSignal);
  inst.set(SemSignalField::unit, static_cast<uint64_t>(from));
  inst.set(SemSignalField::sem, static_cast<uint64_t>(sem));
  inst.set(SemSignalField::count, 1);
  Append(inst);
  ++outstanding_[static_cast<size_t>(sem)];
}

void ProgramBuilder::Wait(Unit from, Unit to, int bank) {
  int sem = SemaphoreFor(from, to, bank);
  Instruction inst = MakeInstruction(Opcode::kSemWait);
  inst.set(SemWaitField::unit, static_cast<uint64_t>(to));
  inst.set(SemWaitField::sem, static_cast<uint64_t>(sem));
  inst.set(SemWaitField::count, 1);
  Append(inst);
  --outstanding_[static_cast<size_t>(sem)];
}

void ProgramBuilder::Barrier() {
  for (Unit unit : {Unit::kMxu, Unit::kVector, Unit::kStore}) Signal(unit, Unit::kLoad);
  for (Unit unit : {Unit::kMxu, Unit::kVector, Unit::kStore}) Wait(unit, Unit::kLoad);
}

bool ProgramBuilder::Balanced() const {
  return std::all_of(outstanding_.begin(), outstanding_.end(), [](int64_t n) { return n == 0; });
}

}  // namespace systolic::lowering

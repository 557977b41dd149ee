// The accelerator's memories as the simulator holds them: DRAM (sparse, so a preset with GiBs of
// DRAM costs only the pages a program touches), the unified buffer and the accumulators (dense,
// sized by the ArchConfig), and the per-byte "written" marks that let the simulator report an
// accumulator read before any write.
//
// Guarantees: every access is bounds-checked against the configured capacity and throws
// hlo::Error (the caller adds the instruction index) instead of touching memory out of range;
// unwritten DRAM reads as zero; allocation is bounded by the configured sizes and, for DRAM, by
// the bytes actually written (64 KiB pages).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "targets/systolic/arch_config.h"

namespace simulator {

class Dram {
 public:
  explicit Dram(int64_t capacity_bytes) : capacity_(capacity_bytes) {}
  int64_t capacity() const { return capacity_; }
  void Read(uint64_t address, std::span<uint8_t> out) const;
  void Write(uint64_t address, std::span<const uint8_t> data);
  // Byte ranges [begin, end) ever written, merged (for --output).
  std::vector<std::pair<uint64_t, uint64_t>> WrittenRanges() const;

 private:
  static constexpr uint64_t kPageBytes = 64 * 1024;
  int64_t capacity_;
  std::map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;  // page index -> kPageBytes bytes
  std::vector<std::pair<uint64_t, uint64_t>> written_;    // appended, merged lazily
};

// The unified buffer or the accumulator memory (selected by isa.h's kAccumulatorBit).
class LocalMemory {
 public:
  LocalMemory(std::string name, int64_t capacity_bytes, bool track_writes);
  const std::string& name() const { return name_; }
  int64_t capacity() const { return static_cast<int64_t>(bytes_.size()); }
  // Throws hlo::Error on an out-of-range access, or (when tracking writes) on reading a byte
  // never written.
  std::span<const uint8_t> Read(uint64_t offset, uint64_t length) const;
  std::span<uint8_t> Write(uint64_t offset, uint64_t length);  // marks the range written

 private:
  std::string name_;
  std::vector<uint8_t> bytes_;
  std::vector<bool> written_;  // empty unless track_writes
};

struct Memories {
  explicit Memories(const systolic::ArchConfig& config);
  Dram dram;
  LocalMemory ub;
  LocalMemory acc;
  // The memory a kLocal field addresses, and the offset inside it.
  LocalMemory& Local(uint64_t local_address);
  static uint64_t LocalOffset(uint64_t local_address) {
    return local_address & (systolic::kAccumulatorBit - 1);
  }
};

}  // namespace simulator

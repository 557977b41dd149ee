// The accelerator's memories as the simulator holds them: DRAM (sparse, so a preset with GiBs of
// DRAM costs only the pages a program touches), the unified buffer and the accumulators (dense,
// sized by the ArchConfig), and the per-byte "written" marks that let the simulator report an
// accumulator read before any write.
//
// Guarantees: every access is bounds-checked against the configured capacity and throws
// hlo::Error (the caller adds the instruction index) instead of touching memory out of range;
// unwritten DRAM reads as zero; allocation is bounded by the configured sizes and, for DRAM, by
// the bytes actually written (64 KiB pages). Not thread-safe, not even two Dram::Reads at once
// (they share a one-page lookup cache), as the simulator runs one program at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"

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
  // The bytes of page `page`, or null if it was never written. Remembers the last page asked
  // for: DMA rows (a few bytes each, at worst) mostly fall in the page of the previous row.
  uint8_t* Page(uint64_t page) const;
  int64_t capacity_;
  std::map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;  // page index -> kPageBytes bytes
  // The cache of Page(): pages are never freed, so the pointer stays valid while this Dram owns
  // them; a page created by Write replaces a cached "never written". Copies and moves (the
  // moved-from side too) start empty, so no Dram ever reads through another one's page.
  struct PageCache {
    uint64_t page = UINT64_MAX;
    uint8_t* bytes = nullptr;
    PageCache() = default;
    PageCache(const PageCache&) {}
    PageCache(PageCache&& other) noexcept { other = PageCache(); }
    PageCache& operator=(const PageCache&) {
      page = UINT64_MAX;
      bytes = nullptr;
      return *this;
    }
    PageCache& operator=(PageCache&& other) noexcept {
      page = other.page = UINT64_MAX;
      bytes = other.bytes = nullptr;
      return *this;
    }
  };
  mutable PageCache cache_;
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
  // One byte per byte of memory, 1 once written; empty unless track_writes. Bytes rather than
  // std::vector<bool> so the check of a whole range is a memchr and the marking a memset.
  std::vector<uint8_t> written_;
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

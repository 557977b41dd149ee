// The accelerator's memories as the simulator holds them: DRAM (sparse, so a preset with GiBs of
// DRAM costs only the pages a program touches), the unified buffer and the accumulators (dense,
// sized by the ArchConfig), and the per-byte "written" marks that let the simulator report an
// accumulator read before any write.
//
// DRAM can also *map* a host array (Dram::Map): the range reads the array's bytes, shared with
// the host's literal, so a model's weights are not held twice (an 11 GB model's parameters are
// the accelerator's DRAM contents, not a copy of them). A write into a mapped range copies the
// pages it touches first (copy on write, per 64 KiB page).
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
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hlo/literal.h"
#include "simulator/isa/arch_config.h"

namespace simulator {

class Dram {
 public:
  explicit Dram(int64_t capacity_bytes) : capacity_(capacity_bytes) {}
  int64_t capacity() const { return capacity_; }
  void Read(uint64_t address, std::span<uint8_t> out) const;
  void Write(uint64_t address, std::span<const uint8_t> data);
  // Makes [address, address + array's bytes) read `array`'s bytes without copying them (the
  // literal's storage is shared; memory.h's header). Replaces what the range held.
  void Map(uint64_t address, const hlo::Literal& array);
  // The array mapped at `address` with `shape`'s byte size and not written since, as a literal
  // of `shape` sharing its bytes; nullopt when the range holds anything else (use Read).
  std::optional<hlo::Literal> MappedArray(uint64_t address, const hlo::Shape& shape) const;
  // Byte ranges [begin, end) ever written or mapped, merged (for --output).
  std::vector<std::pair<uint64_t, uint64_t>> WrittenRanges() const;

 private:
  static constexpr uint64_t kPageBytes = 64 * 1024;
  // The bytes of page `page`, or null if it was never written. Remembers the last page asked
  // for: DMA rows (a few bytes each, at worst) mostly fall in the page of the previous row.
  uint8_t* Page(uint64_t page) const;
  // Fills `out` (bytes at `address`, inside no page) from the mappings, zero where none is.
  void ReadUnpaged(uint64_t address, std::span<uint8_t> out) const;
  void NoteWritten(uint64_t begin, uint64_t end);
  // Gives every page of [begin, end) that has none its current bytes (from the mappings).
  void MakePages(uint64_t begin, uint64_t end);
  int64_t capacity_;
  std::map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;  // page index -> kPageBytes bytes
  // Mapped arrays by start address; disjoint. A byte in a page reads from the page (it was
  // written after the mapping, or the page was copied from it), otherwise from its mapping.
  struct Mapping {
    hlo::Literal array;
    bool written = false;  // a write landed in its range since it was mapped
    uint64_t end(uint64_t begin) const { return begin + array.bytes().size(); }
  };
  std::map<uint64_t, Mapping> mappings_;
  // The first mapping whose range ends after `address` (mappings_.end() if none).
  std::map<uint64_t, Mapping>::iterator FirstMappingEndingAfter(uint64_t address);
  std::map<uint64_t, Mapping>::const_iterator FirstMappingEndingAfter(uint64_t address) const;
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
      Clear();
      return *this;
    }
    PageCache& operator=(PageCache&& other) noexcept {
      Clear();
      other.Clear();
      return *this;
    }
    void Clear() {
      page = UINT64_MAX;
      bytes = nullptr;
    }
  };
  mutable PageCache cache_;
  std::vector<std::pair<uint64_t, uint64_t>> written_;    // appended, merged lazily
};

// Zero bytes from calloc: a large block arrives as the kernel's zero pages, so a 24 MiB unified
// buffer costs only what a program touches (each loop and branch runner has its own memories,
// which were zero-filled, page by page, when they were created).
class ZeroedBytes {
 public:
  ZeroedBytes() = default;
  explicit ZeroedBytes(size_t size);
  uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
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
  ZeroedBytes bytes_;
  // One byte per byte of memory, 1 once written; empty unless track_writes. Bytes rather than
  // std::vector<bool> so the check of a whole range is a memchr and the marking a memset.
  ZeroedBytes written_;
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

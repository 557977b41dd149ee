// The simulator's memories (memory.h): sparse paged DRAM, dense unified buffer and accumulators.
//
// Guarantees: every access is range-checked with overflow-safe arithmetic before any byte is
// touched, and a failed check throws hlo::Error naming the memory, the range and the capacity.
// DRAM allocates a 64 KiB page only when a write touches it, so the host memory used is bounded
// by the bytes a program writes, not by the configured capacity.
#include "simulator/memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "hlo/diagnostic.h"

namespace simulator {
namespace {

[[noreturn, gnu::noinline]] void ThrowOutOfRange(std::string_view memory, uint64_t address,
                                                  uint64_t length, int64_t capacity) {
  throw hlo::Error(std::string(memory) + " access of " + std::to_string(length) +
                   " bytes at offset " + std::to_string(address) + " is outside its " +
                   std::to_string(capacity) + " bytes");
}

// [address, address + length) must lie inside [0, capacity). Written so that a huge `length`
// or `address` cannot wrap around. Inline, with the message built out of line: DMA transfers
// check every row, and rows can be a few bytes.
inline void CheckRange(std::string_view memory, uint64_t address, uint64_t length,
                       int64_t capacity) {
  const uint64_t cap = static_cast<uint64_t>(capacity);
  if (address > cap || length > cap - address) [[unlikely]] {
    ThrowOutOfRange(memory, address, length, capacity);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Dram

void Dram::Read(uint64_t address, std::span<uint8_t> out) const {
  CheckRange("DRAM", address, out.size(), capacity_);
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t at = address + done;
    const uint64_t page = at / kPageBytes;
    const uint64_t in_page = at % kPageBytes;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kPageBytes - in_page,
                                                                out.size() - done));
    const uint8_t* bytes = Page(page);
    if (bytes == nullptr) {  // never written: a mapped array's bytes, or zero
      ReadUnpaged(at, out.subspan(done, chunk));
    } else {
      std::memcpy(out.data() + done, bytes + in_page, chunk);
    }
    done += chunk;
  }
}

void Dram::Write(uint64_t address, std::span<const uint8_t> data) {
  CheckRange("DRAM", address, data.size(), capacity_);
  if (data.empty()) return;
  size_t done = 0;
  while (done < data.size()) {
    const uint64_t at = address + done;
    const uint64_t page = at / kPageBytes;
    const uint64_t in_page = at % kPageBytes;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kPageBytes - in_page,
                                                                data.size() - done));
    uint8_t* bytes = Page(page);
    if (bytes == nullptr) {  // a new page reads as before except where this write lands
      auto& created = pages_[page];
      created = std::make_unique_for_overwrite<uint8_t[]>(kPageBytes);
      bytes = created.get();
      if (mappings_.empty()) {
        std::memset(bytes, 0, in_page);
        std::memset(bytes + in_page + chunk, 0, kPageBytes - in_page - chunk);
      } else {
        ReadUnpaged(page * kPageBytes, std::span<uint8_t>(bytes, kPageBytes));
      }
      cache_.page = page;
      cache_.bytes = bytes;
    }
    std::memcpy(bytes + in_page, data.data() + done, chunk);
    done += chunk;
  }
  const uint64_t end = address + data.size();
  for (auto it = FirstMappingEndingAfter(address);
       it != mappings_.end() && it->first < end; ++it) {
    it->second.written = true;
  }
  NoteWritten(address, end);
}

void Dram::NoteWritten(uint64_t address, uint64_t end) {
  // Extend the last range when writes are sequential (the common case: one DMA row after the
  // other), so the list stays short without merging on every write.
  if (!written_.empty() && written_.back().first <= address && address <= written_.back().second) {
    written_.back().second = std::max(written_.back().second, end);
  } else {
    // Bound the list on scattered writes: merge when it is about to grow its storage, and leave
    // room for as many new ranges as survived, so merging costs amortized O(log n) per write.
    if (written_.size() >= 4096 && written_.size() == written_.capacity()) {
      auto merged = WrittenRanges();
      merged.reserve(std::max<size_t>(4096, 2 * merged.size()));
      written_ = std::move(merged);
    }
    written_.emplace_back(address, end);
  }
}

std::map<uint64_t, Dram::Mapping>::const_iterator Dram::FirstMappingEndingAfter(
    uint64_t address) const {
  auto it = mappings_.upper_bound(address);
  if (it != mappings_.begin()) {
    auto before = std::prev(it);
    if (before->second.end(before->first) > address) return before;
  }
  return it;
}

std::map<uint64_t, Dram::Mapping>::iterator Dram::FirstMappingEndingAfter(uint64_t address) {
  const auto found = std::as_const(*this).FirstMappingEndingAfter(address);
  return mappings_.erase(found, found);  // the same position, as a mutable iterator
}

void Dram::ReadUnpaged(uint64_t address, std::span<uint8_t> out) const {
  std::memset(out.data(), 0, out.size());
  const uint64_t end = address + out.size();
  for (auto it = FirstMappingEndingAfter(address); it != mappings_.end() && it->first < end;
       ++it) {
    const uint64_t from = std::max(it->first, address);
    const uint64_t to = std::min(it->second.end(it->first), end);
    std::memcpy(out.data() + (from - address), it->second.array.bytes().data() + (from - it->first),
                static_cast<size_t>(to - from));
  }
}

void Dram::MakePages(uint64_t begin, uint64_t end) {
  for (uint64_t page = begin / kPageBytes; page <= (end - 1) / kPageBytes; ++page) {
    auto& bytes = pages_[page];
    if (bytes != nullptr) continue;
    bytes = std::make_unique_for_overwrite<uint8_t[]>(kPageBytes);
    ReadUnpaged(page * kPageBytes, std::span<uint8_t>(bytes.get(), kPageBytes));
  }
  cache_.Clear();
}

void Dram::Map(uint64_t address, const hlo::Literal& array) {
  const std::span<const uint8_t> data = array.bytes();
  CheckRange("DRAM", address, data.size(), capacity_);
  if (data.empty()) return;
  const uint64_t end = address + data.size();
  // A mapping the range overlaps goes; what it reads as outside the range stays, as pages
  // (where a write already made one, the page holds it).
  for (auto it = FirstMappingEndingAfter(address); it != mappings_.end() && it->first < end;) {
    const uint64_t begin = it->first, old_end = it->second.end(begin);
    if (begin < address) MakePages(begin, address);
    if (old_end > end) MakePages(end, old_end);
    it = mappings_.erase(it);
  }
  // Pages inside the range go; one the range only partly covers takes the array's bytes.
  const uint64_t first_page = address / kPageBytes, last_page = (end - 1) / kPageBytes;
  for (auto page = pages_.lower_bound(first_page);
       page != pages_.end() && page->first <= last_page;) {
    const uint64_t page_begin = page->first * kPageBytes, page_end = page_begin + kPageBytes;
    if (page_begin >= address && page_end <= end) {
      page = pages_.erase(page);
      continue;
    }
    const uint64_t from = std::max(page_begin, address), to = std::min(page_end, end);
    std::memcpy(page->second.get() + (from - page_begin), data.data() + (from - address),
                static_cast<size_t>(to - from));
    ++page;
  }
  cache_.Clear();
  mappings_.emplace(address, Mapping{array});
  NoteWritten(address, end);
}

std::optional<hlo::Literal> Dram::MappedArray(uint64_t address, const hlo::Shape& shape) const {
  auto it = mappings_.find(address);
  if (it == mappings_.end() || it->second.written || !shape.IsArray()) return std::nullopt;
  const int64_t bytes = shape.ElementCount() * hlo::ByteSize(shape.type);
  if (bytes != static_cast<int64_t>(it->second.array.bytes().size())) return std::nullopt;
  hlo::Literal view = it->second.array;  // shares the bytes
  view.mutable_shape() = shape;
  return view;
}

uint8_t* Dram::Page(uint64_t page) const {
  if (page != cache_.page) {
    auto it = pages_.find(page);
    cache_.page = page;
    cache_.bytes = it == pages_.end() ? nullptr : it->second.get();
  }
  return cache_.bytes;
}

std::vector<std::pair<uint64_t, uint64_t>> Dram::WrittenRanges() const {
  std::vector<std::pair<uint64_t, uint64_t>> ranges = written_;
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& range : ranges) {
    if (!merged.empty() && range.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, range.second);
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------
// LocalMemory

void ZeroedBytes::Free::operator()(uint8_t* p) const { std::free(p); }

ZeroedBytes::ZeroedBytes(size_t size) : size_(size) {
  if (size == 0) return;
  data_.reset(static_cast<uint8_t*>(std::calloc(size, 1)));
  if (data_ == nullptr) throw std::bad_alloc();
}

LocalMemory::LocalMemory(std::string name, int64_t capacity_bytes, bool track_writes)
    : name_(std::move(name)) {
  if (capacity_bytes < 0 || capacity_bytes > static_cast<int64_t>(systolic::kAccumulatorBit)) {
    throw hlo::Error(name_ + " capacity " + std::to_string(capacity_bytes) +
                     " bytes is outside [0, " + std::to_string(systolic::kAccumulatorBit) + "]");
  }
  bytes_ = ZeroedBytes(static_cast<size_t>(capacity_bytes));
  if (track_writes) written_ = ZeroedBytes(static_cast<size_t>(capacity_bytes));
}

std::span<const uint8_t> LocalMemory::Read(uint64_t offset, uint64_t length) const {
  CheckRange(name_, offset, length, capacity());
  if (!written_.empty() && length > 0) {
    const void* first_unwritten = std::memchr(written_.data() + offset, 0, length);
    if (first_unwritten != nullptr) {
      const auto byte = static_cast<const uint8_t*>(first_unwritten) - written_.data();
      throw hlo::Error(name_ + " byte " + std::to_string(byte) + " is read before it was written");
    }
  }
  return {bytes_.data() + offset, static_cast<size_t>(length)};
}

std::span<uint8_t> LocalMemory::Write(uint64_t offset, uint64_t length) {
  CheckRange(name_, offset, length, capacity());
  if (!written_.empty() && length > 0) std::memset(written_.data() + offset, 1, length);
  return {bytes_.data() + offset, static_cast<size_t>(length)};
}

// ---------------------------------------------------------------------------------------------
// Memories

// Only the accumulators track writes: a read of never-written accumulators is a lowering bug
// (a matmul with acc=1 before any acc=0), while the UB is routinely read after partial DMA fills.
Memories::Memories(const systolic::ArchConfig& config)
    : dram(config.dram_bytes),
      ub("unified buffer", config.ub_bytes, /*track_writes=*/false),
      acc("accumulators", config.acc_bytes, /*track_writes=*/true) {}

LocalMemory& Memories::Local(uint64_t local_address) {
  return (local_address & systolic::kAccumulatorBit) != 0 ? acc : ub;
}

}  // namespace simulator

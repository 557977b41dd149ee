// ScratchpadAllocator and DramLayout (scratchpad.h).
#include "targets/systolic/lowering/scratchpad.h"

#include "hlo/diagnostic.h"

namespace systolic::lowering {

ScratchpadAllocator::ScratchpadAllocator(int64_t capacity, int64_t alignment)
    : capacity_(capacity), alignment_(alignment < 1 ? 1 : alignment) {}

std::optional<int64_t> ScratchpadAllocator::Allocate(int64_t bytes) {
  if (bytes < 0) return std::nullopt;
  int64_t size = AlignUp(bytes < 1 ? 1 : bytes, alignment_);
  int64_t candidate = 0;
  for (const auto& [offset, length] : live_) {
    if (offset - candidate >= size) break;
    candidate = AlignUp(offset + length, alignment_);
  }
  if (candidate > capacity_ || capacity_ - candidate < size) return std::nullopt;
  live_[candidate] = size;
  if (candidate + size > peak_) peak_ = candidate + size;
  return candidate;
}

void ScratchpadAllocator::Free(int64_t offset) {
  if (live_.erase(offset) == 0) throw hlo::Error("internal: freeing an unallocated buffer");
}

int64_t ScratchpadAllocator::live_bytes() const {
  int64_t total = 0;
  for (const auto& [offset, length] : live_) total += length;
  return total;
}

uint64_t DramLayout::Allocate(int64_t bytes, const std::string& what) {
  std::optional<int64_t> address = blocks_.Allocate(bytes);
  if (!address) {
    throw hlo::Error("the module needs more DRAM than dram.bytes = " + std::to_string(capacity_) +
                     " (at " + what + ", " + std::to_string(bytes) + " bytes with " +
                     std::to_string(blocks_.live_bytes()) + " bytes live)");
  }
  return static_cast<uint64_t>(*address);
}

}  // namespace systolic::lowering

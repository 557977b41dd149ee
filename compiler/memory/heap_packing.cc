// Best-fit heap simulation (see heap_packing.h).
#include "compiler/memory/heap_packing.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "hlo/diagnostic.h"

namespace compiler::memory {
namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  if (value > std::numeric_limits<int64_t>::max() - alignment) {
    throw hlo::Error("buffer of " + std::to_string(value) + " bytes is too large to place");
  }
  return (value + alignment - 1) / alignment * alignment;
}

// Free space below the heap top, kept both by offset (to coalesce) and by size (best fit).
class FreeList {
 public:
  int64_t Allocate(int64_t size) {
    auto fit = by_size_.lower_bound({size, std::numeric_limits<int64_t>::min()});
    if (fit != by_size_.end()) {
      const auto [hole_size, offset] = *fit;
      Erase(offset, hole_size);
      if (hole_size > size) Insert(offset + size, hole_size - size);
      return offset;
    }
    // Nothing fits: grow the heap, starting inside a free hole that ends at the top.
    int64_t offset = top_;
    if (!by_offset_.empty()) {
      auto last = std::prev(by_offset_.end());
      if (last->first + last->second == top_) {
        offset = last->first;
        Erase(last->first, last->second);
      }
    }
    top_ = offset + size;
    high_water_ = std::max(high_water_, top_);
    return offset;
  }

  void Release(int64_t offset, int64_t size) {
    // Coalesce with the neighbours on both sides.
    auto next = by_offset_.lower_bound(offset);
    if (next != by_offset_.end() && offset + size == next->first) {
      size += next->second;
      Erase(next->first, next->second);
    }
    auto after = by_offset_.lower_bound(offset);
    if (after != by_offset_.begin()) {
      auto previous = std::prev(after);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        size += previous->second;
        Erase(previous->first, previous->second);
      }
    }
    if (offset + size == top_) {
      top_ = offset;  // the top hole simply shrinks the heap
    } else {
      Insert(offset, size);
    }
  }

  int64_t top() const { return top_; }
  int64_t high_water() const { return high_water_; }

 private:
  void Insert(int64_t offset, int64_t size) {
    by_offset_.emplace(offset, size);
    by_size_.emplace(size, offset);
  }
  void Erase(int64_t offset, int64_t size) {
    by_offset_.erase(offset);
    by_size_.erase({size, offset});
  }

  std::map<int64_t, int64_t> by_offset_;        // offset -> size
  std::set<std::pair<int64_t, int64_t>> by_size_;  // (size, offset)
  int64_t top_ = 0;
  int64_t high_water_ = 0;
};

}  // namespace

HeapPacking PackBestFit(const std::vector<HeapBlock>& blocks, int64_t positions,
                        int64_t alignment) {
  if (alignment <= 0) alignment = 1;
  const size_t slots = static_cast<size_t>(std::max<int64_t>(positions, 0)) + 1;
  std::vector<std::vector<size_t>> born(slots), dying(slots);
  for (size_t b = 0; b < blocks.size(); ++b) {
    const HeapBlock& block = blocks[b];
    if (block.start < 0 || block.end < block.start || block.end > positions) {
      throw hlo::Error("internal: live range [" + std::to_string(block.start) + ", " +
                       std::to_string(block.end) + "] outside the schedule");
    }
    if (block.size == 0) continue;
    born[static_cast<size_t>(block.start)].push_back(b);
    dying[static_cast<size_t>(block.end)].push_back(b);
  }
  HeapPacking packing;
  packing.offsets.assign(blocks.size(), 0);
  packing.top_at_position.assign(slots, 0);
  std::vector<int64_t> aligned(blocks.size(), 0);
  FreeList heap;
  int64_t live = 0;
  for (size_t t = 0; t < slots; ++t) {
    if (t > 0) {
      for (size_t b : dying[t - 1]) {
        heap.Release(packing.offsets[b], aligned[b]);
        live -= aligned[b];
      }
    }
    // Largest first gives best fit its best chance; ties by block order (deterministic).
    std::vector<size_t>& now = born[t];
    std::stable_sort(now.begin(), now.end(),
                     [&](size_t a, size_t b) { return blocks[a].size > blocks[b].size; });
    for (size_t b : now) {
      aligned[b] = AlignUp(blocks[b].size, alignment);
      packing.offsets[b] = heap.Allocate(aligned[b]);
      live += aligned[b];
    }
    packing.max_live_bytes = std::max(packing.max_live_bytes, live);
    packing.top_at_position[t] = heap.top();
  }
  packing.size = heap.high_water();
  return packing;
}

}  // namespace compiler::memory

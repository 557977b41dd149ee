// Scratchpad allocation for one tile's buffers in the unified buffer or the accumulators, and the
// DRAM layout of a module's values.
//
// ScratchpadAllocator: first-fit over [0, capacity) with every block aligned; Allocate returns
// nullopt when no gap fits (the caller then picks a smaller tile or falls back to the host —
// never a crash); Free releases a block so later buffers reuse it (liveness within a tile).
// peak() is the highest end offset ever allocated: the tile's footprint.
//
// DramLayout: first-fit allocation of module values in DRAM, aligned to `alignment`, with Free
// so a value's bytes are reused once it is dead (the lowering frees after the last use);
// exceeding the configured DRAM is an hlo::Error naming the sizes. used() is the peak.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace systolic::lowering {

class ScratchpadAllocator {
 public:
  ScratchpadAllocator(int64_t capacity, int64_t alignment);
  std::optional<int64_t> Allocate(int64_t bytes);
  void Free(int64_t offset);  // offset must be a live block's
  int64_t peak() const { return peak_; }
  int64_t live_bytes() const;

 private:
  int64_t capacity_, alignment_, peak_ = 0;
  std::map<int64_t, int64_t> live_;  // offset -> size (rounded up to the alignment)
};

class DramLayout {
 public:
  DramLayout(int64_t capacity, int64_t alignment)
      : capacity_(capacity), alignment_(alignment), blocks_(capacity, alignment) {}
  // Throws hlo::Error when the module's values exceed DRAM; `what` names the value.
  uint64_t Allocate(int64_t bytes, const std::string& what);
  void Free(uint64_t address) { blocks_.Free(static_cast<int64_t>(address)); }
  int64_t used() const { return blocks_.peak(); }

 private:
  int64_t capacity_, alignment_;
  ScratchpadAllocator blocks_;
};

inline int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace systolic::lowering

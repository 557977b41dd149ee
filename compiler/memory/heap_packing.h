// Best-fit packing of live ranges into one allocation, by simulating a heap over time.
//
// Input: blocks with a size and an inclusive live range [start, end] of schedule positions.
// Output: an offset per block such that two blocks whose live ranges intersect never share a
// byte, and the allocation size (the highest offset + size ever in use).
//
// At each position the packer first releases the blocks that died at the previous position
// (coalescing neighbouring free space), then places the blocks born at this position, largest
// first, into the smallest free hole that fits (best fit); when none fits it grows the heap,
// reusing a free hole at the top if there is one. Offsets and sizes are multiples of
// `alignment`. O(blocks log blocks).
//
// Does NOT: look ahead (an offline optimal packing could be smaller), or split a block.
#pragma once

#include <cstdint>
#include <vector>

namespace compiler::memory {

struct HeapBlock {
  int64_t size = 0;   // bytes; 0-byte blocks get offset 0 and take no space
  int64_t start = 0;  // first schedule position it is live at
  int64_t end = 0;    // last schedule position it is live at (>= start)
};

struct HeapPacking {
  std::vector<int64_t> offsets;           // per block
  int64_t size = 0;                       // allocation size: the heap's high-water mark
  int64_t max_live_bytes = 0;             // largest sum of (aligned) live block sizes
  std::vector<int64_t> top_at_position;   // heap top after placing position t's blocks
};

// `positions` is the schedule length; every block must lie within [0, positions].
HeapPacking PackBestFit(const std::vector<HeapBlock>& blocks, int64_t positions,
                        int64_t alignment);

}  // namespace compiler::memory

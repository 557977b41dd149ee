// The blocked GEMM driver (see gemm_driver.h for the loop nest and its guarantees).
#include "targets/cpu/gemm_driver.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace cpu::gemm_detail {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// Below this many multiply-adds a GEMM runs on the calling thread: waking a worker costs
// tens of microseconds, about what 2 * 64^3 FMAs take.
constexpr double kParallelMinMacs = 1 << 19;

// B[pc:pc+kc, col0:col0+cols] into one NR-column panel dst[p * nr + j], zero-padded columns.
void PackBPanel(const float* b, int64_t ldb, bool trans_b, int64_t p0, int64_t depth,
                int64_t col0, int64_t cols, int nr, float* dst) {
  if (!trans_b) {
    for (int64_t p = 0; p < depth; ++p) {
      const float* src = b + (p0 + p) * ldb + col0;
      float* out = dst + p * nr;
      std::memcpy(out, src, sizeof(float) * cols);
      std::fill(out + cols, out + nr, 0.0f);
    }
    return;
  }
  // Transposed B (n x k): column j of the panel is a contiguous run of row col0 + j.
  if (cols < nr) std::fill(dst, dst + depth * nr, 0.0f);
  for (int64_t j = 0; j < cols; ++j) {
    const float* src = b + (col0 + j) * ldb + p0;
    for (int64_t p = 0; p < depth; ++p) dst[p * nr + j] = src[p];
  }
}

// Adds (or stores) the valid rows x cols corner of a scratch tile into C.
void StorePartialTile(const float* tile, int nr, int64_t rows, int64_t cols, float* c,
                      int64_t ldc, bool accumulate) {
  for (int64_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    const float* src = tile + i * nr;
    if (accumulate) {
      for (int64_t j = 0; j < cols; ++j) row[j] += src[j];
    } else {
      std::memcpy(row, src, sizeof(float) * cols);
    }
  }
}

}  // namespace

// dst[p * MR + i] = rows[i][p]: a transpose of MR rows. With MR a compile-time constant the
// loop over rows unrolls into MR loads feeding contiguous stores.
template <int MR>
void PackRowsTransposed(const float* const* rows, int64_t depth, float* dst) {
  for (int64_t p = 0; p < depth; ++p)
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) dst[p * MR + i] = rows[i][p];
}

void PackRowsTransposed(const float* const* rows, int64_t depth, int mr, float* dst) {
  switch (mr) {
    case 14: return PackRowsTransposed<14>(rows, depth, dst);
    case 12: return PackRowsTransposed<12>(rows, depth, dst);
    case 8: return PackRowsTransposed<8>(rows, depth, dst);
    case 6: {
      static const PackRowsFn vectorized = Avx512PackRows6();
      if (vectorized) return vectorized(rows, depth, dst);
      return PackRowsTransposed<6>(rows, depth, dst);
    }
    case 4: return PackRowsTransposed<4>(rows, depth, dst);
    default:
      for (int64_t p = 0; p < depth; ++p)
        for (int i = 0; i < mr; ++i) dst[p * mr + i] = rows[i][p];
  }
}

const float* ZeroRow() {
  alignas(64) static const float zeros[kKc] = {};
  return zeros;
}

void MatrixAPacker::Pack(int64_t row0, int64_t rows, int64_t p0, int64_t depth, int mr,
                         float* dst) const {
  for (int64_t panel_row = 0; panel_row < rows; panel_row += mr) {
    const int64_t panel_rows = std::min<int64_t>(mr, rows - panel_row);
    float* panel = dst + panel_row * depth;  // == (panel_row / mr) * depth * mr
    if (transposed_) {
      // A is k x m: the panel's row slice at depth p is contiguous.
      if (panel_rows < mr) std::fill(panel, panel + depth * mr, 0.0f);
      for (int64_t p = 0; p < depth; ++p) {
        const float* src = a_ + (p0 + p) * lda_ + row0 + panel_row;
        std::memcpy(panel + p * mr, src, sizeof(float) * panel_rows);
      }
    } else {
      const float* row_starts[kMaxMr];
      for (int i = 0; i < mr; ++i)
        row_starts[i] = i < panel_rows ? a_ + (row0 + panel_row + i) * lda_ + p0 : ZeroRow();
      PackRowsTransposed(row_starts, depth, mr, panel);
    }
  }
}

void RunGemm(const DriverArgs& args, ThreadPool* pool, const MicroKernel& kernel) {
  const int64_t m = args.m, n = args.n, k = args.k;
  if (m <= 0 || n <= 0) return;
  const int mr = kernel.mr, nr = kernel.nr;
  // In double: the product of three valid sizes may exceed int64.
  const double macs = static_cast<double>(m) * static_cast<double>(n) * std::max<double>(k, 1);
  if (pool && macs < kParallelMinMacs) pool = nullptr;
  const int64_t threads = pool ? pool->threads() : 1;

  // Row blocks: about kMc rows each, a multiple of `threads` of them when there are enough
  // micro-tiles, and the tiles dealt out evenly (block b gets tiles [T*b/B, T*(b+1)/B)) so that
  // both cores get the same work.
  const int64_t row_tiles = CeilDiv(m, mr);
  const int64_t row_blocks =
      std::min(RoundUp(CeilDiv(m, kMc), threads), std::max(CeilDiv(m, kMc), row_tiles));
  auto block_start_row = [&](int64_t b) { return std::min(m, (row_tiles * b / row_blocks) * mr); };
  const bool has_epilogue = args.epilogue && *args.epilogue;

  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    // Too few row blocks to occupy every thread (short, wide C): split the columns as well.
    int64_t col_parts = 1;
    if (row_blocks < threads) col_parts = std::min(CeilDiv(threads, row_blocks), CeilDiv(nc, nr));
    const int64_t part_width = RoundUp(CeilDiv(nc, col_parts), nr);
    col_parts = CeilDiv(nc, part_width);
    const int64_t tasks = row_blocks * col_parts;

    auto task_block = [&](int64_t task) {
      GemmBlock block;
      block.row = block_start_row(task / col_parts);
      block.rows = block_start_row(task / col_parts + 1) - block.row;
      block.col = jc + (task % col_parts) * part_width;
      block.cols = std::min(part_width, jc + nc - block.col);
      block.c = args.c + block.row * args.ldc + block.col;
      block.ldc = args.ldc;
      block.batch = args.batch_index;
      return block;
    };
    auto for_each_task = [&](const std::function<void(int64_t)>& run) {
      if (!pool) {
        for (int64_t t = 0; t < tasks; ++t) run(t);
        return;
      }
      pool->ParallelFor(tasks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) run(t);
      });
    };

    if (k == 0) {  // an empty sum: C = 0 (or unchanged), epilogues still apply
      for_each_task([&](int64_t task) {
        const GemmBlock block = task_block(task);
        if (!args.accumulate)
          for (int64_t i = 0; i < block.rows; ++i)
            std::fill(block.c + i * block.ldc, block.c + i * block.ldc + block.cols, 0.0f);
        if (has_epilogue) (*args.epilogue)(block);
      });
      continue;
    }

    const int64_t b_panels = CeilDiv(nc, nr);
    ScratchLease packed_b(ScratchSlot::kPackedB, std::min(kKc, k) * b_panels * nr);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      const bool first_k_block = pc == 0;
      const bool last_k_block = pc + kc == k;
      auto pack_b = [&](int64_t begin, int64_t end) {
        for (int64_t panel = begin; panel < end; ++panel) {
          const int64_t col0 = panel * nr;
          PackBPanel(args.b, args.ldb, args.trans_b, pc, kc, jc + col0,
                     std::min<int64_t>(nr, nc - col0), nr, packed_b.data() + panel * kc * nr);
        }
      };
      if (pool) {
        pool->ParallelFor(b_panels, 4, pack_b);
      } else {
        pack_b(0, b_panels);
      }

      for_each_task([&](int64_t task) {
        const GemmBlock block = task_block(task);
        ScratchLease packed_a(ScratchSlot::kPackedA, RoundUp(block.rows, mr) * kc);
        args.a->Pack(block.row, block.rows, pc, kc, mr, packed_a.data());
        const bool accumulate = args.accumulate || !first_k_block;
        alignas(64) float tile[kMaxMr * kMaxNr];
        for (int64_t jr = 0; jr < block.cols; jr += nr) {
          const int64_t cols = std::min<int64_t>(nr, block.cols - jr);
          const float* b_panel = packed_b.data() + ((block.col - jc + jr) / nr) * kc * nr;
          for (int64_t ir = 0; ir < block.rows; ir += mr) {
            const int64_t rows = std::min<int64_t>(mr, block.rows - ir);
            const float* a_panel = packed_a.data() + ir * kc;
            float* c = block.c + ir * args.ldc + jr;
            if (rows == mr && cols == nr) {
              kernel.fn(kc, a_panel, b_panel, c, args.ldc, accumulate);
            } else {
              kernel.fn(kc, a_panel, b_panel, tile, nr, false);
              StorePartialTile(tile, nr, rows, cols, c, args.ldc, accumulate);
            }
          }
        }
        if (last_k_block && has_epilogue) (*args.epilogue)(block);
      });
    }
  }
}

// ---- Thread-local scratch buffers -------------------------------------------------------------

struct ScratchLease::Slot {
  float* data = nullptr;
  size_t capacity = 0;
  bool in_use = false;
  ~Slot() { ::operator delete[](data, std::align_val_t{64}); }
};

namespace {
constexpr int kSlotCount = 3;

float* AllocateAligned(size_t floats) {
  return static_cast<float*>(::operator new[](sizeof(float) * floats, std::align_val_t{64}));
}
}  // namespace

ScratchLease::ScratchLease(ScratchSlot which, size_t floats) {
  floats = std::max<size_t>(floats, 1);
  static thread_local Slot slots[kSlotCount];
  Slot& slot = slots[static_cast<int>(which)];
  if (slot.in_use) {
    owned_ = AllocateAligned(floats);
    data_ = owned_;
    return;
  }
  if (slot.capacity < floats) {
    ::operator delete[](slot.data, std::align_val_t{64});
    slot.data = nullptr;
    slot.capacity = 0;
    slot.data = AllocateAligned(floats);
    slot.capacity = floats;
  }
  slot.in_use = true;
  slot_ = &slot;
  data_ = slot.data;
}

ScratchLease::~ScratchLease() {
  if (slot_) slot_->in_use = false;
  if (owned_) ::operator delete[](owned_, std::align_val_t{64});
}

}  // namespace cpu::gemm_detail

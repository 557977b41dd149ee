// GemmTransposedRows (see gemm_rows.h): column chunks of C in parallel; within a chunk, each row
// of B is widened 16 elements at a time and multiplied into the m rows' 16-lane accumulators.
#include "targets/cpu/gemm_rows.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

#include "targets/cpu/vector_clones.h"

namespace cpu {
namespace {

constexpr int kLanes = 16;
// Rows of B per chunk: enough work per pool task, small enough to balance two threads.
constexpr int64_t kChunkRows = 256;
constexpr double kParallelMinMacs = 1 << 19;

float Widen(float v) { return v; }
float Widen(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

// C[i][j] for i < M and j in [first, last): dot products of A's rows with B's rows.
template <int M, typename B>
RETARGET_VECTOR_CLONES void RowsTimesColumns(const float* __restrict a, int64_t lda,
                                             const B* __restrict b, int64_t k, float* c,
                                             int64_t ldc, int64_t first, int64_t last) {
  for (int64_t j = first; j < last; ++j) {
    const B* __restrict row = b + j * k;
    float acc[M][kLanes] = {};
    int64_t p = 0;
    for (; p + kLanes <= k; p += kLanes) {
      float wide[kLanes];
      for (int l = 0; l < kLanes; ++l) wide[l] = Widen(row[p + l]);
      for (int i = 0; i < M; ++i)
        for (int l = 0; l < kLanes; ++l) acc[i][l] += a[i * lda + p + l] * wide[l];
    }
    for (; p < k; ++p) {  // the tail joins lane 0..: the same lanes, a partial round
      const float wide = Widen(row[p]);
      for (int i = 0; i < M; ++i) acc[i][p % kLanes] += a[i * lda + p] * wide;
    }
    for (int i = 0; i < M; ++i) {
      for (int width = kLanes / 2; width > 0; width /= 2)
        for (int l = 0; l < width; ++l) acc[i][l] += acc[i][l + width];
      c[i * ldc + j] = acc[i][0];
    }
  }
}

template <typename B, size_t... M>
void RunRows(const TransposedRowsArgs& args, const B* b, int64_t first, int64_t last,
             std::index_sequence<M...>) {
  using Rows = void (*)(const float*, int64_t, const B*, int64_t, float*, int64_t, int64_t,
                        int64_t);
  static constexpr Rows kByM[] = {&RowsTimesColumns<static_cast<int>(M) + 1, B>...};
  kByM[args.m - 1](args.a, args.lda, b, args.k, args.c, args.ldc, first, last);
}

}  // namespace

void GemmTransposedRows(const TransposedRowsArgs& args, ThreadPool* pool) {
  if (args.m <= 0 || args.n <= 0) return;
  if (args.m > kTransposedRowsMaxM) throw std::invalid_argument("GemmTransposedRows: m > 16");
  const double macs = static_cast<double>(args.m) * static_cast<double>(args.n) *
                      static_cast<double>(std::max<int64_t>(args.k, 1));
  if (pool && macs < kParallelMinMacs) pool = nullptr;
  const int64_t chunks = (args.n + kChunkRows - 1) / kChunkRows;
  auto run_chunks = [&](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      const int64_t first = chunk * kChunkRows;
      const int64_t last = std::min(args.n, first + kChunkRows);
      constexpr auto kRowCounts = std::make_index_sequence<kTransposedRowsMaxM>();
      if (args.b_bf16) {
        RunRows(args, static_cast<const uint16_t*>(args.b), first, last, kRowCounts);
      } else {
        RunRows(args, static_cast<const float*>(args.b), first, last, kRowCounts);
      }
      if (args.epilogue) {
        GemmBlock block;
        block.col = first;
        block.rows = args.m;
        block.cols = last - first;
        block.c = args.c + first;
        block.ldc = args.ldc;
        args.epilogue(block);
      }
    }
  };
  if (pool) {
    pool->ParallelFor(chunks, 1, run_chunks);
  } else {
    run_chunks(0, chunks);
  }
}

}  // namespace cpu

// The blocked GEMM driver shared by Sgemm and Conv2D (Goto/BLIS loop nest):
//
//   for jc in n step NC:                      B block kc x nc  (packed once, shared by threads)
//     for pc in k step KC:
//       pack B[pc:pc+kc, jc:jc+nc] into NR-column panels          (ParallelFor over panels)
//       ParallelFor over tasks = row blocks (mc) x column parts:
//         pack A[ic:ic+mc, pc:pc+kc] into MR-row panels          (thread-local buffer)
//         for jr in part step NR:  for ir in mc step MR:  micro-kernel (gemm_kernels.h)
//         after the last pc: epilogue(task's block of C)
//
// A is abstract (APacker) so that convolution can pack tiles of an implicit im2col matrix
// straight into the A panels. B is always an explicit strided matrix.
//
// Guarantees: each task's block of C is finished (all k-blocks summed) before its epilogue runs,
// on the thread that ran the last k-block; tasks are disjoint and cover C; k == 0 writes zeros
// (or leaves C when accumulating) and still runs the epilogues. Memory: thread-local packing
// buffers of at most MC x KC and KC x NC floats, reused across calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "targets/cpu/gemm.h"
#include "targets/cpu/gemm_kernels.h"

namespace cpu::gemm_detail {

// Packs rows [row0, row0 + rows) x depth [p0, p0 + depth) of an m x k matrix A into
// ceil(rows / mr) panels laid out as dst[panel * depth * mr + p * mr + i]; the rows of the last
// panel beyond `rows` are zero. Called concurrently from several threads (must be const-safe).
class APacker {
 public:
  virtual ~APacker() = default;
  virtual void Pack(int64_t row0, int64_t rows, int64_t p0, int64_t depth, int mr,
                    float* dst) const = 0;
};

// A as an explicit row-major matrix (m x k, or k x m when transposed) with leading dimension lda.
class MatrixAPacker final : public APacker {
 public:
  MatrixAPacker(const float* a, int64_t lda, bool transposed)
      : a_(a), lda_(lda), transposed_(transposed) {}
  void Pack(int64_t row0, int64_t rows, int64_t p0, int64_t depth, int mr,
            float* dst) const override;

 private:
  const float* a_;
  int64_t lda_;
  bool transposed_;
};

struct DriverArgs {
  int64_t m = 0, n = 0, k = 0;
  const APacker* a = nullptr;
  const float* b = nullptr;  // k x n (or n x k if trans_b), leading dimension ldb
  int64_t ldb = 0;
  bool trans_b = false;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
  const GemmEpilogue* epilogue = nullptr;  // may be null or empty
  int64_t batch_index = 0;                 // copied into every GemmBlock
};

// Cache blocking (floats). A KC x NR micro-panel of B (128 KiB at NR = 64) and the MC x KC
// block of A (~690 KiB) share the 2 MiB L2; the KC x NC block of B (8 MiB) sits in L3. KC = 512
// measured ~3% faster than 256 at 1024^3 (C tiles are loaded and stored half as often).
constexpr int64_t kKc = 512;
constexpr int64_t kMc = 336;
constexpr int64_t kNc = 4096;

void RunGemm(const DriverArgs& args, ThreadPool* pool, const MicroKernel& kernel);

// Packing helpers for APacker implementations. PackRowsTransposed writes one A panel,
// dst[p * mr + i] = rows[i][p] for p < depth, i < mr; ZeroRow() is kKc zeros to point at for
// padding (depth never exceeds kKc).
void PackRowsTransposed(const float* const* rows, int64_t depth, int mr, float* dst);
const float* ZeroRow();

// A 64-byte aligned scratch buffer reused by this thread across calls. A second, nested use on
// the same thread (an epilogue that itself runs a GEMM) gets a private allocation instead of
// clobbering the outer one.
enum class ScratchSlot { kPackedA, kPackedB, kConvTile };
class ScratchLease {
 public:
  ScratchLease(ScratchSlot slot, size_t floats);
  ~ScratchLease();
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  float* data() const { return data_; }

 private:
  struct Slot;
  Slot* slot_ = nullptr;  // the thread-local slot, when leased from it
  float* data_ = nullptr;
  float* owned_ = nullptr;  // private allocation for nested use
};

}  // namespace cpu::gemm_detail

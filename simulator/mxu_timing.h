// The matrix unit's timing model: how many cycles an R x C systolic array takes for a GEMM (or a
// convolution mapped to a GEMM), per dataflow, at fold granularity.
//
// Guarantees:
//   - One formula for the per-fold latency (FoldCycles), shared by the SCALE-Sim compatibility
//     mode (folds run back to back, stall-free memory: `folds overlapped: no`) and the SystemC
//     simulator's matrix unit (TimeInstructionPipelined, through unit_timing.cc), which
//     schedules the same folds against DMA and SRAM.
//   - In compat mode the numbers equal SCALE-Sim v2's compute model exactly (integers exactly;
//     the utilisation ratios bit for bit, by summing in SCALE-Sim's order): see docs/scalesim.md.
//   - Bad shapes (non-positive or overflowing dimensions) throw hlo::Error; nothing aborts.
//
// The mapping (SCALE-Sim, Samajdar et al., ISPASS 2020): a GEMM of M x K by K x N becomes an
// Sr x Sc grid of work that streams T operands through the array:
//   output stationary  (os): Sr = M, Sc = N, T = K   tau = T + R + C - 2
//   weight stationary  (ws): Sr = K, Sc = N, T = M   tau = 2R + C + T - 2
//   input stationary   (is): Sr = K, Sc = M, T = N   tau = 2R + C + T - 2
// folds = ceil(Sr / R) * ceil(Sc / C); back to back the layer takes folds * tau - 1 cycles
// (SCALE-Sim reports the index of the last busy cycle, counting from 0).
#pragma once

#include <cstdint>

#include "simulator/isa/isa.h"

namespace simulator {

// A GEMM: (M x K) * (K x N). For a convolution M is the number of output pixels per filter, N the
// number of filters and K the window size (filter height * width * channels).
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
};

// A convolution as SCALE-Sim describes it: no padding (inputs are pre-padded), one stride per axis.
struct ConvShape {
  int64_t ifmap_height = 0;
  int64_t ifmap_width = 0;
  int64_t filter_height = 0;
  int64_t filter_width = 0;
  int64_t channels = 0;
  int64_t num_filters = 0;
  int64_t stride_height = 1;
  int64_t stride_width = 1;
};

// The im2col view of a convolution: M = output pixels per filter, N = filters, K = window.
// Output size per axis is ceil((in - filter + stride) / stride) as in SCALE-Sim. Throws
// hlo::Error when a dimension is not positive or the filter is larger than the input.
GemmShape ConvAsGemm(const ConvShape& conv);

struct ArrayShape {
  int64_t rows = 0;  // R: ArrayHeight
  int64_t cols = 0;  // C: ArrayWidth
  systolic::Dataflow dataflow = systolic::Dataflow::kOs;
};

// How a GEMM's work lies on the array for one dataflow (see the table above).
struct FoldMapping {
  int64_t spatial_rows = 0;  // Sr: mapped onto the array's R rows
  int64_t spatial_cols = 0;  // Sc: mapped onto the array's C columns
  int64_t temporal = 0;      // T: operands streamed through per fold
};
FoldMapping MapGemm(const GemmShape& gemm, systolic::Dataflow dataflow);

// tau: cycles one fold occupies the array, fill and drain included, when folds do not overlap.
int64_t FoldCycles(const ArrayShape& array, int64_t temporal);

struct MxuTiming {
  FoldMapping mapping;
  int64_t row_folds = 0;        // ceil(Sr / R)
  int64_t col_folds = 0;        // ceil(Sc / C)
  int64_t folds = 0;            // row_folds * col_folds
  int64_t cycles_per_fold = 0;  // tau
  int64_t total_cycles = 0;     // folds * tau - 1 (compat: folds back to back)
  int64_t stall_cycles = 0;     // 0: stall-free memory (SCALE-Sim's CALC mode)
  int64_t macs = 0;             // M * N * K
  bool folds_overlapped = false;  // compat mode: no; the simulator's normal mode overlaps them
  // Percentages as SCALE-Sim defines and computes them (same operations in the same order, so
  // they print identically):
  //   mapping efficiency = 100 * mean over folds of (PEs mapped / (R*C))
  //   compute utilization = 100 * mean over folds of (PEs mapped * T / (R*C * fold span)), where
  //     the fold span is tau for os and 2R + 2C + T - 3 for ws/is (SCALE-Sim measures the length
  //     of its filter/ifmap demand matrix plus skew there, one more C - 1 than tau)
  //   overall utilization = macs * 100 / (total_cycles * R * C)
  double mapping_efficiency_percent = 0;
  double compute_utilization_percent = 0;
  double overall_utilization_percent = 0;
};

// Times a GEMM in SCALE-Sim compatible mode (folds back to back, no stalls). Throws hlo::Error
// on a non-positive dimension or array size, or when a count would overflow 64 bits.
MxuTiming TimeGemm(const ArrayShape& array, const GemmShape& gemm);

// ---- The simulator's normal mode: the folds of ONE instruction, pipelined ----
// An mxu.matmul / mxu.conv is a GEMM whose weight tile fits the array (k <= R, n <= C), so it
// folds only along m (os: Sr = M over R rows, is: Sc = M over C columns; ws: one fold). The
// processing-element model (pe_reference.h) shows what a real array does with consecutive folds:
// the next fold's operands enter while the previous one drains, so only the LAST fold pays the
// skewed fill and drain. Conventions (shared with pe_reference.h): cycle 0 is the first cycle in
// which the instruction moves an operand into the array; the count ends with the cycle in which
// the last output leaves it. S(r, c, T) = FoldCycles({r, c, os}, T) = T + r + c - 2 is the
// skewed-stream latency of one fold using r rows and c columns.
//   ws: weights preloaded by mxu.ldw (WeightLoadCycles)   total = S(R, n, m)
//   os: interval II = max(k, R)                            total = (F-1) II + S(m_last, n, k)
//   is: fill k, interval II = max(n, C + k - 1)            total = k + (F-1) II + S(R, m_last, n)
// (F folds, m_last rows in the last one; R appears whole in ws/is because partial sums flow down
// every row of the array, while os results leave each PE on its column's output bus.)
struct PipelinedMxuTiming {
  FoldMapping mapping;
  int64_t folds = 0;
  int64_t stationary_fill = 0;      // cycles before the first fold streams (is: k)
  int64_t initiation_interval = 0;  // cycles between the starts of consecutive folds
  int64_t last_fold_cycles = 0;     // S(...) of the last fold
  int64_t total_cycles = 0;
  int64_t macs = 0;
  // Back-to-back instructions (docs/isa.md "Matrix-unit timing"). ws: the next instruction's
  // activations may enter once this one's m rows have entered (issue_interval = m), and its
  // weight buffer may be reloaded once its last row has passed row 0's last used column
  // (weights_hold = m + n - 2: tile row r is rewritten at L + r, behind the skewed wave).
  // os / is: no overlap between instructions, both equal total_cycles.
  int64_t issue_interval = 0;
  int64_t weights_hold = 0;
};
// Throws hlo::Error on a non-positive dimension or a weight tile larger than the array.
PipelinedMxuTiming TimeInstructionPipelined(const ArrayShape& array, const GemmShape& gemm);
// mxu.ldw: one tile row per cycle from the unified buffer into a weight buffer (k cycles).
int64_t WeightLoadCycles(const ArrayShape& array, int64_t k);

}  // namespace simulator

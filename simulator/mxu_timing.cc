// The matrix-unit timing model (mxu_timing.h). The fold loops below visit folds in SCALE-Sim's
// order (column folds outer, row folds inner) because the utilisation means are float sums whose
// last bits depend on the order.
#include "simulator/mxu_timing.h"

#include <algorithm>
#include <string>

#include "hlo/diagnostic.h"

namespace simulator {
namespace {

int64_t CheckedMul(int64_t a, int64_t b, const char* what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw hlo::Error(std::string("matrix unit: ") + what + " overflows 64 bits");
  }
  return product;
}

int64_t CheckedAdd(int64_t a, int64_t b, const char* what) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw hlo::Error(std::string("matrix unit: ") + what + " overflows 64 bits");
  }
  return sum;
}

void RequirePositive(int64_t value, const char* what) {
  if (value <= 0) {
    throw hlo::Error(std::string("matrix unit: ") + what + " must be positive, got " +
                     std::to_string(value));
  }
}

// Beyond this many folds the utilisation means are computed in closed form (see TimeGemm).
constexpr int64_t kMaxFoldsSummedOneByOne = int64_t{1} << 26;

int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Output pixels along one axis: ceil((in - filter + stride) / stride), SCALE-Sim's formula.
int64_t OutputExtent(int64_t in, int64_t filter, int64_t stride, const char* axis) {
  if (filter > in) {
    throw hlo::Error(std::string("convolution: filter ") + axis + " (" + std::to_string(filter) +
                     ") is larger than the input (" + std::to_string(in) + ")");
  }
  return CeilDiv(CheckedAdd(in - filter, stride, "output size"), stride);
}

// The span SCALE-Sim divides by for a fold's compute utilisation (see MxuTiming).
int64_t UtilizationSpan(const ArrayShape& array, int64_t temporal) {
  switch (array.dataflow) {
    case systolic::Dataflow::kOs:
      return FoldCycles(array, temporal);
    case systolic::Dataflow::kWs:
    case systolic::Dataflow::kIs:
      return 2 * array.rows + 2 * array.cols + temporal - 3;
  }
  return FoldCycles(array, temporal);
}

}  // namespace

GemmShape ConvAsGemm(const ConvShape& conv) {
  RequirePositive(conv.ifmap_height, "IFMAP height");
  RequirePositive(conv.ifmap_width, "IFMAP width");
  RequirePositive(conv.filter_height, "filter height");
  RequirePositive(conv.filter_width, "filter width");
  RequirePositive(conv.channels, "channels");
  RequirePositive(conv.num_filters, "number of filters");
  RequirePositive(conv.stride_height, "stride");
  RequirePositive(conv.stride_width, "stride");
  GemmShape gemm;
  gemm.m = CheckedMul(OutputExtent(conv.ifmap_height, conv.filter_height, conv.stride_height,
                                   "height"),
                      OutputExtent(conv.ifmap_width, conv.filter_width, conv.stride_width, "width"),
                      "output pixels");
  gemm.n = conv.num_filters;
  gemm.k = CheckedMul(CheckedMul(conv.filter_height, conv.filter_width, "window size"),
                      conv.channels, "window size");
  return gemm;
}

FoldMapping MapGemm(const GemmShape& gemm, systolic::Dataflow dataflow) {
  switch (dataflow) {
    case systolic::Dataflow::kOs:  // outputs stay in the PEs; the K-long dot products stream
      return {gemm.m, gemm.n, gemm.k};
    case systolic::Dataflow::kWs:  // a K x N weight tile stays; the M input rows stream
      return {gemm.k, gemm.n, gemm.m};
    case systolic::Dataflow::kIs:  // a K x M input tile stays; the N filters stream
      return {gemm.k, gemm.m, gemm.n};
  }
  throw hlo::Error("matrix unit: unknown dataflow");
}

int64_t FoldCycles(const ArrayShape& array, int64_t temporal) {
  switch (array.dataflow) {
    case systolic::Dataflow::kOs:
      // T operands stream in, skewed over R + C - 1 diagonals; the last output leaves one
      // cycle later than the last operand enters: T + R + C - 2.
      return temporal + array.rows + array.cols - 2;
    case systolic::Dataflow::kWs:
    case systolic::Dataflow::kIs:
      // R cycles to shift the stationary tile in, then the same skewed streaming as os:
      // R + (T + R + C - 2) = 2R + C + T - 2.
      return 2 * array.rows + array.cols + temporal - 2;
  }
  throw hlo::Error("matrix unit: unknown dataflow");
}

MxuTiming TimeGemm(const ArrayShape& array, const GemmShape& gemm) {
  RequirePositive(array.rows, "array height");
  RequirePositive(array.cols, "array width");
  RequirePositive(gemm.m, "M");
  RequirePositive(gemm.n, "N");
  RequirePositive(gemm.k, "K");
  // Bound every later sum: tau adds at most 2R + 2C + T, each well under 2^62 here.
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  if (array.rows > kMaxDim || array.cols > kMaxDim || gemm.m > kMaxDim || gemm.n > kMaxDim ||
      gemm.k > kMaxDim) {
    throw hlo::Error("matrix unit: a dimension exceeds 2^40");
  }

  MxuTiming timing;
  timing.mapping = MapGemm(gemm, array.dataflow);
  const FoldMapping& map = timing.mapping;
  timing.row_folds = CeilDiv(map.spatial_rows, array.rows);
  timing.col_folds = CeilDiv(map.spatial_cols, array.cols);
  timing.folds = CheckedMul(timing.row_folds, timing.col_folds, "fold count");
  timing.cycles_per_fold = FoldCycles(array, map.temporal);
  timing.total_cycles =
      CheckedAdd(CheckedMul(timing.folds, timing.cycles_per_fold, "total cycles"), -1,
                 "total cycles");
  timing.stall_cycles = 0;
  timing.macs = CheckedMul(CheckedMul(gemm.m, gemm.n, "MAC count"), gemm.k, "MAC count");
  timing.folds_overlapped = false;

  // Means over folds, summed in SCALE-Sim's order. Only the partial folds at the right and bottom
  // edges differ, but the sum is taken fold by fold so the rounding matches.
  const int64_t array_pes = CheckedMul(array.rows, array.cols, "array size");
  const int64_t span = UtilizationSpan(array, map.temporal);
  const double span_pes = static_cast<double>(CheckedMul(array_pes, span, "fold span"));
  double mapping_sum = 0;
  double compute_sum = 0;
  if (timing.folds > kMaxFoldsSummedOneByOne) {
    // Too many folds to visit (bad or absurd input must not hang): the same means in closed form,
    // sum over folds of PEs used = Sr * Sc. May differ from SCALE-Sim in the last bits only.
    const double work = static_cast<double>(map.spatial_rows) *
                        static_cast<double>(map.spatial_cols);
    mapping_sum = work / static_cast<double>(array_pes);
    compute_sum = work * static_cast<double>(map.temporal) / span_pes;
  } else {
    for (int64_t fc = 0; fc < timing.col_folds; ++fc) {
      const int64_t cols_used = std::min(array.cols, map.spatial_cols - fc * array.cols);
      for (int64_t fr = 0; fr < timing.row_folds; ++fr) {
        const int64_t rows_used = std::min(array.rows, map.spatial_rows - fr * array.rows);
        const int64_t pes_used = rows_used * cols_used;
        mapping_sum += static_cast<double>(pes_used) / static_cast<double>(array_pes);
        compute_sum += static_cast<double>(CheckedMul(pes_used, map.temporal, "fold MACs")) /
                       span_pes;
      }
    }
  }
  const double folds = static_cast<double>(timing.folds);
  timing.mapping_efficiency_percent = mapping_sum / folds * 100;
  timing.compute_utilization_percent = compute_sum / folds * 100;
  // SCALE-Sim: (num_compute * 100) / (total_cycles * num_mac_unit), integer operands divided once.
  const int64_t busy_pe_cycles = CheckedMul(std::max<int64_t>(timing.total_cycles, 1), array_pes,
                                            "PE cycles");
  timing.overall_utilization_percent =
      static_cast<double>(CheckedMul(timing.macs, 100, "MAC count")) /
      static_cast<double>(busy_pe_cycles);
  return timing;
}

int64_t WeightLoadCycles(const ArrayShape& array, int64_t k) {
  RequirePositive(k, "weight tile rows k");
  if (k > array.rows) {
    throw hlo::Error("matrix unit: weight tile rows k=" + std::to_string(k) +
                     " exceed the array's " + std::to_string(array.rows) + " rows");
  }
  return k;
}

PipelinedMxuTiming TimeInstructionPipelined(const ArrayShape& array, const GemmShape& gemm) {
  RequirePositive(array.rows, "array height");
  RequirePositive(array.cols, "array width");
  RequirePositive(gemm.m, "M");
  RequirePositive(gemm.n, "N");
  WeightLoadCycles(array, gemm.k);  // checks 0 < k <= R
  if (gemm.n > array.cols) {
    throw hlo::Error("matrix unit: weight tile columns n=" + std::to_string(gemm.n) +
                     " exceed the array's " + std::to_string(array.cols) + " columns");
  }
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  if (array.rows > kMaxDim || array.cols > kMaxDim || gemm.m > kMaxDim) {
    throw hlo::Error("matrix unit: a dimension exceeds 2^40");
  }
  PipelinedMxuTiming timing;
  timing.mapping = MapGemm(gemm, array.dataflow);
  timing.macs = CheckedMul(CheckedMul(gemm.m, gemm.n, "MAC count"), gemm.k, "MAC count");
  const FoldMapping& map = timing.mapping;
  // S(r, c, T): FoldCycles' os latency is exactly the skewed stream through r x c PEs.
  auto stream = [&](int64_t rows_used, int64_t cols_used) {
    return FoldCycles(ArrayShape{rows_used, cols_used, systolic::Dataflow::kOs}, map.temporal);
  };
  int64_t last = 0;  // the extent of the folded dimension in the last fold
  switch (array.dataflow) {
    case systolic::Dataflow::kWs:  // Sr = k <= R, Sc = n <= C: one fold
      timing.folds = 1;
      timing.last_fold_cycles = stream(array.rows, map.spatial_cols);
      break;
    case systolic::Dataflow::kOs:  // Sr = m folds over R; results leave on column buses
      timing.folds = CeilDiv(map.spatial_rows, array.rows);
      last = map.spatial_rows - (timing.folds - 1) * array.rows;
      timing.initiation_interval = std::max(map.temporal, array.rows);
      timing.last_fold_cycles = stream(last, map.spatial_cols);
      break;
    case systolic::Dataflow::kIs:  // Sc = m folds over C; the next tile loads behind the switch
      timing.folds = CeilDiv(map.spatial_cols, array.cols);
      last = map.spatial_cols - (timing.folds - 1) * array.cols;
      timing.stationary_fill = map.spatial_rows;
      // The next tile's k rows are written from the cycle its predecessor's swap-in wave leaves
      // row 0 (C - 1 cycles after that fold starts streaming).
      timing.initiation_interval = std::max(map.temporal, array.cols + map.spatial_rows - 1);
      timing.last_fold_cycles = stream(array.rows, last);
      break;
  }
  timing.total_cycles = CheckedAdd(
      CheckedAdd(timing.stationary_fill,
                 CheckedMul(timing.folds - 1, timing.initiation_interval, "total cycles"),
                 "total cycles"),
      timing.last_fold_cycles, "total cycles");
  timing.issue_interval = timing.weights_hold = timing.total_cycles;
  if (array.dataflow == systolic::Dataflow::kWs) {
    timing.issue_interval = gemm.m;
    timing.weights_hold = gemm.m + gemm.n - 2;
  }
  return timing;
}

}  // namespace simulator

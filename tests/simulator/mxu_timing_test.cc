// The matrix-unit timing model against hand-computed fold and cycle counts. Every expected value
// is worked out in the comment next to it from SCALE-Sim's definitions (docs/scalesim.md):
//   os: Sr=M Sc=N T=K, tau = T+R+C-2;  ws: Sr=K Sc=N T=M;  is: Sr=K Sc=M T=N, tau = 2R+C+T-2
//   total = ceil(Sr/R)*ceil(Sc/C)*tau - 1
// The utilisation figures were also checked against SCALE-Sim 3.0.0 on the same shapes.
#include "simulator/mxu_timing.h"

#include <gtest/gtest.h>

#include "hlo/diagnostic.h"

namespace simulator {
namespace {

using systolic::Dataflow;

// A 4-row, 3-column array: R != C catches swapped roles.
ArrayShape Array43(Dataflow dataflow) { return ArrayShape{4, 3, dataflow}; }

TEST(MxuTiming, OutputStationarySingleFold) {
  // M=4 N=3 K=5: Sr=4 Sc=3 -> 1 fold; tau = 5+4+3-2 = 10; total = 10-1 = 9.
  MxuTiming t = TimeGemm(Array43(Dataflow::kOs), {4, 3, 5});
  EXPECT_EQ(t.folds, 1);
  EXPECT_EQ(t.cycles_per_fold, 10);
  EXPECT_EQ(t.total_cycles, 9);
  EXPECT_EQ(t.stall_cycles, 0);
  EXPECT_FALSE(t.folds_overlapped);
  EXPECT_EQ(t.macs, 60);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency_percent, 100.0);  // all 12 PEs mapped
  EXPECT_DOUBLE_EQ(t.compute_utilization_percent, 50.0);  // 12*5 / (12*10)
  EXPECT_DOUBLE_EQ(t.overall_utilization_percent, 6000.0 / 108.0);  // 60*100 / (9*12)
}

TEST(MxuTiming, OutputStationaryPartialFolds) {
  // M=5 N=7 K=2: row folds ceil(5/4)=2, col folds ceil(7/3)=3 -> 6; tau = 2+4+3-2 = 7;
  // total = 6*7-1 = 41. PEs used per fold: rows {4,1} x cols {3,3,1}, sum 5*7 = 35 of 6*12.
  MxuTiming t = TimeGemm(Array43(Dataflow::kOs), {5, 7, 2});
  EXPECT_EQ(t.row_folds, 2);
  EXPECT_EQ(t.col_folds, 3);
  EXPECT_EQ(t.total_cycles, 41);
  EXPECT_NEAR(t.mapping_efficiency_percent, 100.0 * 35 / 72, 1e-12);
  EXPECT_NEAR(t.compute_utilization_percent, 100.0 * 35 * 2 / (72 * 7), 1e-12);
}

TEST(MxuTiming, WeightStationary) {
  // M=4 N=3 K=5: Sr=K=5 -> 2 row folds, Sc=N=3 -> 1; tau = 2*4+3+4-2 = 13; total = 2*13-1 = 25.
  MxuTiming t = TimeGemm(Array43(Dataflow::kWs), {4, 3, 5});
  EXPECT_EQ(t.mapping.spatial_rows, 5);
  EXPECT_EQ(t.mapping.temporal, 4);
  EXPECT_EQ(t.folds, 2);
  EXPECT_EQ(t.cycles_per_fold, 13);
  EXPECT_EQ(t.total_cycles, 25);
  // PEs used {12, 3}: (1 + 0.25)/2 = 62.5 %. Compute span 2R+2C+T-3 = 15:
  // (12*4 + 3*4) / (12*15) / 2 = 60/360.
  EXPECT_DOUBLE_EQ(t.mapping_efficiency_percent, 62.5);
  EXPECT_NEAR(t.compute_utilization_percent, 100.0 / 6, 1e-12);
  // M=9 N=2 K=11: Sr=11 -> 3 folds, tau = 8+3+9-2 = 18, total 53.
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kWs), {9, 2, 11}).total_cycles, 53);
}

TEST(MxuTiming, InputStationary) {
  // M=4 N=3 K=5: Sr=K=5 -> 2, Sc=M=4 -> 2, 4 folds; T=N=3, tau = 8+3+3-2 = 12; total 47.
  MxuTiming t = TimeGemm(Array43(Dataflow::kIs), {4, 3, 5});
  EXPECT_EQ(t.folds, 4);
  EXPECT_EQ(t.cycles_per_fold, 12);
  EXPECT_EQ(t.total_cycles, 47);
  // PEs used rows {4,1} x cols {3,1} = 20 of 4*12.
  EXPECT_NEAR(t.mapping_efficiency_percent, 100.0 * 20 / 48, 1e-12);
  // M=9 N=2 K=11: Sr=11 -> 3, Sc=9 -> 3, 9 folds; tau = 8+3+2-2 = 11; total 98.
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kIs), {9, 2, 11}).total_cycles, 98);
}

TEST(MxuTiming, OneByOneGemmOnEveryDataflow) {
  // 1x1x1: os tau = 1+4+3-2 = 6 -> 5; ws/is tau = 8+3+1-2 = 10 -> 9.
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kOs), {1, 1, 1}).total_cycles, 5);
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kWs), {1, 1, 1}).total_cycles, 9);
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kIs), {1, 1, 1}).total_cycles, 9);
  // A 1x1 array in os: tau = 1+1+1-2 = 1, total 0; utilisation must not divide by zero.
  MxuTiming tiny = TimeGemm({1, 1, Dataflow::kOs}, {1, 1, 1});
  EXPECT_EQ(tiny.total_cycles, 0);
  EXPECT_DOUBLE_EQ(tiny.overall_utilization_percent, 100.0);
}

TEST(MxuTiming, ConvolutionMapsToGemm) {
  // 7x6 input, 3x2 filter, 2 channels, 5 filters, stride 2: output ceil((7-3+2)/2)=3 by
  // ceil((6-2+2)/2)=3 -> M=9 pixels, N=5, K=3*2*2=12.
  GemmShape g = ConvAsGemm({7, 6, 3, 2, 2, 5, 2, 2});
  EXPECT_EQ(g.m, 9);
  EXPECT_EQ(g.n, 5);
  EXPECT_EQ(g.k, 12);
  // os: Sr=9 -> 3, Sc=5 -> 2, tau = 12+5 = 17: 6*17-1 = 101. ws: Sr=12 -> 3, Sc=5 -> 2,
  // tau = 8+3+9-2 = 18: 107. is: Sr=12 -> 3, Sc=9 -> 3, tau = 8+3+5-2 = 14: 125.
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kOs), g).total_cycles, 101);
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kWs), g).total_cycles, 107);
  EXPECT_EQ(TimeGemm(Array43(Dataflow::kIs), g).total_cycles, 125);
  // A stride that does not divide evenly: 8 wide, filter 3, stride 2 -> ceil(7/2) = 4 columns.
  EXPECT_EQ(ConvAsGemm({3, 8, 3, 3, 1, 1, 2, 2}).m, 1 * 4);
}

TEST(MxuTiming, BadShapesThrow) {
  EXPECT_THROW(TimeGemm(Array43(Dataflow::kOs), {0, 1, 1}), hlo::Error);
  EXPECT_THROW(TimeGemm(Array43(Dataflow::kOs), {1, -3, 1}), hlo::Error);
  EXPECT_THROW(TimeGemm({0, 4, Dataflow::kOs}, {1, 1, 1}), hlo::Error);
  EXPECT_THROW(TimeGemm(Array43(Dataflow::kOs), {int64_t{1} << 41, 1, 1}), hlo::Error);
  try {
    ConvAsGemm({2, 8, 3, 3, 1, 1, 1, 1});
    FAIL() << "a filter taller than the input must be rejected";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("filter height (3) is larger than the input (2)"),
              std::string::npos)
        << e.message();
  }
  // 2^40 x 2^40 x 2^40 MACs overflow 64 bits: an error, not a wrapped count.
  const int64_t big = int64_t{1} << 40;
  EXPECT_THROW(TimeGemm({1 << 20, 1 << 20, Dataflow::kOs}, {big, big, big}), hlo::Error);
}

TEST(MxuTiming, HugeFoldCountsStayFast) {
  // 2^30 x 2^10 folds on a 1x1 array: summed in closed form, not one by one.
  MxuTiming t = TimeGemm({1, 1, Dataflow::kOs}, {int64_t{1} << 30, 1 << 10, 1});
  EXPECT_EQ(t.folds, int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency_percent, 100.0);
}

}  // namespace
}  // namespace simulator

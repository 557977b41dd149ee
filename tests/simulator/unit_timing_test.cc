// ComputeCost (unit_timing.h) against cycle and byte counts worked out by hand in the comments,
// from the formulas in docs/isa.md "Semantics and timing" (not from the implementation):
//   mxu.ldw k;  ws m + R + n - 2;  os (F-1) max(k, R) + k + m_last + n - 2;
//   is k + (F-1) max(n, C + k - 1) + n + R + m_last - 2;
//   vector ceil(count / L) + 4 (+ 8 for exp/tanh/rsqrt/recip); reductions rows ceil(cols / L)
//   + ceil(log2 L) + 4.
#include "simulator/unit_timing.h"

#include <gtest/gtest.h>

#include "hlo/diagnostic.h"
#include "simulator/mxu_timing.h"

namespace simulator {
namespace {

using systolic::Dataflow;
using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

constexpr uint64_t kAcc = systolic::kAccumulatorBit;

class UnitTimingTest : public ::testing::Test {
 protected:
  UnitTimingTest() {
    config_ = systolic::Preset("gemmini");
    config_.array_rows = 4;
    config_.array_cols = 8;
    config_.vector_lanes = 16;
  }
  // Pretends mxu.ldw loaded a k x n tile of `dtype` into buffer 0.
  void Load(int64_t k, int64_t n, Dtype dtype) {
    weights_.buffers[0] = WeightBuffers::Buffer{true, k, n, dtype, {}};
  }
  UnitCost Matmul(int64_t m, Dataflow dataflow, bool acc = false) {
    Instruction inst = systolic::MakeInstruction(Opcode::kMxuMatmul);
    inst.set(systolic::MxuMatmulField::dst, kAcc);
    inst.set(systolic::MxuMatmulField::m, m);
    inst.set(systolic::MxuMatmulField::acc, acc);
    inst.set(systolic::MxuMatmulField::dataflow, static_cast<uint64_t>(dataflow));
    return Cost(inst);
  }
  UnitCost Cost(const Instruction& inst) { return ComputeCost(inst, config_, registers_, weights_); }

  systolic::ArchConfig config_;
  RegisterFile registers_{};
  WeightBuffers weights_;
};

TEST_F(UnitTimingTest, LoadWeights) {
  Instruction inst = systolic::MakeInstruction(Opcode::kMxuLoadWeights);
  inst.set(systolic::MxuLoadWeightsField::k, 3);
  inst.set(systolic::MxuLoadWeightsField::n, 5);
  inst.set(systolic::MxuLoadWeightsField::dtype, static_cast<uint64_t>(Dtype::kBf16));
  UnitCost cost = Cost(inst);
  EXPECT_EQ(cost.cycles, 3);            // one tile row per cycle
  EXPECT_EQ(cost.ub_bytes_read, 30);    // 3 * 5 * 2 bytes
  EXPECT_EQ(cost.macs, 0);
  inst.set(systolic::MxuLoadWeightsField::k, 5);  // more rows than the array's 4
  EXPECT_THROW(Cost(inst), hlo::Error);
}

TEST_F(UnitTimingTest, MatmulPerDataflow) {
  Load(3, 5, Dtype::kS8);  // R=4 C=8, k=3 n=5, m=10
  // ws: 10 + 4 + 5 - 2 = 17.
  UnitCost ws = Matmul(10, Dataflow::kWs);
  EXPECT_EQ(ws.cycles, 17);
  EXPECT_EQ(ws.macs, 150);
  EXPECT_EQ(ws.ub_bytes_read, 30);       // 10 x 3 s8
  EXPECT_EQ(ws.acc_bytes_written, 200);  // 10 x 5 x 4
  EXPECT_EQ(ws.acc_bytes_read, 0);
  EXPECT_EQ(Matmul(10, Dataflow::kWs, true).acc_bytes_read, 200);
  // os: folds of rows {4,4,2}: 2 * max(3, 4) + (3 + 2 + 5 - 2) = 8 + 8 = 16.
  EXPECT_EQ(Matmul(10, Dataflow::kOs).cycles, 16);
  // is: folds of columns {8,2}: 3 + max(5, 8 + 3 - 1) + (5 + 4 + 2 - 2) = 3 + 10 + 9 = 22.
  EXPECT_EQ(Matmul(10, Dataflow::kIs).cycles, 22);
}

TEST_F(UnitTimingTest, OneFullFoldEqualsScaleSimTau) {
  // R=4 C=8 and a full tile (k=R, n=C, m=C for is): ldw + matmul = SCALE-Sim's fold latency.
  Load(4, 8, Dtype::kF32);
  const ArrayShape array{4, 8, Dataflow::kWs};
  // ws: ldw 4 + (6 + 4 + 8 - 2) = 20 = 2R + C + T - 2 with T = 6.
  EXPECT_EQ(4 + Matmul(6, Dataflow::kWs).cycles, FoldCycles(array, 6));
  // os (m = R = 4, k = 4 streamed): 4 + 4 + 8 - 2 = 14 = tau_os.
  EXPECT_EQ(Matmul(4, Dataflow::kOs).cycles, FoldCycles({4, 8, Dataflow::kOs}, 4));
  // is (m = C = 8, n = 8 streamed): fill 4 + (8 + 4 + 8 - 2) = 22 = 2R + C + T - 2, T = 8.
  EXPECT_EQ(Matmul(8, Dataflow::kIs).cycles, FoldCycles({4, 8, Dataflow::kIs}, 8));
}

TEST_F(UnitTimingTest, Convolution) {
  config_.array_rows = 16;
  config_.array_cols = 16;
  Load(9, 4, Dtype::kBf16);  // 3x3 kernel, one channel, 4 filters
  Instruction inst = systolic::MakeInstruction(Opcode::kMxuConv);
  using F = systolic::MxuConvField;
  inst.set(F::dst, kAcc);
  inst.set(F::in_h, 5);
  inst.set(F::in_w, 6);
  inst.set(F::kh, 3);
  inst.set(F::kw, 3);
  inst.set(F::stride, 2);
  // out 2 x 2 = 4 pixels; ws: 4 + 16 + 4 - 2 = 22; reads 4 windows of 9 bf16 = 72 bytes.
  UnitCost cost = Cost(inst);
  EXPECT_EQ(cost.cycles, 22);
  EXPECT_EQ(cost.macs, 4 * 9 * 4);
  EXPECT_EQ(cost.ub_bytes_read, 72);
  EXPECT_EQ(cost.acc_bytes_written, 64);
  inst.set(F::kh, 6);  // taller than the input
  EXPECT_THROW(Cost(inst), hlo::Error);
}

// The pipeline depths are rows of the architecture table: a config that changes them changes
// the cycles (ceil(count / L) + depth, + the transcendental stages for vexp), and the presets say
// 4 and 8.
TEST_F(UnitTimingTest, VectorPipelineDepthsComeFromTheArchitectureTable) {
  EXPECT_EQ(systolic::Preset("tpu-v1").vector_pipeline_depth, 4);
  EXPECT_EQ(systolic::Preset("gemmini").vector_transcendental_depth, 8);
  config_.vector_pipeline_depth = 9;
  config_.vector_transcendental_depth = 3;
  Instruction exp = systolic::MakeInstruction(Opcode::kVExp);
  exp.set(systolic::VExpField::dst, 0x100);
  exp.set(systolic::VExpField::src, 0x800);
  exp.set(systolic::VExpField::count, 33);
  exp.set(systolic::VExpField::dtype, static_cast<uint64_t>(Dtype::kF32));
  EXPECT_EQ(Cost(exp).cycles, 3 + 9 + 3);  // ceil(33 / 16) = 3
  Instruction mov = exp;
  mov.opcode = Opcode::kVMov;
  EXPECT_EQ(Cost(mov).cycles, 3 + 9);
}

TEST_F(UnitTimingTest, VectorOps) {
  Instruction add = systolic::MakeInstruction(Opcode::kVAdd);
  add.set(systolic::VAddField::dst, 0x100);
  add.set(systolic::VAddField::a, kAcc | 0x10);
  add.set(systolic::VAddField::b, 0x800);
  add.set(systolic::VAddField::count, 100);
  add.set(systolic::VAddField::dtype, static_cast<uint64_t>(Dtype::kF32));
  UnitCost cost = Cost(add);
  EXPECT_EQ(cost.cycles, 7 + config_.vector_pipeline_depth);  // ceil(100 / 16) = 7
  EXPECT_EQ(cost.acc_bytes_read, 400);
  EXPECT_EQ(cost.ub_bytes_read, 400);
  EXPECT_EQ(cost.ub_bytes_written, 400);
  EXPECT_EQ(cost.vector_element_ops, 100);

  Instruction cmp = systolic::MakeInstruction(Opcode::kVCmp);
  cmp.set(systolic::VCmpField::count, 16);
  cmp.set(systolic::VCmpField::dtype, static_cast<uint64_t>(Dtype::kS32));
  EXPECT_EQ(Cost(cmp).ub_bytes_written, 16);  // pred results: one byte each
  EXPECT_EQ(Cost(cmp).cycles, 1 + 4);

  Instruction exp = systolic::MakeInstruction(Opcode::kVExp);
  exp.set(systolic::VExpField::count, 16);
  exp.set(systolic::VExpField::dtype, static_cast<uint64_t>(Dtype::kBf16));
  EXPECT_EQ(Cost(exp).cycles, 1 + 4 + 8);

  Instruction sum = systolic::MakeInstruction(Opcode::kVRedSum);
  sum.set(systolic::VRedSumField::rows, 3);
  sum.set(systolic::VRedSumField::cols, 40);
  sum.set(systolic::VRedSumField::dtype, static_cast<uint64_t>(Dtype::kF32));
  // 3 rows x ceil(40 / 16) = 9, + log2(16) = 4, + 4.
  EXPECT_EQ(Cost(sum).cycles, 17);
  EXPECT_EQ(Cost(sum).ub_bytes_read, 480);
  EXPECT_EQ(Cost(sum).ub_bytes_written, 12);

  Instruction bcast = systolic::MakeInstruction(Opcode::kVBcast);
  bcast.set(systolic::VBcastField::rows, 4);
  bcast.set(systolic::VBcastField::cols, 10);
  bcast.set(systolic::VBcastField::dtype, static_cast<uint64_t>(Dtype::kS8));
  bcast.set(systolic::VBcastField::per_row, 1);
  EXPECT_EQ(Cost(bcast).cycles, 3 + 4);  // ceil(40 / 16) = 3
  EXPECT_EQ(Cost(bcast).ub_bytes_read, 4);  // per_row: one element per row
  EXPECT_EQ(Cost(bcast).ub_bytes_written, 40);

  Instruction cvt = systolic::MakeInstruction(Opcode::kVCvt);
  cvt.set(systolic::VCvtField::count, 10);
  cvt.set(systolic::VCvtField::src_type, static_cast<uint64_t>(Dtype::kF32));
  cvt.set(systolic::VCvtField::dst_type, static_cast<uint64_t>(Dtype::kBf16));
  EXPECT_EQ(Cost(cvt).ub_bytes_read, 40);
  EXPECT_EQ(Cost(cvt).ub_bytes_written, 20);
}

TEST_F(UnitTimingTest, Errors) {
  Instruction load = systolic::MakeInstruction(Opcode::kDmaLoad);
  try {
    Cost(load);
    FAIL() << "dma.load has no compute cost";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("dma.load is not a compute-unit instruction"), std::string::npos)
        << e.message();
  }
  try {
    Matmul(4, Dataflow::kWs);  // nothing loaded
    FAIL() << "matmul without weights";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("weight buffer 0 was never loaded"), std::string::npos)
        << e.message();
  }
  Load(2, 2, Dtype::kS8);
  Instruction bad = systolic::MakeInstruction(Opcode::kMxuMatmul);
  bad.set(systolic::MxuMatmulField::m, 2);
  bad.set(systolic::MxuMatmulField::dataflow, 3);  // not a dataflow
  EXPECT_THROW(Cost(bad), hlo::Error);
  EXPECT_THROW(Matmul(0, Dataflow::kWs), hlo::Error);  // m must be positive
  // A tile wider than the array (n=9 > C=8) has no pipelined timing.
  try {
    TimeInstructionPipelined({4, 8, Dataflow::kOs}, GemmShape{2, 9, 2});
    FAIL() << "n > C accepted";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("weight tile columns n=9 exceed the array's 8 columns"),
              std::string::npos)
        << e.message();
  }
}

}  // namespace
}  // namespace simulator

// Tests of the cost model (compiler/cost_model.h). Every expected FLOP count is worked out by
// hand in the comment next to it, by counting multiply-adds per output element rather than with
// the 2*M*N*K formula the implementation uses; bytes are element counts times element sizes.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/cost_model.h"
#include "tests/test_support.h"

namespace {

using compiler::CostModel;
using compiler::CostOf;
using compiler::InstructionCost;

// Parses a test module, adding the `HloModule` header the parser requires when it is absent.
std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  if (text.find("HloModule") != std::string::npos) return testing_support::ParseAndVerify(text);
  return testing_support::ParseAndVerify("HloModule test\n" + text);
}

const hlo::Instruction& Find(const hlo::Module& module, const std::string& name) {
  for (const auto& computation : module.computations()) {
    if (const hlo::Instruction* inst = computation->FindInstruction(name)) return *inst;
  }
  throw hlo::Error("no instruction " + name);
}

InstructionCost CostIn(const std::string& text, const std::string& name) {
  auto module = Parse(text);
  return CostOf(Find(*module, name));
}

TEST(CostModelTest, BatchedDotCountsTwoFlopsPerMultiplyAdd) {
  // out[b,i,j] = sum_k lhs[b,i,k] * rhs[b,k,j]: 2*3*5 = 30 outputs, each 4 multiply-adds.
  InstructionCost cost = CostIn(R"(
ENTRY e {
  l = f32[2,3,4] parameter(0)
  r = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(l, r), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={2}, rhs_contracting_dims={1}
})", "d");
  EXPECT_EQ(cost.flops, 30 * 4 * 2);
  EXPECT_EQ(cost.transcendentals, 0);
  EXPECT_EQ(cost.bytes_read, (24 + 40) * 4);
  EXPECT_EQ(cost.bytes_written, 30 * 4);
}

TEST(CostModelTest, DotWithTwoContractingDimensions) {
  // 6x7 outputs, each a sum over 2*3 = 6 products; bf16 elements are 2 bytes.
  InstructionCost cost = CostIn(R"(
ENTRY e {
  l = bf16[6,2,3] parameter(0)
  r = bf16[2,3,7] parameter(1)
  ROOT d = f32[6,7] dot(l, r), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
})", "d");
  EXPECT_EQ(cost.flops, 42 * 6 * 2);
  EXPECT_EQ(cost.bytes_read, (36 + 42) * 2);
  EXPECT_EQ(cost.bytes_written, 42 * 4);
}

TEST(CostModelTest, GroupedConvolutionCountsInputFeaturesPerGroup) {
  // 8 input features in 4 groups of 2; 4 output features; 3x3 window, no padding on 5x5:
  // 1*4*3*3 = 36 outputs, each 3*3 taps * 2 input features = 18 multiply-adds.
  InstructionCost cost = CostIn(R"(
ENTRY e {
  x = f32[1,8,5,5] parameter(0)
  k = f32[4,2,3,3] parameter(1)
  ROOT c = f32[1,4,3,3] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01,
    feature_group_count=4
})", "c");
  EXPECT_EQ(cost.flops, 36 * 18 * 2);
}

TEST(CostModelTest, CorpusDepthwiseConvolution) {
  // 256 channels, one input feature each, 3x3 window, same padding on 56x56:
  // 256*56*56 outputs * 9 multiply-adds.
  auto module = testing_support::ParseAndVerify(testing_support::ReadFile(
      testing_support::CorpusPath("depthwise_conv_3x3_1x256x56x56_bf16.hlo")));
  InstructionCost cost = CostOf(*module->entry()->root());
  EXPECT_EQ(cost.flops, 256.0 * 56 * 56 * 9 * 2);
  EXPECT_EQ(cost.bytes_written, 256.0 * 56 * 56 * 2);
}

const char* const kAdd = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(CostModelTest, ReduceCountsInputElementsTimesReducerWork) {
  // Sum of rows of 4x6: 24 additions (one per input element, the init value included).
  InstructionCost cost = CostIn(std::string(kAdd) + R"(
ENTRY e {
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={1}, to_apply=add
})", "r");
  EXPECT_EQ(cost.flops, 24);
  EXPECT_EQ(cost.bytes_read, 24 * 4 + 4);
  EXPECT_EQ(cost.bytes_written, 16);
}

TEST(CostModelTest, VariadicArgmaxReducerCostsItsThreeOps) {
  // The reducer does compare + 2 selects per call: 10 elements * 3.
  InstructionCost cost = CostIn(R"(
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[10] parameter(0)
  idx = s32[10] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[], s32[]) reduce(x, idx, ninf, zero), dimensions={0}, to_apply=argmax
})", "r");
  EXPECT_EQ(cost.flops, 30);
}

TEST(CostModelTest, ElementwiseAndTranscendentals) {
  const std::string text = R"(
ENTRY e {
  x = f32[10] parameter(0)
  y = f32[10] parameter(1)
  a = f32[10] add(x, y)
  ex = f32[10] exponential(a)
  c = f32[10] copy(ex)
  p = pred[10] compare(c, y), direction=LT
  ROOT s = f32[10] select(p, x, y)
})";
  EXPECT_EQ(CostIn(text, "a").flops, 10);
  EXPECT_EQ(CostIn(text, "a").transcendentals, 0);
  EXPECT_EQ(CostIn(text, "ex").flops, 10);
  EXPECT_EQ(CostIn(text, "ex").transcendentals, 10);
  // copy moves data but computes nothing.
  EXPECT_EQ(CostIn(text, "c").flops, 0);
  EXPECT_EQ(CostIn(text, "c").bytes_read, 40);
  EXPECT_EQ(CostIn(text, "c").bytes_written, 40);
  // pred results are one byte per element.
  EXPECT_EQ(CostIn(text, "p").bytes_written, 10);
  EXPECT_EQ(CostIn(text, "s").bytes_read, 10 + 40 + 40);
  EXPECT_EQ(CostIn(text, "x").bytes_read + CostIn(text, "x").bytes_written, 0);
}

TEST(CostModelTest, EmptyAndScalarShapes) {
  const std::string text = R"(
ENTRY e {
  x = f32[0,5] parameter(0)
  a = f32[0,5] add(x, x)
  s = f32[] parameter(1)
  ROOT t = f32[] tanh(s)
})";
  InstructionCost empty = CostIn(text, "a");
  EXPECT_EQ(empty.flops, 0);
  EXPECT_EQ(empty.bytes_read + empty.bytes_written, 0);
  InstructionCost scalar = CostIn(text, "t");
  EXPECT_EQ(scalar.flops, 1);
  EXPECT_EQ(scalar.transcendentals, 1);
  EXPECT_EQ(scalar.bytes_read, 4);
}

TEST(CostModelTest, FusionSumsItsBodyAndCountsOnlyBoundaryBytes) {
  // add + exp over 8 elements: 16 FLOPs, 8 transcendentals; the intermediate sum never
  // reaches memory, so bytes are 2 inputs of 32 bytes and one 32-byte result.
  InstructionCost cost = CostIn(R"(
fused {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] add(p0, p1)
  ROOT e = f32[8] exponential(a)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  ROOT f = f32[8] fusion(x, y), kind=kLoop, calls=fused
})", "f");
  EXPECT_EQ(cost.flops, 16);
  EXPECT_EQ(cost.transcendentals, 8);
  EXPECT_EQ(cost.bytes_read, 64);
  EXPECT_EQ(cost.bytes_written, 32);
}

TEST(CostModelTest, PartialAccessOpsCountWhatTheyTouch) {
  const std::string text = R"(
ENTRY e {
  x = f32[100,8] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  sl = f32[2,8] slice(x), slice={[0:2], [0:8]}
  ds = f32[3,8] dynamic-slice(x, i, z), dynamic_slice_sizes={3,8}
  u = f32[1,8] parameter(2)
  ROOT dus = f32[100,8] dynamic-update-slice(x, u, i, z)
})";
  EXPECT_EQ(CostIn(text, "sl").bytes_read, 64);
  EXPECT_EQ(CostIn(text, "ds").bytes_read, 96 + 4 + 4);
  // In place: read the update and the indices, write the update.
  EXPECT_EQ(CostIn(text, "dus").bytes_read, 32 + 8);
  EXPECT_EQ(CostIn(text, "dus").bytes_written, 32);
}

TEST(CostModelTest, WindowedAndSortingOps) {
  const std::string text = std::string(kAdd) + R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  rw = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=add
  y = f32[3,8] parameter(1)
  ROOT srt = f32[3,8] sort(y), dimensions={1}, to_apply=lt
})";
  // 4 outputs, each adds a 2x2 window.
  EXPECT_EQ(CostIn(text, "rw").flops, 16);
  // 3 rows of 8: 8 * log2(8) = 24 comparisons per row.
  EXPECT_EQ(CostIn(text, "srt").flops, 72);
}

TEST(CostModelTest, NoCodeInstructionsAreFree) {
  const std::string text = R"(
ENTRY e {
  x = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  t = (f32[4], f32[4]) tuple(x, c)
  g = f32[4] get-tuple-element(t), index=0
  ROOT b = f32[2,2] bitcast(g)
})";
  for (const char* name : {"x", "c", "t", "g", "b"}) {
    InstructionCost cost = CostIn(text, name);
    EXPECT_EQ(cost.flops + cost.bytes_read + cost.bytes_written, 0) << name;
    EXPECT_TRUE(compiler::GeneratesNoCode(Find(*Parse(text), name)
                                              .opcode())) << name;
  }
  EXPECT_FALSE(compiler::GeneratesNoCode(hlo::Opcode::kReshape));
}

TEST(CostModelTest, SharedReducerIsMemoized) {
  CostModel model;
  auto module = Parse(std::string(kAdd) + R"(
ENTRY e {
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  r0 = f32[4] reduce(x, z), dimensions={1}, to_apply=add
  ROOT r1 = f32[6] reduce(x, z), dimensions={0}, to_apply=add
})");
  EXPECT_EQ(model.Cost(Find(*module, "r0")).flops, 24);
  EXPECT_EQ(model.Cost(Find(*module, "r1")).flops, 24);
  EXPECT_EQ(model.ComputationWork(*module->FindComputation("add")).flops, 1);
}

TEST(CostModelTest, RooflineTakesTheSlowerOfComputeAndMemory) {
  compiler::TargetDescription target;
  target.peak.matrix_ops_per_second = {{hlo::PrimitiveType::kF32, 1e9}};
  target.peak.vector_ops_per_second = 1e6;
  target.peak.memory_bytes_per_second = 1e9;
  target.peak.kernel_launch_seconds = 1e-6;
  auto module = Parse(R"(
ENTRY e {
  l = f32[2,3,4] parameter(0)
  r = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(l, r), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT n = f32[2,3,5] negate(d)
})");
  const hlo::Instruction& dot = Find(*module, "d");
  // 240 FLOPs at 1 GFLOP/s = 0.24 us; 376 bytes at 1 GB/s = 0.376 us; + 1 us launch.
  EXPECT_NEAR(compiler::RooflineSeconds(dot, CostOf(dot), target), 1.376e-6, 1e-12);
  // negate: 30 ops on the 1 Mop/s vector unit = 30 us dominates 240 bytes.
  const hlo::Instruction& neg = Find(*module, "n");
  EXPECT_NEAR(compiler::RooflineSeconds(neg, CostOf(neg), target), 31e-6, 1e-12);
}

}  // namespace

// The systolic backend end to end: modules lowered, run on the simulator (host fallback on the
// interpreter) and MATCHED against the reference interpreter; cycle counts against hand
// estimates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hlo/evaluator.h"
#include "targets/descriptions.h"
#include "hlo/verifier.h"
#include "targets/systolic/lowering/fused_constants.h"
#include "targets/systolic/systolic_backend.h"
#include "tests/small_modules.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace {

systolic::ArchConfig ArrayConfig(int64_t rows, int64_t cols) {
  return systolic::LoadArchConfig(
      "tpu-v1", std::vector<std::string>{"array.rows=" + std::to_string(rows),
                                         "array.cols=" + std::to_string(cols),
                                         "array.dtypes=int8,bf16,f32"});
}

struct Outcome {
  io::CompareResult compare;
  std::map<std::string, double> counters;
};

// `tolerance`: nullptr for compare.h's per-type defaults.
Outcome RunOnSystolic(const hlo::Module& module, const systolic::ArchConfig& config,
                      const io::Tolerance* tolerance = nullptr) {
  auto backend =
      targets::MakeSystolicBackend(config, testing_support::Backends().Find("interp"));
  testing_support::ComparedRun run = testing_support::RunAgainstInterpreter(
      *backend, module, io::MakeRandomInputs(module, 7), tolerance);
  return {run.comparison, run.executable->profile().counters};
}

Outcome RunText(const std::string& text, const systolic::ArchConfig& config,
                const io::Tolerance* tolerance = nullptr) {
  auto module = testing_support::ParseAndVerify(text);
  return RunOnSystolic(*module, config, tolerance);
}

// Runs `module` on the accelerator (8x8 array) with `inputs`: no host step, and the results
// bit for bit the interpreter's (signed zeros included, which a tolerance cannot see).
hlo::Literal ExpectBitwiseOnTheAccelerator(const hlo::Module& module,
                                           const std::vector<hlo::Literal>& inputs) {
  auto backend = targets::MakeSystolicBackend(ArrayConfig(8, 8),
                                              testing_support::Backends().Find("interp"));
  auto executable = backend->Compile(module);
  hlo::Literal result = executable->Run(inputs);
  EXPECT_TRUE(result.BitwiseEqual(hlo::Evaluate(module, inputs)));
  EXPECT_EQ(executable->profile().counters.at("host_instructions"), 0)
      << executable->artifacts().at("program.sasm");
  return result;
}

// An array constant inside a fusion (constant folding turns a small iota into one, as in
// gemma3's attention masks) becomes an operand of the fusion in DRAM (fused_constants.h): the
// fusion runs on the accelerator, bit for bit.
TEST(SystolicRun, ArrayConstantsInFusionsBecomeOperands) {
  auto fused = testing_support::ParseAndVerify(R"(HloModule m
fused {
  p = s32[11] parameter(0)
  c = s32[11] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  ROOT a = s32[11] add(p, c)
}
ENTRY main {
  x = s32[11] parameter(0)
  ROOT f = s32[11] fusion(x), kind=kLoop, calls=fused
})");
  std::unique_ptr<hlo::Module> outlined = systolic::lowering::OutlineFusedArrayConstants(*fused);
  ASSERT_NE(outlined, nullptr);
  hlo::Verify(*outlined);
  const hlo::Instruction* fusion = outlined->entry()->root();
  ASSERT_EQ(fusion->operand_count(), 2);
  EXPECT_EQ(fusion->operand(1)->opcode(), hlo::Opcode::kConstant);
  EXPECT_EQ(fusion->operand(1)->name(), "c.1");  // "c" is the fused one it replaces
  EXPECT_EQ(fusion->called_computations().at(0)->parameter_count(), 2);
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*fused, 5);
  EXPECT_TRUE(hlo::Evaluate(*outlined, inputs).BitwiseEqual(hlo::Evaluate(*fused, inputs)));
  // Nothing to outline: no copy.
  EXPECT_EQ(systolic::lowering::OutlineFusedArrayConstants(*outlined), nullptr);
  // Through the pipeline: the iota folds into a constant that loop fusion takes in.
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = s32[11] parameter(0)
  i = s32[11] iota(), iota_dimension=0
  eleven = s32[] constant(11)
  b = s32[11] broadcast(eleven), dimensions={}
  s = s32[11] subtract(i, b)
  ROOT a = s32[11] add(x, s)
})");
  ExpectBitwiseOnTheAccelerator(*module, io::MakeRandomInputs(*module, 5));
}

constexpr char kOddDot[] = R"(HloModule m
ENTRY main {
  x = f32[5,7] parameter(0)
  w = f32[7,9] parameter(1)
  ROOT d = f32[5,9] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(SystolicRun, OddDotOn4x4And8x8Matches) {
  for (int64_t size : {4, 8}) {
    Outcome outcome = RunText(kOddDot, ArrayConfig(size, size));
    EXPECT_TRUE(outcome.compare.matched) << size << ": " << outcome.compare.summary;
    EXPECT_EQ(outcome.counters["host_instructions"], 0);
    EXPECT_EQ(outcome.counters["macs"], 5 * 7 * 9);
  }
}

TEST(SystolicRun, BatchedBf16DotMatches) {
  Outcome outcome = RunText(R"(HloModule m
ENTRY main {
  x = bf16[3,4,6] parameter(0)
  w = bf16[3,6,5] parameter(1)
  ROOT d = bf16[3,4,5] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2},
    rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                            ArrayConfig(4, 4));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["macs"], 3 * 4 * 6 * 5);
}

TEST(SystolicRun, DotBiasReluMatchesAsOneNativeFusion) {
  Outcome outcome = RunText(small_modules::kDotBiasRelu, ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["native_instructions"], 1);  // the output fusion
}

// A language model's logits: a dot whose rows (the vocabulary) are longer than the vector
// unit's 16-bit column fields. The matrix unit and its epilogue work on column tiles, so the
// row length is no limit there.
TEST(SystolicRun, LogitsWiderThanAVectorRowRunOnTheAccelerator) {
  Outcome outcome = RunText(R"(HloModule m
ENTRY main {
  x = bf16[11,64] parameter(0)
  w = bf16[64,70000] parameter(1)
  d = f32[11,70000] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[] constant(0.5)
  b = f32[11,70000] broadcast(s), dimensions={}
  ROOT m = f32[11,70000] multiply(d, b)
})",
                            ArrayConfig(32, 32));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["native_instructions"], 1);
}

// Index checks (`reduce(pred) with and`) and any-of tests (`or`), over rows and over columns:
// a max of the 0/1 bytes, negated before and after for an `and`.
TEST(SystolicRun, PredReductionsAreMaximaOfBytes) {
  Outcome outcome = RunText(R"(HloModule m
and {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] and(a, b)
}
or {
  c = pred[] parameter(0)
  d = pred[] parameter(1)
  ROOT r = pred[] or(c, d)
}
ENTRY main {
  x = f32[6,40] parameter(0)
  lo = f32[] constant(-1.5)
  blo = f32[6,40] broadcast(lo), dimensions={}
  hi = f32[] constant(1.5)
  bhi = f32[6,40] broadcast(hi), dimensions={}
  above = pred[6,40] compare(x, blo), direction=GT
  below = pred[6,40] compare(x, bhi), direction=GT
  t = pred[] constant(true)
  f = pred[] constant(false)
  all = pred[6] reduce(above, t), dimensions={1}, to_apply=and
  any = pred[6] reduce(below, f), dimensions={1}, to_apply=or
  cols = pred[40] reduce(above, t), dimensions={0}, to_apply=and
  ROOT r = (pred[6], pred[6], pred[40]) tuple(all, any, cols)
})",
                            ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
}

// A reduce over a dimension of one index (dlrm's index checks): the element itself, or for a
// sum 0 + x (which turns a -0 into +0, as the interpreter's sum does).
TEST(SystolicRun, ReducesOverDimensionsOfOneIndex) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
and {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] and(a, b)
}
add {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT r = f32[] add(c, d)
}
ENTRY main {
  x = f32[16,1] parameter(0)
  zero = f32[] constant(0)
  bz = f32[16,1] broadcast(zero), dimensions={}
  ok = pred[16,1] compare(x, bz), direction=GT
  t = pred[] constant(true)
  all = pred[16] reduce(ok, t), dimensions={1}, to_apply=and
  nz = f32[] constant(-0)
  bnz = f32[16,1] broadcast(nz), dimensions={}
  m = f32[16,1] minimum(x, bnz)
  s = f32[16] reduce(m, zero), dimensions={1}, to_apply=add
  ROOT r = (pred[16], f32[16]) tuple(all, s)
})");
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 7);
  const hlo::Literal result = ExpectBitwiseOnTheAccelerator(*module, inputs);
  // Where x > 0, min(x, -0) is -0 and the sum +0: the case the comment is about occurs.
  int positive = 0;
  for (int64_t i = 0; i < 16; ++i) {
    if (inputs[0].data<float>()[static_cast<size_t>(i)] <= 0) continue;
    ++positive;
    EXPECT_FALSE(std::signbit(result.elements()[1].data<float>()[static_cast<size_t>(i)])) << i;
  }
  EXPECT_GT(positive, 0);
}

// A Sharding custom-call (an annotation for XLA's SPMD partitioner) is no code in a
// one-device run: its value is its operand's DRAM buffer, no host step.
TEST(SystolicRun, AnnotationCustomCallsAreTheirOperands) {
  Outcome outcome = RunText(
      testing_support::ReadFile(testing_support::CorpusPath("must_alias_with_sharding.hlo")),
      ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["native_instructions"], 1);  // the add
}

// Integer division and remainder as HLO defines them (vdiv, vrem): truncation toward zero, the
// remainder's sign from the dividend, by zero all ones / the dividend, MIN / -1 = MIN; the
// sliding-window masks of a language model take (position - window) % window, negative.
TEST(SystolicRun, IntegerDivisionAndRemainderFollowHlo) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  a = s32[8] parameter(0)
  b = s32[8] parameter(1)
  q = s32[8] divide(a, b)
  r = s32[8] remainder(a, b)
  i = s32[11] parameter(4)
  eleven = s32[] constant(11)
  e = s32[11] broadcast(eleven), dimensions={}
  shifted = s32[11] subtract(i, e)
  window = s32[11] remainder(shifted, e)
  c = u8[8] parameter(2)
  d = u8[8] parameter(3)
  uq = u8[8] divide(c, d)
  ur = u8[8] remainder(c, d)
  ROOT t = (s32[8], s32[8], s32[11], u8[8], u8[8]) tuple(q, r, window, uq, ur)
})");
  std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 3);
  const std::vector<int32_t> a = {7, -7, 5, 3, std::numeric_limits<int32_t>::min(), 0, -9, 100};
  const std::vector<int32_t> b = {2, 2, 0, -1, -1, 5, 4, -7};
  const std::vector<uint8_t> c = {7, 255, 5, 200, 0, 9, 1, 128};
  const std::vector<uint8_t> d = {2, 16, 0, 3, 7, 9, 255, 0};
  std::copy(a.begin(), a.end(), inputs[0].mutable_data<int32_t>().begin());
  std::copy(b.begin(), b.end(), inputs[1].mutable_data<int32_t>().begin());
  std::copy(c.begin(), c.end(), inputs[2].mutable_data<uint8_t>().begin());
  std::copy(d.begin(), d.end(), inputs[3].mutable_data<uint8_t>().begin());
  ExpectBitwiseOnTheAccelerator(*module, inputs);
}

TEST(SystolicRun, SoftmaxMatches) {
  Outcome outcome = RunText(small_modules::kSoftmax, ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
}

TEST(SystolicRun, ColumnGatherFallsBackToTheHostAndMatches) {
  Outcome outcome = RunText(R"(HloModule m
ENTRY main {
  t = f32[3,5] parameter(0)
  i = s32[2] parameter(1)
  g = f32[3,2] gather(t, i), offset_dims={0}, collapsed_slice_dims={1},
    start_index_map={1}, index_vector_dim=1, slice_sizes={3,1}
  ROOT e = f32[3,2] exponential(g)
})",
                            ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 1);
  EXPECT_GT(outcome.counters["host_fallback_share"], 0);
  // 60 + 8 bytes in, 24 out over a 14 GB/s link plus 10 us: ~7000 cycles at 700 MHz.
  EXPECT_NEAR(outcome.counters["host_fallback_cycles"], (92 / 14e9 + 10e-6) * 700e6, 1);
}

// The matrix unit sums each k block in f32 and adds it to the accumulator: a different order
// than the interpreter's. With K = 64 products of N(0,1) inputs (|x*w| rarely above 16) the
// difference stays below K * 16 * 2^-24 ~ 6e-5.
constexpr io::Tolerance kLongSums{1e-5, 1e-4};

// A matmul long enough that the matrix unit dominates: 1024 x 64 x 32 f32 on an 8x8 array is
// 4 column tiles x 8 k blocks of one mxu.matmul each, streaming all 1024 rows (tm = 1024).
TEST(SystolicRun, MatmulCyclesFollowTheMatrixUnitEstimate) {
  systolic::ArchConfig config = ArrayConfig(8, 8);
  Outcome outcome = RunText(R"(HloModule m
ENTRY main {
  x = f32[1024,64] parameter(0)
  w = f32[64,32] parameter(1)
  ROOT d = f32[1024,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                            config, &kLongSums);
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  // Hand estimate. Per column tile: the first k block's mxu.matmul takes T + R + C - 2 cycles
  // (WS, docs/isa.md); the 7 accumulating ones read and write every 1024 x 8 result word, so the
  // accumulator ports (acc.banks x C x 4 bytes per cycle) bound them at 2 x 1024 x 8 x 4 bytes.
  // Weight loads hide behind the other buffer. Before it, the first tile's operands (A 1024x64
  // and W 64x8 in f32) cross DRAM unoverlapped; after it, the last tile's 1024x8 result goes
  // back. Everything else overlaps the matrix unit (double buffering).
  const double bytes_per_cycle = config.dram_bandwidth_gbps * 1e9 / (config.clock_mhz * 1e6);
  const double first = 1024 + 8 + 8 - 2;
  const double accumulate = std::max(first, 2.0 * 1024 * 8 * 4 / (config.acc_banks * 8 * 4));
  const double mxu = 4 * (first + 7 * accumulate);
  const double prologue = (1024.0 * 64 * 4 + 64.0 * 8 * 4) / bytes_per_cycle;
  const double epilogue = 1024.0 * 8 * 4 / bytes_per_cycle;
  const double estimate = mxu + prologue + epilogue;
  // 10 %: DRAM latency per transfer, burst rounding, UB port sharing and the sync instructions
  // are left out of the estimate.
  EXPECT_NEAR(outcome.counters["cycles"], estimate, 0.10 * estimate)
      << "mxu " << mxu << " prologue " << prologue << " epilogue " << epilogue;
  EXPECT_EQ(outcome.counters["macs"], 1024.0 * 64 * 32);
  EXPECT_NEAR(outcome.counters["mac_utilization"], 1024.0 * 64 * 32 / (estimate * 64), 0.05);
}

// Real models from the corpus on two configurations each (small arrays keep the test fast).
class CorpusOnSystolic : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusOnSystolic, MatchesOnTwoConfigurations) {
  const std::string text =
      testing_support::ReadFile(testing_support::CorpusPath(GetParam() + ".hlo"));
  auto module = testing_support::ParseAndVerify(text);
  const std::vector<systolic::ArchConfig> configs = {
      ArrayConfig(8, 8),
      systolic::LoadArchConfig("tpu-v4-mxu", std::vector<std::string>{"array.rows=16",
                                                                      "array.cols=16"})};
  for (const systolic::ArchConfig& config : configs) {
    Outcome outcome = RunOnSystolic(*module, config);
    EXPECT_TRUE(outcome.compare.matched) << config.name << ": " << outcome.compare.summary;
    // Every instruction of these two runs on the accelerator (mha_block's transpose by DMA).
    EXPECT_EQ(outcome.counters["host_instructions"], 0) << config.name;
    EXPECT_GT(outcome.counters["cycles"], 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, CorpusOnSystolic,
                         ::testing::Values("layer_norm_1x4096x768_bf16",
                                           "mha_block_1x12x128x64_bf16"));

// Stride 2, padding 1, odd sizes, two images: bands of output rows, taps and channel blocks.
constexpr char kConv[] = R"(HloModule c
ENTRY main {
  x = f32[2,9,7,5] parameter(0)
  k = f32[3,3,5,6] parameter(1)
  ROOT c = f32[2,5,4,6] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
})";

TEST(SystolicRun, StridedPaddedConvolutionMatchesOn4x4And8x8) {
  for (int64_t size : {4, 8}) {
    Outcome outcome = RunText(kConv, ArrayConfig(size, size));
    EXPECT_TRUE(outcome.compare.matched) << size << ": " << outcome.compare.summary;
    EXPECT_EQ(outcome.counters["host_instructions"], 0);
    // Every output pixel x tap x input channel x output channel, padding taps included.
    EXPECT_EQ(outcome.counters["macs"], 2 * 5 * 4 * 9 * 5 * 6);
  }
}

TEST(SystolicRun, ConvolutionWithBiasAndReluIsOneNativeFusion) {
  Outcome outcome = RunText(R"(HloModule c
ENTRY main {
  x = bf16[1,6,6,8] parameter(0)
  k = bf16[3,3,8,16] parameter(1)
  b = bf16[16] parameter(2)
  c = bf16[1,6,6,16] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
  bb = bf16[1,6,6,16] broadcast(b), dimensions={3}
  a = bf16[1,6,6,16] add(c, bb)
  z = bf16[] constant(0)
  zb = bf16[1,6,6,16] broadcast(z), dimensions={}
  ROOT r = bf16[1,6,6,16] maximum(a, zb)
})",
                            ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["native_instructions"], 1);
}

// Depthwise (one channel per group) is a window fold on the vector unit; two channels per
// group is neither that nor a matrix-unit convolution: the host runs it.
TEST(SystolicRun, GroupedConvolutionsOtherThanDepthwiseFallBackToTheHost) {
  Outcome outcome = RunText(R"(HloModule c
ENTRY main {
  x = f32[1,5,5,4] parameter(0)
  k = f32[3,3,1,4] parameter(1)
  d = f32[1,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f,
    feature_group_count=4
  k2 = f32[3,3,2,4] parameter(2)
  g = f32[1,3,3,4] convolution(x, k2), window={size=3x3}, dim_labels=b01f_01io->b01f,
    feature_group_count=2
  ROOT t = (f32[1,3,3,4], f32[1,3,3,4]) tuple(d, g)
})",
                            ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 1);
  EXPECT_EQ(outcome.counters["native_instructions"], 1);
}

// Global average pooling (a column reduction over H and W in NHWC) and pred logic as 0/1 bytes.
TEST(SystolicRun, ColumnReductionAndPredLogicMatch) {
  Outcome outcome = RunText(R"(HloModule p
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[1,7,7,20] parameter(0)
  y = f32[1,7,7,20] parameter(1)
  z = f32[] constant(0)
  s = f32[1,20] reduce(x, z), dimensions={1,2}, to_apply=add_c
  n49 = f32[] constant(49)
  nb = f32[1,20] broadcast(n49), dimensions={}
  mean = f32[1,20] divide(s, nb)
  c = pred[1,7,7,20] compare(x, y), direction=GT
  zb = f32[1,7,7,20] broadcast(z), dimensions={}
  d = pred[1,7,7,20] compare(x, zb), direction=LT
  a = pred[1,7,7,20] and(c, d)
  o = pred[1,7,7,20] or(c, d)
  n = pred[1,7,7,20] not(a)
  e = pred[1,7,7,20] xor(n, o)
  ROOT t = (f32[1,20], pred[1,7,7,20]) tuple(mean, e)
})",
                            ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
}

// int8 x int8 -> int32 on TPU v1's own type set (no override of array.dtypes): exact.
TEST(SystolicRun, Int8DotIsExactOnTpuV1Types) {
  systolic::ArchConfig config = systolic::LoadArchConfig(
      "tpu-v1", std::vector<std::string>{"array.rows=8", "array.cols=8"});
  Outcome outcome = RunText(R"(HloModule q
ENTRY main {
  x = s8[9,20] parameter(0)
  w = s8[20,11] parameter(1)
  ROOT d = s32[9,11] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                            config);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["macs"], 9 * 20 * 11);
}

// int8 in, int32 accumulators, bias, then the requantization idiom (scale, round, clamp,
// convert to s8): all on the accelerator, exact. The scale makes some results saturate.
TEST(SystolicRun, Int8DotWithRequantizationIsExact) {
  systolic::ArchConfig config = systolic::LoadArchConfig(
      "tpu-v1", std::vector<std::string>{"array.rows=8", "array.cols=8"});
  Outcome outcome = RunText(R"(HloModule q
ENTRY main {
  x = s8[16,24] parameter(0)
  w = s8[24,12] parameter(1)
  b = s32[12] parameter(2)
  d = s32[16,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = s32[16,12] broadcast(b), dimensions={1}
  acc = s32[16,12] add(d, bb)
  f = f32[16,12] convert(acc)
  sc = f32[] constant(0.0625)
  scb = f32[16,12] broadcast(sc), dimensions={}
  m = f32[16,12] multiply(f, scb)
  r = f32[16,12] round-nearest-even(m)
  lo = f32[] constant(-128)
  hi = f32[] constant(127)
  c = f32[16,12] clamp(lo, r, hi)
  ROOT o = s8[16,12] convert(c)
})",
                            config);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["macs"], 16 * 24 * 12);
}

TEST(SystolicRun, PointwiseConvolutionMatches) {
  Outcome outcome = RunText(R"(HloModule c
ENTRY main {
  x = f32[2,6,5,12] parameter(0)
  k = f32[1,1,12,6] parameter(1)
  ROOT c = f32[2,6,5,6] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
})",
                            ArrayConfig(8, 8));
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["macs"], 2 * 6 * 5 * 12 * 6);
}

// The small reference models of tests/data/models (while loops, sorts, gathers, integer
// overflow, empty shapes...) on an 8x8 array: native where possible, host otherwise, always
// matching.
class ReferenceModelsOnSystolic : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceModelsOnSystolic, Matches) {
  auto module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::TestDataPath("models/" + GetParam() + ".hlo")));
  // attention_f32 divides (vrecip then vmul: within one ulp of IEEE division) and sums k blocks
  // in the matrix unit's order; its last two 16-term matmuls then cancel terms of magnitude ~16
  // into outputs below 1, so those last-bit (6e-8 relative) differences reach a few 1e-5.
  const io::Tolerance f32_reassociated{1e-5, 1e-4};
  // while_loop iterates a 16-term matmul and tanh: on 8x8 the two k blocks' order compounds.
  const bool reassociated = GetParam() == "attention_f32" || GetParam() == "while_loop";
  Outcome outcome =
      RunOnSystolic(*module, ArrayConfig(8, 8), reassociated ? &f32_reassociated : nullptr);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
}

INSTANTIATE_TEST_SUITE_P(Models, ReferenceModelsOnSystolic,
                         ::testing::Values("argmax", "attention_bf16", "attention_f32",
                                           "conv_block", "cumsum", "dynamic_slice_loop",
                                           "embedding_lookup", "empty_shapes",
                                           "integer_and_overflow", "layer_norm", "mlp",
                                           "sort_pairs", "while_loop"));

// Stride 1: one "wide" matmul per tap over the whole band, garbage columns dropped by vmov.
TEST(SystolicRun, StrideOneConvolutionsMatchInF32AndInt8) {
  Outcome f32 = RunText(R"(HloModule c
ENTRY main {
  x = f32[2,7,6,5] parameter(0)
  k = f32[3,2,5,9] parameter(1)
  ROOT c = f32[2,7,6,9] convolution(x, k), window={size=3x2 pad=1_1x0_1},
    dim_labels=b01f_01io->b01f
})",
                        ArrayConfig(4, 4));
  EXPECT_TRUE(f32.compare.matched) << f32.compare.summary;
  EXPECT_EQ(f32.counters["host_instructions"], 0);
  // macs counts the model's work (output pixels x kh x kw x cin); the array also streams the
  // padded width (7 columns per 6-wide row), which only executed_macs includes.
  EXPECT_EQ(f32.counters["macs"], 2.0 * 7 * 6 * 9 * (3 * 2 * 5));
  EXPECT_GT(f32.counters["executed_macs"], f32.counters["macs"]);
  systolic::ArchConfig int8_config = systolic::LoadArchConfig(
      "tpu-v1", std::vector<std::string>{"array.rows=8", "array.cols=8"});
  Outcome int8 = RunText(R"(HloModule c
ENTRY main {
  x = s8[1,5,5,3] parameter(0)
  k = s8[3,3,3,4] parameter(1)
  ROOT c = s32[1,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
})",
                         int8_config);
  EXPECT_TRUE(int8.compare.matched) << int8.compare.summary;
  EXPECT_EQ(int8.counters["host_instructions"], 0);
}

// The cycles a loop's trips pay besides the condition's and the body's programs: reading the
// predicate (`predicate_cycles` per condition run) and the DMA of what moves: the leaves the
// body computes, read and written (`computed_bytes`), and of those the ones the condition reads
// (`condition_bytes`). The last condition runs without a body.
double LoopControlCycles(const systolic::ArchConfig& config, double trips, int64_t predicate_cycles,
                         double computed_bytes, double condition_bytes) {
  const double bytes_per_cycle = config.dram_bandwidth_gbps * 1e3 / config.clock_mhz;
  const auto condition_cycles = static_cast<int64_t>(condition_bytes / bytes_per_cycle);
  const auto body_cycles = static_cast<int64_t>(2 * computed_bytes / bytes_per_cycle);
  return (trips + 1) * static_cast<double>(predicate_cycles + condition_cycles) +
         trips * static_cast<double>(body_cycles);
}

// A while loop on the device: condition and body lowered on their own, both accelerator programs
// only, so the condition ends with ctrl.test and the control unit's loop sequencer reads the flag
// (no host batch per trip). With K = 16 on a 16x16 array every sum is in the interpreter's order:
// bit-exact.
TEST(SystolicRun, WhileLoopRunsOnTheDeviceBitExactly) {
  auto module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::TestDataPath("models/while_loop.hlo")));
  const io::Tolerance exact{0, 0};
  const systolic::ArchConfig config = ArrayConfig(16, 16);
  Outcome outcome = RunOnSystolic(*module, config, &exact);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["loops"], 1);
  EXPECT_EQ(outcome.counters["device_loops"], 1);
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["host_fallback_cycles"], 0);
  const double trips = outcome.counters["loop_iterations"];
  ASSERT_GT(trips, 0);
  EXPECT_EQ(outcome.counters["loop_iterations_on_device"], trips);
  // Each iteration runs the condition and the body as segments, plus the final condition. Their
  // time cannot depend on their data (simulator/replay.h): after the first condition and the
  // first body, every segment is replayed with the counts of its first run.
  EXPECT_EQ(outcome.counters["segments"], 2 * trips + 1);
  EXPECT_EQ(outcome.counters["replayed_segments"], 2 * trips - 1);
  EXPECT_GT(outcome.counters["macs"], 0);
  // The predicate costs the condition's ctrl.test: one DRAM access (docs/isa.md). What moves:
  // the counter and the hidden state (computed), the counter (read by the condition); its
  // bound and the weights stay put.
  const auto test_cycles =
      static_cast<int64_t>(std::ceil(config.dram_latency_ns * config.clock_mhz / 1000)) + 1;
  EXPECT_EQ(outcome.counters["loop_control_cycles"],
            LoopControlCycles(config, trips, test_cycles, 4 + 16 * 4, 4));
  EXPECT_NEAR(outcome.counters["loop_control_cycles_per_trip"],
              outcome.counters["loop_control_cycles"] / trips, 1e-9);
}

// A loop whose body needs the host (f64 arithmetic: no accelerator type) stays under host
// control: the host reads the predicate each iteration, one host-issued batch per condition run.
TEST(SystolicRun, WhileLoopWithAHostStepRunsUnderHostControl) {
  auto module = testing_support::ParseAndVerify(R"(HloModule w
body {
  s = (s32[], f64[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f64[4] get-tuple-element(s), index=1
  y = f64[4] add(x, x)
  ROOT t = (s32[], f64[4]) tuple(next, y)
}
cond {
  s = (s32[], f64[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  zero = s32[] constant(0)
  x = f64[4] parameter(0)
  init = (s32[], f64[4]) tuple(zero, x)
  ROOT w = (s32[], f64[4]) while(init), condition=cond, body=body
})");
  const io::Tolerance exact{0, 0};
  const systolic::ArchConfig config = ArrayConfig(16, 16);
  Outcome outcome = RunOnSystolic(*module, config, &exact);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["loops"], 1);
  EXPECT_EQ(outcome.counters["device_loops"], 0);
  EXPECT_EQ(outcome.counters["loop_iterations"], 5);
  EXPECT_EQ(outcome.counters["loop_iterations_on_device"], 0);
  const compiler::PeakRates& peak = targets::SystolicDescription().peak;
  const auto batch_cycles = static_cast<int64_t>(
      (1 / peak.host_link_bytes_per_second + peak.kernel_launch_seconds) * config.clock_mhz * 1e6 +
      0.5);
  EXPECT_EQ(outcome.counters["loop_control_cycles"],
            LoopControlCycles(config, 5, batch_cycles, 4 + 4 * 8, 4));
}

// A conditional on the device: each branch lowered on its own, all of them accelerator programs,
// so the control unit reads the selector (ctrl.index for an s32, whose out-of-range values pick
// the last branch) and starts the chosen branch; no host batch.
TEST(SystolicRun, ConditionalRunsTheChosenBranchOnTheDevice) {
  auto module = testing_support::ParseAndVerify(R"(HloModule c
neg {
  a = f32[4,8] parameter(0)
  ROOT n = f32[4,8] negate(a)
}
twice {
  b = f32[4,8] parameter(0)
  ROOT t = f32[4,8] add(b, b)
}
ex {
  c = f32[4,8] parameter(0)
  ROOT e = f32[4,8] exponential(c)
}
ENTRY main {
  i = s32[] parameter(0)
  x = f32[4,8] parameter(1)
  ROOT r = f32[4,8] conditional(i, x, x, x), branch_computations={neg, twice, ex}
})");
  auto backend = targets::MakeSystolicBackend(ArrayConfig(8, 8),
                                              testing_support::Backends().Find("interp"));
  auto executable = backend->Compile(*module);
  std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 3);
  for (int32_t index : {0, 1, 2, 7, -1}) {
    inputs[0].mutable_data<int32_t>()[0] = index;
    hlo::Literal result = executable->Run(inputs);
    hlo::Literal expected = hlo::Evaluate(*module, inputs);
    EXPECT_TRUE(result.BitwiseEqual(expected)) << "index " << index;
    const auto& counters = executable->profile().counters;
    EXPECT_EQ(counters.at("loops"), 1);
    EXPECT_EQ(counters.at("device_loops"), 1);
    EXPECT_EQ(counters.at("branches_on_device"), 1);
    EXPECT_EQ(counters.at("host_instructions"), 0);
    EXPECT_EQ(counters.at("host_fallback_cycles"), 0);
  }
  const std::map<std::string, std::string> artifacts = executable->artifacts();
  ASSERT_TRUE(artifacts.count("program.sasm"));
  EXPECT_THAT(artifacts.at("program.sasm"), ::testing::HasSubstr("ctrl.index src="));
  EXPECT_THAT(artifacts.at("program.sasm"), ::testing::HasSubstr(", count=3"));
}

// A pred selector is read by ctrl.test (set: branch 0); a branch that needs the host (f64: no
// accelerator type) makes the host choose, one host-issued batch.
TEST(SystolicRun, PredConditionalOnTheDeviceAndOneWithAHostBranch) {
  for (const bool host_branch : {false, true}) {
    const std::string dtype = host_branch ? "f64" : "f32";
    auto module = testing_support::ParseAndVerify(R"(HloModule c
neg {
  a = )" + dtype + R"([4,8] parameter(0)
  ROOT n = )" + dtype + R"([4,8] negate(a)
}
twice {
  b = )" + dtype + R"([4,8] parameter(0)
  ROOT t = )" + dtype + R"([4,8] add(b, b)
}
ENTRY main {
  p = pred[] parameter(0)
  x = )" + dtype + R"([4,8] parameter(1)
  ROOT r = )" + dtype + R"([4,8] conditional(p, x, x), true_computation=neg, false_computation=twice
})");
    auto backend = targets::MakeSystolicBackend(ArrayConfig(8, 8),
                                                testing_support::Backends().Find("interp"));
    auto executable = backend->Compile(*module);
    std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 3);
    for (const bool selector : {true, false}) {
      inputs[0].mutable_data<bool>()[0] = selector;
      hlo::Literal result = executable->Run(inputs);
      EXPECT_TRUE(result.BitwiseEqual(hlo::Evaluate(*module, inputs)))
          << dtype << " selector " << selector;
      const auto& counters = executable->profile().counters;
      EXPECT_EQ(counters.at("device_loops"), host_branch ? 0 : 1);
      EXPECT_EQ(counters.at("branches_on_device"), host_branch ? 0 : 1);
      EXPECT_EQ(counters.at("host_fallback_cycles") > 0, host_branch);
    }
  }
}

// Two int8 layers, each a dot followed by the requantize idiom in a loop fusion: each pair is
// lowered as one op (the requantize as the matmul's epilogue), and the second layer's weights
// load while the first layer drains.
constexpr char kInt8TwoLayers[] = R"(HloModule m
requant.1 {
  p = s32[6,12] parameter(0)
  f = f32[6,12] convert(p)
  s = f32[] constant(0.0625)
  b = f32[6,12] broadcast(s), dimensions={}
  m = f32[6,12] multiply(f, b)
  r = f32[6,12] round-nearest-even(m)
  lo = f32[] constant(0)
  hi = f32[] constant(127)
  c = f32[6,12] clamp(lo, r, hi)
  ROOT q = s8[6,12] convert(c)
}
requant.2 {
  p = s32[6,10] parameter(0)
  f = f32[6,10] convert(p)
  s = f32[] constant(0.125)
  b = f32[6,10] broadcast(s), dimensions={}
  m = f32[6,10] multiply(f, b)
  r = f32[6,10] round-nearest-even(m)
  lo = f32[] constant(-128)
  hi = f32[] constant(127)
  c = f32[6,10] clamp(lo, r, hi)
  ROOT q = s8[6,10] convert(c)
}
ENTRY main {
  x = s8[6,20] parameter(0)
  w1 = s8[20,12] parameter(1)
  w2 = s8[12,10] parameter(2)
  d1 = s32[6,12] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q1 = s8[6,12] fusion(d1), kind=kLoop, calls=requant.1
  d2 = s32[6,10] dot(q1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT q2 = s8[6,10] fusion(d2), kind=kLoop, calls=requant.2
})";

// Signed activations (x - 8 in [-8, 8)) and bounds inside s8 on both sides (-100, 100): the
// requantize runs as vrequant + vmax + vmin, and most values are not saturated.
constexpr char kInt8SignedRequantize[] = R"(HloModule m
requant {
  p = s32[6,12] parameter(0)
  f = f32[6,12] convert(p)
  s = f32[] constant(0.03125)
  b = f32[6,12] broadcast(s), dimensions={}
  m = f32[6,12] multiply(b, f)
  r = f32[6,12] round-nearest-even(m)
  lo = f32[] constant(-100)
  hi = f32[] constant(100)
  c = f32[6,12] clamp(lo, r, hi)
  ROOT q = s8[6,12] convert(c)
}
ENTRY main {
  x = s8[6,20] parameter(0)
  eight = s8[] constant(8)
  e = s8[6,20] broadcast(eight), dimensions={}
  xs = s8[6,20] subtract(x, e)
  w = s8[20,12] parameter(1)
  d = s32[6,12] dot(xs, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT q = s8[6,12] fusion(d), kind=kLoop, calls=requant
})";

TEST(SystolicRun, SignedRequantizeWithInnerBoundsMatches) {
  systolic::ArchConfig config =
      systolic::LoadArchConfig("tpu-v1", std::vector<std::string>{"array.rows=8", "array.cols=8"});
  Outcome outcome = RunText(kInt8SignedRequantize, config);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["native_instructions"], 3);  // subtract, dot + requantize
}

TEST(SystolicRun, Int8LayersWithFusedRequantizeMatchOn8x8) {
  systolic::ArchConfig config =
      systolic::LoadArchConfig("tpu-v1", std::vector<std::string>{"array.rows=8", "array.cols=8"});
  Outcome outcome = RunText(kInt8TwoLayers, config);
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["native_instructions"], 4);
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["macs"], 6 * 20 * 12 + 6 * 12 * 10);
  // Only the two s8 results reach DRAM (72 + 60 bytes, rounded up to 64-byte bursts per row
  // at most): the s32 dot results never leave the accumulators (6 x 22 x 4 = 528 bytes).
  EXPECT_LT(outcome.counters["dram_bytes_written"], 6 * 22 * 4);
}

// Three f32 layers whose activations stay on chip on a small square array: the first layer
// has several row blocks (its 64 x 64 f32 A panel does not fit the UB at once) and two column
// blocks, which the next layer reads as its two k blocks. On a non-square array the blocks
// would not line up, so the activations go through DRAM; both match the interpreter.
constexpr char kThreeF32Layers[] = R"(HloModule m
ENTRY main {
  x = f32[64,64] parameter(0)
  w1 = f32[64,8] parameter(1)
  w2 = f32[8,8] parameter(2)
  w3 = f32[8,4] parameter(3)
  d1 = f32[64,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[64,8] dot(d1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d3 = f32[64,4] dot(d2, w3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(SystolicRun, OnChipActivationsAcrossRowAndColumnBlocksMatch) {
  auto run = [](int64_t rows, int64_t cols) {
    systolic::ArchConfig config = systolic::LoadArchConfig(
        "tpu-v1", std::vector<std::string>{
                      "array.rows=" + std::to_string(rows), "array.cols=" + std::to_string(cols),
                      "array.dtypes=int8,bf16,f32", "ub.bytes=32768"});
    return RunText(kThreeF32Layers, config);
  };
  Outcome square = run(4, 4);
  EXPECT_TRUE(square.compare.matched) << square.compare.summary;
  // Only d3 (64 x 4 f32 = 1024 bytes) is written: d1 and d2 never reach DRAM.
  EXPECT_EQ(square.counters["dram_bytes_written"], 64 * 4 * 4);
  Outcome oblong = run(8, 4);
  EXPECT_TRUE(oblong.compare.matched) << oblong.compare.summary;
  EXPECT_EQ(oblong.counters["dram_bytes_written"], (64 * 8 * 2 + 64 * 4) * 4);
}

// int8 convolutions whose kernel-row weight tiles cross tap boundaries on an 8x8 array
// (3 taps x 5 channels = 15 rows: tiles of 8 and 7), strided and padded, and stride 1 with
// an uneven pad: all match the interpreter exactly.
TEST(SystolicRun, Int8KernelRowTilesMatch) {
  systolic::ArchConfig config =
      systolic::LoadArchConfig("tpu-v1", std::vector<std::string>{"array.rows=8", "array.cols=8"});
  Outcome strided = RunText(R"(HloModule c
ENTRY main {
  x = s8[2,9,7,5] parameter(0)
  k = s8[3,3,5,6] parameter(1)
  ROOT c = s32[2,5,4,6] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
})",
                            config);
  EXPECT_TRUE(strided.compare.matched) << strided.compare.summary;
  EXPECT_EQ(strided.counters["host_instructions"], 0);
  EXPECT_EQ(strided.counters["macs"], 2 * 5 * 4 * 6 * (3 * 3 * 5));
  Outcome wide = RunText(R"(HloModule c
ENTRY main {
  x = s8[1,6,7,5] parameter(0)
  k = s8[3,2,5,9] parameter(1)
  ROOT c = s32[1,6,7,9] convolution(x, k), window={size=3x2 pad=1_1x0_1},
    dim_labels=b01f_01io->b01f
})",
                         config);
  EXPECT_TRUE(wide.compare.matched) << wide.compare.summary;
  EXPECT_EQ(wide.counters["host_instructions"], 0);
}

}  // namespace


// An LSTM gate's shape: two dots whose only users are elementwise computations. Their results
// are stashed row-major in the UB (segment_builder.h) and read there; once every user has read
// them their DRAM stores are erased, so DRAM sees the inputs, the weights and the outputs only.
// The stash is used where it saves DRAM time: on 64 x 64 a row of a 64-column tile is one vmov
// of 5 cycles on tpu-v1's 256 lanes, 16 per dot, against 4 KiB stored and read back at 48.6 B
// per cycle (84 cycles per transfer).
constexpr char kGateOfTwoDots[] = R"(HloModule gate
gate {
  a = s32[8,128] parameter(0)
  b = s32[8,128] parameter(1)
  s = s32[8,128] add(a, b)
  f = f32[8,128] convert(s)
  k = f32[] constant(0.001)
  kb = f32[8,128] broadcast(k), dimensions={}
  m = f32[8,128] multiply(f, kb)
  ROOT t = f32[8,128] tanh(m)
}
other {
  a = s32[8,128] parameter(0)
  ROOT n = s32[8,128] negate(a)
}
ENTRY main {
  x = s8[8,16] parameter(0)
  h = s8[8,16] parameter(1)
  w = s8[16,128] parameter(2)
  u = s8[16,128] parameter(3)
  d1 = s32[8,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = s32[8,128] dot(h, u), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[8,128] fusion(d1, d2), kind=kLoop, calls=gate
  n = s32[8,128] fusion(d1), kind=kLoop, calls=other
  ROOT out = (f32[8,128], s32[8,128]) tuple(g, n)
})";

TEST(SystolicRun, DotResultsForElementwiseUsersStayOnChip) {
  // On 64 x 64: each dot is 2 column tiles, copied row by row into the row-major stash.
  Outcome outcome = RunText(kGateOfTwoDots, ArrayConfig(64, 64));
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  // d1 has two users (g and n), d2 one: all read the stash, so neither is stored. Written:
  // g (f32) and n (s32), 8 x 128 x 4 bytes each. Read: x, h (8 x 16) and w, u (16 x 128), s8.
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 2 * 8 * 128 * 4);
  EXPECT_EQ(outcome.counters["dram_bytes_read"], 2 * 8 * 16 + 2 * 16 * 128);
}

TEST(SystolicRun, SmallDotResultsGoThroughDramWhereACopyWouldCostMore) {
  // On 8 x 8 a row of an 8-column tile is 32 bytes per 5-cycle vmov (16 per row of 128): the
  // copy would take longer than the DRAM round trip, so d1 is stored (and loaded by g and n),
  // and g runs as d2's epilogue (d2 never leaves the accumulators). Written: g, n and d1.
  Outcome outcome = RunText(kGateOfTwoDots, ArrayConfig(8, 8));
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 2 * 8 * 128 * 4 + 8 * 128 * 4);
}

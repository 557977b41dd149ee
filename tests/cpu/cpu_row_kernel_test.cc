// CPU backend: input fusions as row kernels (targets/cpu/row_kernel.h, thunk_builder_rows.cc).
// Softmax / layer-norm shaped fusions must become one row kernel (counter kernels.row-fused)
// and match the interpreter; fusions whose reduced values leave their row must not, and still
// match; hand-computed values pin the max combiner's NaN propagation. Also: results written
// in place into the returned literal (cpu_backend.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/cpu/cpu_test_util.h"
#include "tests/test_support.h"

namespace {

using cpu_tests::Counter;
using cpu_tests::ExpectMatchesInterp;

const char kCombiners[] = R"(
max_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
min_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] minimum(a, b) }
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max_bf16 { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT m = bf16[] maximum(a, b) }
add_bf16 { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }
)";

std::string Module(const std::string& name, const std::string& entry) {
  return "HloModule " + name + "\n" + kCombiners + "ENTRY e {\n" + entry + "\n}";
}

TEST(CpuRowKernel, SoftmaxHandValuesAndNaNRow) {
  auto module = testing_support::ParseAndVerify(Module("softmax_hand", R"(
  x = f32[3,2] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[3] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mb = f32[3,2] broadcast(mx), dimensions={0}
  d = f32[3,2] subtract(x, mb)
  ex = f32[3,2] exponential(d)
  zero = f32[] constant(0)
  s = f32[3] reduce(ex, zero), dimensions={1}, to_apply=add_f32
  sb = f32[3,2] broadcast(s), dimensions={0}
  ROOT r = f32[3,2] divide(ex, sb))"));
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kF32, {3, 2}));
  const double values[] = {0, std::log(3.0), NAN, 1, -1e30, 5};
  for (int64_t i = 0; i < 6; ++i) x.SetFromDouble(i, values[i]);
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x});
  // Row 0: e^0 : e^ln3 = 1 : 3. Row 1: a NaN max poisons the row. Row 2: e^(-1e30-5) = 0.
  EXPECT_NEAR(run.result.GetAsDouble(0), 0.25, 1e-6);
  EXPECT_NEAR(run.result.GetAsDouble(1), 0.75, 1e-6);
  EXPECT_TRUE(std::isnan(run.result.GetAsDouble(2)));
  EXPECT_TRUE(std::isnan(run.result.GetAsDouble(3)));
  EXPECT_EQ(run.result.GetAsDouble(4), 0.0);
  EXPECT_EQ(run.result.GetAsDouble(5), 1.0);
  EXPECT_EQ(Counter(run, "kernels.row-fused"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

TEST(CpuRowKernel, MinReductionHandValues) {
  auto module = testing_support::ParseAndVerify(Module("min_rows", R"(
  x = f32[2,5] parameter(0)
  inf = f32[] constant(inf)
  mn = f32[2] reduce(x, inf), dimensions={1}, to_apply=min_f32
  mb = f32[2,5] broadcast(mn), dimensions={0}
  ROOT r = f32[2,5] subtract(x, mb))"));
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2, 5}));
  const double values[] = {4, -2, 7, 0.5, 3, 9, 8, NAN, 1, 2};
  for (int64_t i = 0; i < 10; ++i) x.SetFromDouble(i, values[i]);
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x});
  const double row0[] = {6, 0, 9, 2.5, 5};  // x - (-2)
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(run.result.GetAsDouble(i), row0[i]) << i;
  for (int64_t i = 5; i < 10; ++i) EXPECT_TRUE(std::isnan(run.result.GetAsDouble(i))) << i;
  EXPECT_EQ(Counter(run, "kernels.row-fused"), 1);
}

// mha_block's softmax: bf16 max (the kernel's own combiner), an f32 sum, and a root reshape
// that drops the leading size-1 dim.
TEST(CpuRowKernel, Bf16SoftmaxWithSqueezedRoot) {
  const io::Tolerance bf16{2e-2, 1e-3};
  cpu_tests::CpuRun run = ExpectMatchesInterp(Module("softmax_bf16", R"(
  x = bf16[1,3,17,33] parameter(0)
  ninf = bf16[] constant(-inf)
  mx = bf16[1,3,17] reduce(x, ninf), dimensions={3}, to_apply=max_bf16
  mb = bf16[1,3,17,33] broadcast(mx), dimensions={0,1,2}
  d = bf16[1,3,17,33] subtract(x, mb)
  ex = bf16[1,3,17,33] exponential(d)
  ef = f32[1,3,17,33] convert(ex)
  zero = f32[] constant(0)
  s = f32[1,3,17] reduce(ef, zero), dimensions={3}, to_apply=add_f32
  s1 = f32[1,3,17,1] reshape(s)
  c1 = bf16[1,3,17,1] convert(s1)
  sb = bf16[1,3,17] reshape(c1)
  bb = bf16[1,3,17,33] broadcast(sb), dimensions={0,1,2}
  q = bf16[1,3,17,33] divide(ex, bb)
  ROOT r = bf16[3,17,33] reshape(q))"), 5, &bf16);
  EXPECT_EQ(Counter(run, "kernels.row-fused"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

// Layer norm: the variance reads the mean of the same row (a reduction feeding a reduction).
TEST(CpuRowKernel, LayerNormTwoDependentReductions) {
  const io::Tolerance tolerance{1e-4, 1e-5};
  cpu_tests::CpuRun run = ExpectMatchesInterp(Module("layer_norm", R"(
  x = f32[2,9,31] parameter(0)
  zero = f32[] constant(0)
  k = f32[] constant(31)
  n = f32[2,9] broadcast(k), dimensions={}
  sum = f32[2,9] reduce(x, zero), dimensions={2}, to_apply=add_f32
  mean = f32[2,9] divide(sum, n)
  mb = f32[2,9,31] broadcast(mean), dimensions={0,1}
  c = f32[2,9,31] subtract(x, mb)
  c2 = f32[2,9,31] multiply(c, c)
  sq = f32[2,9] reduce(c2, zero), dimensions={2}, to_apply=add_f32
  var = f32[2,9] divide(sq, n)
  e = f32[] constant(1e-5)
  eps = f32[2,9] broadcast(e), dimensions={}
  ve = f32[2,9] add(var, eps)
  inv = f32[2,9] rsqrt(ve)
  ib = f32[2,9,31] broadcast(inv), dimensions={0,1}
  ROOT r = f32[2,9,31] multiply(c, ib))"), 7, &tolerance);
  EXPECT_EQ(Counter(run, "kernels.row-fused"), 1);
}

// A row of two minor dims (reduce over {1,2}).
TEST(CpuRowKernel, TwoColumnDims) {
  const io::Tolerance tolerance{1e-5, 1e-6};
  cpu_tests::CpuRun run = ExpectMatchesInterp(Module("two_dims", R"(
  x = f32[4,5,7] parameter(0)
  zero = f32[] constant(0)
  s = f32[4] reduce(x, zero), dimensions={1,2}, to_apply=add_f32
  sb = f32[4,5,7] broadcast(s), dimensions={0}
  ROOT r = f32[4,5,7] divide(x, sb))"), 11, &tolerance);
  EXPECT_EQ(Counter(run, "kernels.row-fused"), 1);
}

// The reduced value is broadcast along the other dim: element (i, j) reads s[j], a different
// row's sum. Never a row kernel (today the fusion pass already keeps the reduce apart; were it
// fused, PlanRows rejects the dim map) and still correct.
TEST(CpuRowKernel, ReducedValueCrossingRowsIsNotRowFused) {
  const io::Tolerance tolerance{1e-5, 1e-6};
  cpu_tests::CpuRun run = ExpectMatchesInterp(Module("crossing", R"(
  x = f32[8,8] parameter(0)
  zero = f32[] constant(0)
  s = f32[8] reduce(x, zero), dimensions={1}, to_apply=add_f32
  sb = f32[8,8] broadcast(s), dimensions={1}
  ROOT r = f32[8,8] multiply(x, sb))"), 13, &tolerance);
  EXPECT_EQ(Counter(run, "kernels.row-fused"), 0);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

// Reductions over leading dimensions (a bias gradient: the sum over the batch) fold the input
// row by row (thunk_builder_columns.cc) and combine each element's inputs in the interpreter's
// order and type: bit-identical results (tolerance 0), fused with a relu-backward producer, in
// bf16 (rounded after every add), over two leading dims with two kept ones, and unfused; a
// reduction over a minor dimension is not one of them (a row reduction, summed in lanes).
TEST(CpuColumnReduction, LeadingDimensionReductionsMatchTheInterpreterBitForBit) {
  const io::Tolerance exact{0, 0};
  const io::Tolerance row_tolerance{1e-5, 1e-6};  // other sums are vectorized (reassociated)
  cpu_tests::CpuRun relu_grad = ExpectMatchesInterp(Module("bias_grad", R"(
  x = f32[300,70] parameter(0)
  dy = f32[300,70] parameter(1)
  zero = f32[] constant(0)
  zeros = f32[300,70] broadcast(zero), dimensions={}
  positive = pred[300,70] compare(x, zeros), direction=GT
  g = f32[300,70] select(positive, dy, zeros)
  s = f32[70] reduce(g, zero), dimensions={0}, to_apply=add_f32
  ROOT r = f32[1,70] reshape(s))"), 21, &exact);
  EXPECT_EQ(Counter(relu_grad, "kernels.column-reduce"), 1);
  cpu_tests::CpuRun bf16 = ExpectMatchesInterp(Module("bf16_columns", R"(
  x = bf16[6,50,3,33] parameter(0)
  zero = bf16[] constant(0)
  ROOT s = bf16[3,33] reduce(x, zero), dimensions={0,1}, to_apply=add_bf16)"), 22, &exact);
  EXPECT_EQ(Counter(bf16, "kernels.column-reduce"), 1);
  cpu_tests::CpuRun max = ExpectMatchesInterp(Module("max_columns", R"(
  x = f32[129,17] parameter(0)
  low = f32[] constant(-inf)
  ROOT m = f32[17] reduce(x, low), dimensions={0}, to_apply=max_f32)"), 23, &exact);
  EXPECT_EQ(Counter(max, "kernels.column-reduce"), 1);
  // The corpus's mean over the middle axis of [1, 4096, 1024]: a kept size-1 dim leads.
  cpu_tests::CpuRun middle = ExpectMatchesInterp(Module("middle_axis", R"(
  x = bf16[1,300,40] parameter(0)
  zero = bf16[] constant(0)
  ROOT s = bf16[1,40] reduce(x, zero), dimensions={1}, to_apply=add_bf16)"), 25, &exact);
  EXPECT_EQ(Counter(middle, "kernels.column-reduce"), 1);
  // A kept dim of size 3 before the folded one: not rows of the output, the general kernel
  // (which sums in lanes).
  cpu_tests::CpuRun strided = ExpectMatchesInterp(Module("strided_axis", R"(
  x = f32[3,50,8] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[3,8] reduce(x, zero), dimensions={1}, to_apply=add_f32)"), 26, &row_tolerance);
  EXPECT_EQ(Counter(strided, "kernels.column-reduce"), 0);
  cpu_tests::CpuRun rows = ExpectMatchesInterp(Module("row_sum", R"(
  x = f32[40,30] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[40] reduce(x, zero), dimensions={1}, to_apply=add_f32)"), 24, &row_tolerance);
  EXPECT_EQ(Counter(rows, "kernels.column-reduce"), 0);
}

// The root is written straight into the returned literal: a second run must not touch the
// first result, and a constant root (compile-time contents) must come back intact every time.
TEST(CpuResultInPlace, RunsReturnIndependentResults) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule twice
ENTRY e {
  x = f32[4] parameter(0)
  two = f32[] constant(2)
  b = f32[4] broadcast(two), dimensions={}
  ROOT r = f32[4] multiply(x, b)
})");
  std::unique_ptr<targets::Executable> executable = cpu_tests::Cpu().Compile(*module);
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4}));
  for (int64_t i = 0; i < 4; ++i) x.SetFromDouble(i, double(i) + 0.5);
  hlo::Literal first = executable->Run({&x, 1});
  for (int64_t i = 0; i < 4; ++i) x.SetFromDouble(i, -10.0 * double(i));
  hlo::Literal second = executable->Run({&x, 1});
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(first.GetAsDouble(i), 2.0 * (double(i) + 0.5)) << i;
    EXPECT_EQ(second.GetAsDouble(i), -20.0 * double(i)) << i;
  }

  auto constant = testing_support::ParseAndVerify(R"(
HloModule constant_root
ENTRY e {
  x = f32[3] parameter(0)
  ROOT c = f32[3] constant({1.5, -2, 7})
})");
  executable = cpu_tests::Cpu().Compile(*constant);
  hlo::Literal y(hlo::Shape::Array(hlo::PrimitiveType::kF32, {3}));
  for (int run = 0; run < 2; ++run) {
    hlo::Literal result = executable->Run({&y, 1});
    EXPECT_EQ(result.GetAsDouble(0), 1.5);
    EXPECT_EQ(result.GetAsDouble(1), -2.0);
    EXPECT_EQ(result.GetAsDouble(2), 7.0);
  }
}

TEST(CpuResultInPlace, PassedThroughParametersAreCopiesOfTheInputs) {
  // A training step returns its state: the tuple's parameter leaves are copies of the caller's
  // literals (cpu_backend.cc ReadResult), sharing their bytes; the computed leaf is read from
  // its buffer.
  auto module = testing_support::ParseAndVerify(R"(
HloModule state
ENTRY e {
  w = f32[5] parameter(0)
  x = f32[5] parameter(1)
  y = f32[5] multiply(w, x)
  ROOT t = (f32[5], f32[5], f32[5]) tuple(w, y, x)
})");
  std::unique_ptr<targets::Executable> executable = cpu_tests::Cpu().Compile(*module);
  std::vector<hlo::Literal> inputs;
  for (int p = 0; p < 2; ++p) {
    inputs.emplace_back(hlo::Shape::Array(hlo::PrimitiveType::kF32, {5}));
    for (int64_t i = 0; i < 5; ++i) inputs.back().SetFromDouble(i, double(i + 1) * (p + 2));
  }
  hlo::Literal result = executable->Run(inputs);
  ASSERT_EQ(result.elements().size(), 3u);
  EXPECT_TRUE(result.elements()[0].BitwiseEqual(inputs[0]));
  EXPECT_TRUE(result.elements()[2].BitwiseEqual(inputs[1]));
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(result.elements()[1].GetAsDouble(i), double(i + 1) * 2 * double(i + 1) * 3) << i;
  // A copy sharing the caller's bytes (no memory of its own: a model's weights are not held
  // twice), yet changing the input afterwards leaves the result alone.
  EXPECT_TRUE(result.elements()[0].SharesBytesWith(inputs[0]));
  inputs[0].SetFromDouble(0, -1.0);
  EXPECT_EQ(result.elements()[0].GetAsDouble(0), 2.0);
}

}  // namespace

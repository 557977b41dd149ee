// CPU backend: dot and convolution through gemm.h (plain, batched, bf16, fused epilogues) and
// the forms it leaves to the fallback, all against the interpreter.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tests/cpu/cpu_test_util.h"
#include "tests/test_support.h"

namespace {

using cpu_tests::Counter;
using cpu_tests::ExpectMatchesInterp;

const io::Tolerance kF32Gemm{1e-4, 1e-5};

TEST(CpuContraction, DotHandValues) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule dot
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  hlo::Literal a(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2, 3}));
  hlo::Literal b(hlo::Shape::Array(hlo::PrimitiveType::kF32, {3, 2}));
  for (int64_t i = 0; i < 6; ++i) {
    a.SetFromDouble(i, double(i + 1));  // [[1,2,3],[4,5,6]]
    b.SetFromDouble(i, double(6 - i));  // [[6,5],[4,3],[2,1]]
  }
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {a, b});
  // [[1*6+2*4+3*2, 1*5+2*3+3*1], [4*6+5*4+6*2, 4*5+5*3+6*1]]
  EXPECT_EQ(run.result.GetAsDouble(0), 20);
  EXPECT_EQ(run.result.GetAsDouble(1), 14);
  EXPECT_EQ(run.result.GetAsDouble(2), 56);
  EXPECT_EQ(run.result.GetAsDouble(3), 41);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

TEST(CpuContraction, BatchedDotIsOneGemm) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule batched
ENTRY e {
  a = f32[3,5,7] parameter(0)
  b = f32[3,9,7] parameter(1)
  ROOT d = f32[3,5,9] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
})", 2, &kF32Gemm);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
}

TEST(CpuContraction, Bf16Dot) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule bf16dot
ENTRY e {
  a = bf16[2,8,16] parameter(0)
  b = bf16[2,16,8] parameter(1)
  ROOT d = bf16[2,8,8] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})", 4);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
}

TEST(CpuContraction, IntegerDotFallsBackCorrectly) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule idot
ENTRY e {
  a = s32[3,4] parameter(0)
  b = s32[4,2] parameter(1)
  ROOT d = s32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", 5);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 0);
}

// f64 dots, which the GEMM does not take (and dot-expander leaves alone), are generated loop
// nests per element (elemental_dot.cc), not evaluator fallbacks: the interpreter's products,
// summed in an order the backend may reassociate as in every generated reduction.
TEST(CpuContraction, F64DotsAreGeneratedLoops) {
  const io::Tolerance f64{1e-12, 1e-13};
  for (const char* text : {R"(
HloModule f64
ENTRY e {
  a = f64[26,133] parameter(0)
  b = f64[133] parameter(1)
  ROOT d = f64[26] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", R"(
HloModule f64_two_contracting
ENTRY e {
  a = f64[3,4,5,6] parameter(0)
  b = f64[6,7,4,3] parameter(1)
  ROOT d = f64[3,5,7] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1,3}, rhs_batch_dims={3}, rhs_contracting_dims={2,0}
})", R"(
HloModule f64_to_f32
ENTRY e {
  a = f64[9,40] parameter(0)
  b = f64[40,5] parameter(1)
  ROOT d = f32[9,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"}) {
    cpu_tests::CpuRun run = ExpectMatchesInterp(text, 5, &f64);
    EXPECT_EQ(Counter(run, "thunks.gemm"), 0) << text;
    EXPECT_EQ(Counter(run, "thunks.dot-loop"), 1) << text;
    EXPECT_EQ(Counter(run, "thunks.fallback"), 0) << text;
  }
}

// Random sizes (1, odd, and beyond one GEMM block), batched or not, f32 and bf16.
TEST(CpuContraction, RandomDotShapesMatchInterpreter) {
  std::mt19937 rng(99);
  const int64_t sizes[] = {1, 3, 17, 64, 70, 129};
  for (int trial = 0; trial < 8; ++trial) {
    const int64_t m = sizes[rng() % 6], k = sizes[rng() % 6], n = sizes[rng() % 6];
    const bool batched = trial % 2 == 1;
    const char* type = trial % 4 == 3 ? "bf16" : "f32";
    auto dims = [&](int64_t a, int64_t b) {
      return std::string(type) + "[" + (batched ? "2," : "") + std::to_string(a) + "," +
             std::to_string(b) + "]";
    };
    std::string batch = batched ? "lhs_batch_dims={0}, rhs_batch_dims={0}, " : "";
    std::string contract = batched ? "lhs_contracting_dims={2}, rhs_contracting_dims={1}"
                                   : "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
    std::string text = "HloModule rdot\nENTRY e {\n  a = " + dims(m, k) + " parameter(0)\n  b = " +
                       dims(k, n) + " parameter(1)\n  ROOT d = " + dims(m, n) + " dot(a, b), " +
                       batch + contract + "\n}\n";
    SCOPED_TRACE(text);
    // bf16 results round to 8 bits; f32 sums of k products differ by reassociation only.
    const io::Tolerance tolerance = std::string(type) == "bf16" ? io::Tolerance{2e-2, 2e-2}
                                                                 : io::Tolerance{1e-4, 1e-4};
    cpu_tests::CpuRun run = ExpectMatchesInterp(text, static_cast<uint64_t>(trial), &tolerance);
    EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
  }
}

// Random windows: strides, padding, dilations and feature groups.
TEST(CpuContraction, RandomConvolutionsMatchInterpreter) {
  struct Case { int64_t h, w, c, kh, kw, o, stride, pad, lhs_dilate, rhs_dilate, groups; };
  const Case cases[] = {{7, 5, 3, 3, 3, 4, 1, 1, 1, 1, 1},   {9, 9, 4, 3, 1, 6, 2, 0, 1, 1, 2},
                        {6, 6, 2, 2, 2, 5, 1, 2, 2, 1, 1},   {8, 7, 6, 3, 3, 6, 1, 2, 1, 2, 6},
                        {1, 1, 16, 1, 1, 33, 1, 0, 1, 1, 1}, {5, 11, 8, 5, 3, 4, 3, 1, 1, 1, 4}};
  uint64_t seed = 20;
  for (const Case& t : cases) {
    auto out = [&](int64_t in, int64_t k) {
      const int64_t dilated_in = (in - 1) * t.lhs_dilate + 1 + 2 * t.pad;
      const int64_t dilated_k = (k - 1) * t.rhs_dilate + 1;
      return (dilated_in - dilated_k) / t.stride + 1;
    };
    const int64_t oh = out(t.h, t.kh), ow = out(t.w, t.kw);
    auto s = [](int64_t v) { return std::to_string(v); };
    std::string text = "HloModule rconv\nENTRY e {\n  x = f32[2," + s(t.h) + "," + s(t.w) + "," +
                       s(t.c) + "] parameter(0)\n  k = f32[" + s(t.kh) + "," + s(t.kw) + "," +
                       s(t.c / t.groups) + "," + s(t.o) + "] parameter(1)\n  ROOT y = f32[2," +
                       s(oh) + "," + s(ow) + "," + s(t.o) + "] convolution(x, k), window={size=" +
                       s(t.kh) + "x" + s(t.kw) + " stride=" + s(t.stride) + "x" + s(t.stride) +
                       " pad=" + s(t.pad) + "_" + s(t.pad) + "x" + s(t.pad) + "_" + s(t.pad) +
                       " lhs_dilate=" + s(t.lhs_dilate) + "x" + s(t.lhs_dilate) + " rhs_dilate=" +
                       s(t.rhs_dilate) + "x" + s(t.rhs_dilate) +
                       "}, dim_labels=b01f_01io->b01f, feature_group_count=" + s(t.groups) + "\n}\n";
    SCOPED_TRACE(text);
    cpu_tests::CpuRun run = ExpectMatchesInterp(text, seed++, &kF32Gemm);
    EXPECT_EQ(Counter(run, "thunks.conv"), 1);
  }
}

TEST(CpuContraction, ConvolutionStridedPadded) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule conv
ENTRY e {
  x = f32[2,9,9,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  ROOT y = f32[2,5,5,4] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})", 6, &kF32Gemm);
  EXPECT_EQ(Counter(run, "thunks.conv"), 1);
}

TEST(CpuContraction, DotWithBiasReluEpilogue) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule dense
ENTRY e {
  x = f32[9,20] parameter(0)
  w = f32[20,13] parameter(1)
  bias = f32[13] parameter(2)
  d = f32[9,13] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[9,13] broadcast(bias), dimensions={1}
  a = f32[9,13] add(d, bb)
  zero = f32[] constant(0)
  zb = f32[9,13] broadcast(zero), dimensions={}
  ROOT r = f32[9,13] maximum(a, zb)
})", 9, &kF32Gemm);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
  EXPECT_EQ(Counter(run, "epilogues.per-block"), 1);  // bias + relu ran inside the GEMM
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0) << run.artifacts["fallbacks.txt"];
}

TEST(CpuContraction, ConvolutionWithBiasEpilogueOnLargeBlocks) {
  // Big enough for several GEMM blocks in both directions of the (N*OH*OW) x OC view.
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule convbias
ENTRY e {
  x = f32[2,19,19,24] parameter(0)
  w = f32[3,3,24,70] parameter(1)
  bias = f32[70] parameter(2)
  y = f32[2,19,19,70] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,19,19,70] broadcast(bias), dimensions={3}
  a = f32[2,19,19,70] add(y, bb)
  zero = f32[] constant(0)
  zb = f32[2,19,19,70] broadcast(zero), dimensions={}
  ROOT r = f32[2,19,19,70] maximum(a, zb)
})", 10, &kF32Gemm);
  EXPECT_EQ(Counter(run, "thunks.conv"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0) << run.artifacts["fallbacks.txt"];
}

TEST(CpuContraction, Bf16AndBatchedDotsRunTheirEpiloguePerBlock) {
  // mha_block's scaled QK^T: a batched bf16 dot whose result is rounded block by block and
  // scaled (through a reshape that adds a leading 1) while the block is in cache. Sizes give
  // several blocks per batch; one random and one tiny-batch form (DLRM's interaction).
  const char* modules[] = {R"(
HloModule qk
ENTRY e {
  q = bf16[5,130,64] parameter(0)
  k = bf16[5,64,150] parameter(1)
  d = bf16[5,130,150] dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  r = bf16[1,5,130,150] reshape(d)
  c = bf16[] constant(0.125)
  cb = bf16[1,5,130,150] broadcast(c), dimensions={}
  ROOT s = bf16[1,5,130,150] multiply(r, cb)
})",
                           R"(
HloModule tiny
ENTRY e {
  a = f32[300,6,8] parameter(0)
  b = f32[300,8,6] parameter(1)
  d = f32[300,6,6] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  one = f32[] constant(1)
  ob = f32[300,6,6] broadcast(one), dimensions={}
  ROOT s = f32[300,6,6] add(d, ob)
})"};
  for (const char* text : modules) {
    SCOPED_TRACE(text);
    cpu_tests::CpuRun run = ExpectMatchesInterp(text, 4);
    EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
    EXPECT_EQ(Counter(run, "epilogues.per-block"), 1);
    EXPECT_EQ(Counter(run, "thunks.fallback"), 0) << run.artifacts["fallbacks.txt"];
  }
}

// A weight stored [n, k] (rhs contracting its last dimension: `x @ w.T`, an embedding read as
// logits) is read by the GEMM through the transpose the canonicalizer puts before the dot: no
// transpose kernel runs. Few rows (<= 16) take the row-streaming path in f32 and bf16 (a
// decoder's logits), more rows the blocked GEMM with a transposed B; a batched dot too.
TEST(CpuContraction, WeightsStoredByOutputRowAreReadThroughTheirTranspose) {
  struct Case { const char* type; int64_t m, k, n; };
  const Case cases[] = {{"f32", 1, 37, 300}, {"bf16", 1, 64, 520}, {"bf16", 11, 40, 33},
                        {"f32", 16, 16, 5},  {"f32", 17, 23, 70},  {"bf16", 40, 9, 300}};
  uint64_t seed = 40;
  for (const Case& c : cases) {
    const std::string t = c.type, m = std::to_string(c.m), k = std::to_string(c.k),
                      n = std::to_string(c.n);
    const std::string text = "HloModule logits\nENTRY e {\n  x = " + t + "[" + m + "," + k +
                             "] parameter(0)\n  w = " + t + "[" + n + "," + k +
                             "] parameter(1)\n  ROOT d = " + t + "[" + m + "," + n +
                             "] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n";
    SCOPED_TRACE(text);
    const io::Tolerance tolerance =
        t == "bf16" ? io::Tolerance{2e-2, 2e-2} : io::Tolerance{1e-4, 1e-4};
    cpu_tests::CpuRun run = ExpectMatchesInterp(text, seed++, &tolerance);
    EXPECT_EQ(Counter(run, "transposes.read-by-gemm"), 1);
    EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
    EXPECT_EQ(Counter(run, "thunks.kernel"), 0);  // no transpose kernel
  }
  cpu_tests::CpuRun batched = ExpectMatchesInterp(R"(
HloModule batched_nk
ENTRY e {
  a = f32[3,20,7] parameter(0)
  b = f32[3,9,7] parameter(1)
  ROOT d = f32[3,20,9] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
})", 46, &kF32Gemm);
  EXPECT_EQ(Counter(batched, "transposes.read-by-gemm"), 1);
  EXPECT_EQ(Counter(batched, "thunks.kernel"), 0);
}

// gemma3's MLP weights [2, 6912, 1152] contracted on their last dimension: the canonicalizer
// reshapes them to [13824, 1152] and transposes that, loop fusion fuses the two, and the GEMM
// still reads the parameter in place.
TEST(CpuContraction, StackedWeightsAreReadThroughTheirReshapeAndTranspose) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule mlp
ENTRY e {
  x = bf16[11,40] parameter(0)
  w = bf16[2,24,40] parameter(1)
  ROOT d = bf16[11,2,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={2}
})", 47, nullptr);
  EXPECT_EQ(Counter(run, "transposes.read-by-gemm"), 1);
  EXPECT_EQ(Counter(run, "thunks.kernel"), 0);
}

// A transposed weight that something else reads too is materialized as before.
TEST(CpuContraction, TransposeWithAnotherReaderIsMaterialized) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule shared
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[6,8] parameter(1)
  t = f32[8,6] transpose(w), dimensions={1,0}
  d = f32[4,6] dot(x, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[4,6], f32[8,6]) tuple(d, t)
})", 48, &kF32Gemm);
  EXPECT_EQ(Counter(run, "transposes.read-by-gemm"), 0);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
}

// A weight gradient x^T · dy: the activation x [batch, in] is the dot's lhs transposed. The
// transpose stays out of the relu-backward fusion (the CPU target's placement) and the GEMM
// reads x with trans_a; the fused producer on the other side still runs as a kernel.
TEST(CpuContraction, ActivationReadTransposedByAWeightGradient) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule weight_grad
ENTRY e {
  x = f32[64,24] parameter(0)
  y = f32[64,40] parameter(1)
  dy = f32[64,40] parameter(2)
  zero = f32[] constant(0)
  zeros = f32[64,40] broadcast(zero), dimensions={}
  positive = pred[64,40] compare(y, zeros), direction=GT
  g = f32[64,40] select(positive, dy, zeros)
  gt = f32[40,64] transpose(g), dimensions={1,0}
  ROOT dw = f32[40,24] dot(gt, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", 49, &kF32Gemm);
  EXPECT_EQ(Counter(run, "transposes.read-by-gemm"), 1);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
  EXPECT_EQ(Counter(run, "thunks.kernel"), 1);  // the select, without the transpose
}

}  // namespace

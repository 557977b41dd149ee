// Interpreter runs of real kernels from the XLA corpus with random inputs (seed 0), each checked
// against a reference computed here, in double, straight from the input literals — written from
// the operation's math, not from the module's instruction sequence.
//
// Tolerances come from where the module rounds: a bf16 result rounded once is within half a bf16
// ulp (2^-8 relative, we allow 2^-7); f32 accumulation over n terms adds a few f32 ulps of the
// running magnitude. Whole-model runs (DLRM, ResNet-50) are in corpus_run_models_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <vector>

#include "hlo/literal.h"
#include "tests/models/corpus_run.h"
#include "tests/models/model_test_util.h"

namespace {

using model_tests::CorpusRun;
using model_tests::RunCorpusModel;
using model_tests::ToDoubles;

constexpr double kBf16Rtol = 1.0 / 128;  // one bf16 ulp relative to the value

// Checks actual[i] against want(i) within atol + rtol*|want|; reports the first failures only.
void ExpectClose(const std::vector<double>& actual, const std::function<double(size_t)>& want,
                 double rtol, double atol, const char* what) {
  int reported = 0;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double expected = want(i);
    double error = std::fabs(actual[i] - expected);
    worst = std::max(worst, error);
    if (!(error <= atol + rtol * std::fabs(expected)) && reported++ < 5) {
      ADD_FAILURE() << what << "[" << i << "] = " << actual[i] << ", expected " << expected;
    }
  }
  std::cout << "[ check    ] " << what << ": worst |error| " << worst << " over " << actual.size()
            << " elements\n";
}

// mean over the last axis of bf16[1,4096,1024], accumulated in f32, rounded to bf16.
TEST(CorpusRun, MeanAxisMatchesMeanInDouble) {
  CorpusRun run = RunCorpusModel("mean_axis_1x4096x1024_bf16");
  ASSERT_EQ(run.outputs.size(), 1u);
  std::vector<double> x = ToDoubles(run.inputs[0]);
  std::vector<double> y = ToDoubles(run.outputs[0].literal);
  ASSERT_EQ(y.size(), 4096u);
  ExpectClose(y, [&](size_t row) {
    double sum = 0;
    for (size_t j = 0; j < 1024; ++j) sum += x[row * 1024 + j];
    return sum / 1024;
  }, kBf16Rtol, 1e-6, "mean");
}

TEST(CorpusRun, SumAxisMatchesSumInDouble) {
  CorpusRun run = RunCorpusModel("sum_axis_1x4096x1024_bf16");
  ASSERT_EQ(run.outputs.size(), 1u);
  std::vector<double> x = ToDoubles(run.inputs[0]);
  std::vector<double> y = ToDoubles(run.outputs[0].literal);
  ASSERT_EQ(y.size(), 4096u);
  // |sum| ~ 32; f32 accumulation of 1024 terms stays well under 2e-3.
  ExpectClose(y, [&](size_t row) {
    double sum = 0;
    for (size_t j = 0; j < 1024; ++j) sum += x[row * 1024 + j];
    return sum;
  }, kBf16Rtol, 2e-3, "sum");
}

// (x - mean) / sqrt(var + 1e-5) per row of bf16[1,4096,768]; the module has no scale/offset.
// Intermediates are stored in bf16 (x - mean, its square, sqrt), so elements carry ~1% error;
// an emulation of those roundings in numpy gave a worst error of 0.039 at |y| ~ 4.
TEST(CorpusRun, LayerNormRowsAreNormalized) {
  CorpusRun run = RunCorpusModel("layer_norm_1x4096x768_bf16");
  ASSERT_EQ(run.outputs.size(), 1u);
  constexpr size_t kRows = 4096, kCols = 768;
  std::vector<double> x = ToDoubles(run.inputs[0]);
  std::vector<double> y = ToDoubles(run.outputs[0].literal);
  ASSERT_EQ(y.size(), kRows * kCols);

  std::vector<double> reference(y.size());
  double worst_mean = 0, worst_variance = 0;
  for (size_t r = 0; r < kRows; ++r) {
    const double* row = &x[r * kCols];
    double mu = 0, var = 0, out_mean = 0, out_var = 0;
    for (size_t j = 0; j < kCols; ++j) mu += row[j];
    mu /= kCols;
    for (size_t j = 0; j < kCols; ++j) var += (row[j] - mu) * (row[j] - mu);
    var /= kCols;
    for (size_t j = 0; j < kCols; ++j) {
      reference[r * kCols + j] = (row[j] - mu) / std::sqrt(var + 1e-5);
      out_mean += y[r * kCols + j];
    }
    out_mean /= kCols;
    for (size_t j = 0; j < kCols; ++j) {
      out_var += (y[r * kCols + j] - out_mean) * (y[r * kCols + j] - out_mean);
    }
    out_var /= kCols;
    worst_mean = std::max(worst_mean, std::fabs(out_mean));
    worst_variance = std::max(worst_variance, std::fabs(out_var - 1));
  }
  EXPECT_LT(worst_mean, 0.01) << "some output row's mean is not ~0";
  EXPECT_LT(worst_variance, 0.03) << "some output row's variance is not ~1";
  ExpectClose(y, [&](size_t i) { return reference[i]; }, 0.02, 0.02, "layer_norm");
}

// softmax(q k^T / 8) v per head, bf16[1,12,128,64] each. Scores, probabilities and the result
// are stored in bf16; an emulation of those roundings differed from double by at most 0.008.
TEST(CorpusRun, MhaBlockMatchesAttentionInDouble) {
  CorpusRun run = RunCorpusModel("mha_block_1x12x128x64_bf16");
  ASSERT_EQ(run.outputs.size(), 1u);
  constexpr size_t kHeads = 12, kSeq = 128, kDim = 64;
  std::vector<double> q = ToDoubles(run.inputs[0]), k = ToDoubles(run.inputs[1]),
                      v = ToDoubles(run.inputs[2]);
  std::vector<double> reference(kHeads * kSeq * kDim, 0.0);
  std::vector<double> p(kSeq);
  for (size_t h = 0; h < kHeads; ++h) {
    const size_t base = h * kSeq * kDim;
    for (size_t i = 0; i < kSeq; ++i) {
      double max_score = -INFINITY, total = 0;
      for (size_t j = 0; j < kSeq; ++j) {
        double s = 0;
        for (size_t d = 0; d < kDim; ++d) s += q[base + i * kDim + d] * k[base + j * kDim + d];
        p[j] = s / std::sqrt(double(kDim));
        max_score = std::max(max_score, p[j]);
      }
      for (size_t j = 0; j < kSeq; ++j) total += (p[j] = std::exp(p[j] - max_score));
      for (size_t j = 0; j < kSeq; ++j) {
        for (size_t d = 0; d < kDim; ++d) {
          reference[base + i * kDim + d] += p[j] / total * v[base + j * kDim + d];
        }
      }
    }
  }
  ExpectClose(ToDoubles(run.outputs[0].literal), [&](size_t i) { return reference[i]; }, 0.03,
              0.03, "mha");
}

// Depthwise 3x3 convolution, padding 1, NCHW, every weight the bf16 constant 0.01001: each
// output is that weight times the sum of the 3x3 neighbourhood of its own channel.
TEST(CorpusRun, DepthwiseConvIsScaledNeighbourhoodSum) {
  CorpusRun run = RunCorpusModel("depthwise_conv_3x3_1x256x56x56_bf16");
  ASSERT_EQ(run.outputs.size(), 1u);
  constexpr int64_t kSize = 56;  // 256 channels of 56x56
  const double weight = hlo::BF16ToFloat(hlo::FloatToBF16(0.01001f));
  std::vector<double> x = ToDoubles(run.inputs[0]);
  auto at = [&](int64_t c, int64_t i, int64_t j) {
    bool inside = i >= 0 && i < kSize && j >= 0 && j < kSize;
    return inside ? x[size_t((c * kSize + i) * kSize + j)] : 0.0;
  };
  ExpectClose(ToDoubles(run.outputs[0].literal), [&](size_t linear) {
    int64_t c = int64_t(linear) / (kSize * kSize), i = int64_t(linear) / kSize % kSize,
            j = int64_t(linear) % kSize;
    double sum = 0;
    for (int64_t di = -1; di <= 1; ++di) {
      for (int64_t dj = -1; dj <= 1; ++dj) sum += at(c, i + di, j + dj);
    }
    return weight * sum;
  }, kBf16Rtol, 1e-6, "depthwise_conv");
}

// sum_j (p0 p1 + p0 p2 + p0 p3 + p0 p4)[i, j], f32[512,512] each. Computed the other way round:
// out[i] = sum_k p0[i,k] * s[k] with s[k] = sum over m, j of pm[k,j]. The allowance is 1e-7 of
// the sum of |terms| (typical f32 accumulation error here is ~1e-3 on values ~1e3).
TEST(CorpusRun, ParallelDotsMatchRowSumsOfProducts) {
  CorpusRun run = RunCorpusModel("xnn.parallel_dots.optimized");
  ASSERT_EQ(run.outputs.size(), 1u);
  constexpr size_t kN = 512;
  std::vector<double> p0 = ToDoubles(run.inputs[0]);
  std::vector<double> row_sum(kN, 0.0), row_abs_sum(kN, 0.0);
  for (size_t m = 1; m <= 4; ++m) {
    std::vector<double> pm = ToDoubles(run.inputs[m]);
    for (size_t k = 0; k < kN; ++k) {
      for (size_t j = 0; j < kN; ++j) {
        row_sum[k] += pm[k * kN + j];
        row_abs_sum[k] += std::fabs(pm[k * kN + j]);
      }
    }
  }
  std::vector<double> y = ToDoubles(run.outputs[0].literal);
  ASSERT_EQ(y.size(), kN);
  double worst = 0, worst_allowance = 0;
  for (size_t i = 0; i < kN; ++i) {
    double expected = 0, magnitude = 0;
    for (size_t k = 0; k < kN; ++k) {
      expected += p0[i * kN + k] * row_sum[k];
      magnitude += std::fabs(p0[i * kN + k]) * row_abs_sum[k];
    }
    ASSERT_NEAR(y[i], expected, 1e-7 * magnitude) << "out0[" << i << "]";
    if (std::fabs(y[i] - expected) > worst) {
      worst = std::fabs(y[i] - expected);
      worst_allowance = 1e-7 * magnitude;
    }
  }
  std::cout << "[ check    ] parallel_dots: worst |error| " << worst << " (allowed there "
            << worst_allowance << ")\n";
}

// The 10 largest of bf16[1,50000], in descending order: exact (topk only selects).
TEST(CorpusRun, TopKSelectsTheLargestValues) {
  CorpusRun run = RunCorpusModel("topk_logits_k10_1x50000_bf16");
  ASSERT_EQ(run.outputs.size(), 1u);
  std::vector<double> x = ToDoubles(run.inputs[0]);
  std::partial_sort(x.begin(), x.begin() + 10, x.end(), std::greater<double>());
  EXPECT_EQ(ToDoubles(run.outputs[0].literal), std::vector<double>(x.begin(), x.begin() + 10));
}

// 64 windows of 32 rows of bf16[1,2048,768] at the given offsets (negative offsets count from
// the end; starts are clamped so the window stays inside), stacked: exact copies.
TEST(CorpusRun, DynamicSliceLoopCopiesTheRequestedWindows) {
  CorpusRun run = RunCorpusModel("dynamic_slice_loop_1x2048x768_bf16");
  ASSERT_EQ(run.outputs.size(), 1u);
  constexpr int64_t kRows = 2048, kCols = 768, kWindow = 32, kWindows = 64;
  std::vector<double> x = ToDoubles(run.inputs[0]);
  std::vector<double> y = ToDoubles(run.outputs[0].literal);
  ASSERT_EQ(y.size(), size_t(kWindows * kWindow * kCols));
  int64_t mismatches = 0;
  for (int64_t w = 0; w < kWindows; ++w) {
    int64_t offset = run.inputs[1].GetAsInt64(w);
    if (offset < 0) offset += kRows;
    int64_t start = std::clamp<int64_t>(offset, 0, kRows - kWindow);
    for (int64_t r = 0; r < kWindow; ++r) {
      for (int64_t c = 0; c < kCols; ++c) {
        double want = x[size_t((start + r) * kCols + c)];
        double got = y[size_t((w * kWindow + r) * kCols + c)];
        if (want != got && mismatches++ < 5) {
          ADD_FAILURE() << "window " << w << " (offset " << run.inputs[1].GetAsInt64(w)
                        << ") row " << r << " col " << c << ": " << got << " != " << want;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// A corpus file that does not exist is an hlo::Error naming it, not a crash.
TEST(CorpusRun, MissingCorpusFileIsAnError) {
  try {
    RunCorpusModel("no_such_corpus_model");
    FAIL() << "a missing corpus file loaded";
  } catch (const hlo::Error& error) {
    std::string located = error.location().file ? *error.location().file : "";
    EXPECT_TRUE(located.find("no_such_corpus_model.hlo") != std::string::npos ||
                error.message().find("no_such_corpus_model.hlo") != std::string::npos)
        << hlo::FormatError(error);
  }
}

}  // namespace

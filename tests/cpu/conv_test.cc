// cpu::Conv2D against a naive double-precision convolution that first materializes the padded,
// lhs-dilated input and then correlates it with the rhs-dilated filter (a different formulation
// from the implementation's index arithmetic). Covers strides, padding, both dilations, feature
// groups, depthwise on both paths, batch > 1, 1x1, epilogue coverage and argument errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "targets/cpu/gemm.h"
#include "targets/cpu/gemm_conv.h"
#include "targets/cpu/gemm_depthwise_kernels.h"
#include "targets/cpu/thread_pool.h"

namespace {

using cpu::gemm_detail::ConvPath;

struct ConvCase {
  std::string name;
  int64_t batch, in_h, in_w, in_c, k_h, k_w, out_c;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t lhs_dil = 1, rhs_dil = 1;
  int64_t groups = 1;
};

struct ConvData {
  cpu::Conv2DArgs args;
  std::vector<float> input, filter, output;
  std::vector<double> expected;
};

ConvData Make(const ConvCase& c, uint32_t seed) {
  ConvData d;
  cpu::Conv2DArgs& a = d.args;
  a.batch = c.batch, a.in_h = c.in_h, a.in_w = c.in_w, a.in_c = c.in_c;
  a.k_h = c.k_h, a.k_w = c.k_w, a.out_c = c.out_c;
  a.stride_h = c.stride_h, a.stride_w = c.stride_w;
  a.pad_top = c.pad_top, a.pad_left = c.pad_left;
  a.lhs_dilation_h = a.lhs_dilation_w = c.lhs_dil;
  a.rhs_dilation_h = a.rhs_dilation_w = c.rhs_dil;
  a.feature_groups = c.groups;
  // Padded + dilated input extent, and the output size that follows from it.
  const int64_t ph = (c.in_h - 1) * c.lhs_dil + 1 + c.pad_top + c.pad_bottom;
  const int64_t pw = (c.in_w - 1) * c.lhs_dil + 1 + c.pad_left + c.pad_right;
  const int64_t window_h = (c.k_h - 1) * c.rhs_dil + 1, window_w = (c.k_w - 1) * c.rhs_dil + 1;
  a.out_h = (ph - window_h) / c.stride_h + 1;
  a.out_w = (pw - window_w) / c.stride_w + 1;

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t group_in = c.in_c / c.groups, group_out = c.out_c / c.groups;
  d.input.resize(c.batch * c.in_h * c.in_w * c.in_c);
  d.filter.resize(c.k_h * c.k_w * group_in * c.out_c);
  for (float& x : d.input) x = dist(rng);
  for (float& x : d.filter) x = dist(rng);
  d.output.assign(c.batch * a.out_h * a.out_w * c.out_c, NAN);
  a.input = d.input.data(), a.filter = d.filter.data(), a.output = d.output.data();

  std::vector<double> padded(c.batch * ph * pw * c.in_c, 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t y = 0; y < c.in_h; ++y)
      for (int64_t x = 0; x < c.in_w; ++x)
        for (int64_t ch = 0; ch < c.in_c; ++ch)
          padded[((b * ph + c.pad_top + y * c.lhs_dil) * pw + c.pad_left + x * c.lhs_dil) *
                     c.in_c + ch] = d.input[((b * c.in_h + y) * c.in_w + x) * c.in_c + ch];
  d.expected.assign(d.output.size(), 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t oy = 0; oy < a.out_h; ++oy)
      for (int64_t ox = 0; ox < a.out_w; ++ox)
        for (int64_t oc = 0; oc < c.out_c; ++oc) {
          const int64_t g = oc / group_out;
          double sum = 0.0;
          for (int64_t ky = 0; ky < c.k_h; ++ky)
            for (int64_t kx = 0; kx < c.k_w; ++kx)
              for (int64_t ci = 0; ci < group_in; ++ci) {
                const int64_t y = oy * c.stride_h + ky * c.rhs_dil;
                const int64_t x = ox * c.stride_w + kx * c.rhs_dil;
                sum += padded[((b * ph + y) * pw + x) * c.in_c + g * group_in + ci] *
                       d.filter[((ky * c.k_w + kx) * group_in + ci) * c.out_c + oc];
              }
          d.expected[((b * a.out_h + oy) * a.out_w + ox) * c.out_c + oc] = sum;
        }
  return d;
}

void ExpectMatches(const ConvCase& c, const ConvData& d) {
  const double tolerance = 1e-5 * c.k_h * c.k_w * (c.in_c / c.groups);
  int reported = 0;
  for (size_t i = 0; i < d.output.size(); ++i)
    if (!(std::abs(d.output[i] - d.expected[i]) <= tolerance) && reported++ < 5)
      ADD_FAILURE() << c.name << ": output[" << i << "] = " << d.output[i] << ", expected "
                    << d.expected[i];
}

std::vector<ConvCase> Cases() {
  std::vector<ConvCase> cases;
  cases.push_back({"3x3 same", 1, 8, 8, 3, 3, 3, 5, 1, 1, 1, 1, 1, 1});
  cases.push_back({"3x3 stride 2 batch 3", 3, 9, 10, 4, 3, 3, 6, 2, 2, 1, 1, 1, 1});
  cases.push_back({"asymmetric padding", 2, 7, 5, 3, 2, 3, 4, 1, 2, 0, 2, 1, 0});
  cases.push_back({"5x5 valid", 1, 11, 9, 2, 5, 5, 3});
  cases.push_back({"rhs dilation 2", 1, 10, 10, 3, 3, 3, 4, 1, 1, 2, 2, 2, 2, 1, 2});
  cases.push_back({"lhs dilation 2 (transposed conv)", 2, 4, 5, 3, 3, 3, 2, 1, 1, 2, 2, 2, 2, 2, 1});
  cases.push_back({"both dilations, stride 2", 1, 9, 8, 2, 2, 3, 3, 2, 2, 1, 0, 0, 1, 2, 2});
  cases.push_back({"groups 2", 2, 6, 6, 4, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, 2});
  cases.push_back({"groups 3 stride 2", 1, 7, 7, 6, 3, 3, 9, 2, 2, 1, 1, 1, 1, 1, 1, 3});
  cases.push_back({"depthwise 3x3", 2, 8, 7, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1, 5});
  cases.push_back({"depthwise multiplier 2 stride 2", 1, 9, 9, 3, 3, 3, 6, 2, 2, 1, 1, 1, 1, 1, 1, 3});
  cases.push_back({"depthwise dilated", 1, 9, 9, 16, 3, 3, 16, 1, 1, 2, 2, 2, 2, 1, 2, 16});
  cases.push_back({"1x1 pointwise", 2, 5, 6, 7, 1, 1, 9});
  cases.push_back({"1x1 stride 2", 1, 7, 7, 5, 1, 1, 4, 2, 2});
  cases.push_back({"1x1 grouped", 1, 4, 4, 8, 1, 1, 6, 1, 1, 0, 0, 0, 0, 1, 1, 2});
  cases.push_back({"deep: k crosses a k-block", 1, 12, 12, 40, 3, 3, 70, 1, 1, 1, 1, 1, 1});
  cases.push_back({"single pixel", 1, 1, 1, 1, 1, 1, 1});
  cases.push_back({"kernel larger than input, padded", 1, 2, 2, 2, 5, 5, 3, 1, 1, 2, 2, 2, 2});
  cases.push_back({"depthwise 7x7: more taps than one gather", 1, 9, 9, 20, 7, 7, 20, 1, 1, 3, 3,
                   3, 3, 1, 1, 20});
  cases.push_back({"depthwise, border pixels all padding", 2, 3, 3, 4, 1, 1, 4, 1, 1, 2, 2, 2, 2,
                   1, 1, 4});
  cases.push_back({"depthwise 17 channels (masked tail)", 1, 6, 6, 17, 3, 3, 17, 2, 1, 1, 1, 1,
                   1, 1, 1, 17});
  return cases;
}

TEST(Conv2D, MatchesNaiveConvolution) {
  cpu::ThreadPool pool(2);
  uint32_t seed = 1;
  for (const ConvCase& c : Cases()) {
    for (cpu::ThreadPool* p : {static_cast<cpu::ThreadPool*>(nullptr), &pool}) {
      ConvData d = Make(c, seed++);
      cpu::Conv2D(d.args, p);
      ExpectMatches(c, d);
    }
  }
}

TEST(Conv2D, DepthwiseBothPathsAgree) {
  cpu::ThreadPool pool(2);
  for (const ConvCase& c : Cases()) {
    if (c.groups != c.in_c || c.groups == 1) continue;
    for (ConvPath path : {ConvPath::kGemm, ConvPath::kDirectDepthwise}) {
      ConvData d = Make(c, 77);
      cpu::gemm_detail::Conv2DWithPath(d.args, &pool, path);
      ExpectMatches(c, d);
    }
  }
}

TEST(Conv2D, PortableDepthwisePixelKernelMatchesTheBestOne) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t channels : {1, 15, 16, 33}) {
    std::vector<std::vector<float>> xs(5, std::vector<float>(channels)), fs = xs;
    const float* x[5];
    const float* f[5];
    for (int t = 0; t < 5; ++t) {
      for (float& v : xs[t]) v = dist(rng);
      for (float& v : fs[t]) v = dist(rng);
      x[t] = xs[t].data();
      f[t] = fs[t].data();
    }
    for (bool accumulate : {false, true}) {
      std::vector<float> portable(channels + 1, 0.5f), best(channels + 1, 0.5f);
      cpu::gemm_detail::PortableDepthwisePixelKernel()(x, f, 5, channels, portable.data(),
                                                       accumulate);
      cpu::gemm_detail::BestDepthwisePixelKernel()(x, f, 5, channels, best.data(), accumulate);
      for (int64_t c = 0; c < channels; ++c) {
        double want = accumulate ? 0.5 : 0.0;
        for (int t = 0; t < 5; ++t) want += double{xs[t][c]} * fs[t][c];
        EXPECT_NEAR(portable[c], want, 1e-5);
        EXPECT_NEAR(best[c], want, 1e-5);
      }
      EXPECT_EQ(portable[channels], 0.5f);  // one past the end: untouched
      EXPECT_EQ(best[channels], 0.5f);
    }
  }
}

TEST(Conv2D, LargerCaseOnPool) {
  cpu::ThreadPool pool(2);
  ConvCase c{"3x3 32->48 on 2x20x20", 2, 20, 20, 32, 3, 3, 48, 1, 1, 1, 1, 1, 1};
  ConvData d = Make(c, 5);
  cpu::Conv2D(d.args, &pool);
  ExpectMatches(c, d);
}

// The epilogue sees disjoint blocks of the (N*OH*OW) x OC output covering it exactly once.
TEST(Conv2D, EpilogueCoversOutputOnce) {
  cpu::ThreadPool pool(2);
  for (const ConvCase& c : {Cases()[1], Cases()[8], Cases()[9], Cases()[15]}) {
    ConvData d = Make(c, 9);
    std::vector<std::atomic<int>> seen(d.output.size());
    const int64_t rows = d.args.batch * d.args.out_h * d.args.out_w;
    d.args.epilogue = [&](const cpu::GemmBlock& block) {
      EXPECT_EQ(block.ldc, c.out_c);
      EXPECT_EQ(block.c, d.output.data() + block.row * c.out_c + block.col);
      EXPECT_LE(block.row + block.rows, rows);
      EXPECT_LE(block.col + block.cols, c.out_c);
      for (int64_t i = block.row; i < block.row + block.rows; ++i)
        for (int64_t j = block.col; j < block.col + block.cols; ++j) {
          seen[i * c.out_c + j].fetch_add(1);
          d.output[i * c.out_c + j] = std::max(d.output[i * c.out_c + j], 0.0f);  // ReLU
        }
    };
    cpu::Conv2D(d.args, &pool);
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << c.name << " " << i;
    for (double& e : d.expected) e = std::max(e, 0.0);
    ExpectMatches(c, d);
  }
}

TEST(Conv2D, EmptyOutputIsANoOp) {
  cpu::Conv2DArgs a;
  a.batch = 0, a.in_h = 3, a.in_w = 3, a.in_c = 2, a.k_h = 1, a.k_w = 1, a.out_c = 2;
  a.out_h = 3, a.out_w = 3;
  int calls = 0;
  a.epilogue = [&](const cpu::GemmBlock&) { ++calls; };
  cpu::Conv2D(a, nullptr);  // null pointers are fine: nothing to read or write
  EXPECT_EQ(calls, 0);
}

void ExpectError(const cpu::Conv2DArgs& args, const std::string& fragment) {
  try {
    cpu::Conv2D(args, nullptr);
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find(fragment), std::string::npos) << error.message();
  }
}

TEST(Conv2D, RejectsBadArguments) {
  ConvData d = Make(Cases()[0], 3);
  cpu::Conv2DArgs bad = d.args;
  bad.feature_groups = 2;  // in_c = 3
  ExpectError(bad, "must be multiples of feature_groups 2");
  bad = d.args;
  bad.stride_w = 0;
  ExpectError(bad, "strides must be >= 1");
  bad = d.args;
  bad.rhs_dilation_h = 0;
  ExpectError(bad, "dilations must be >= 1");
  bad = d.args;
  bad.k_h = -1;
  ExpectError(bad, "negative dimension");
  bad = d.args;
  bad.input = nullptr;
  ExpectError(bad, "input or filter is null");
  bad = d.args;
  bad.out_c = int64_t{1} << 40;
  bad.batch = int64_t{1} << 40;
  ExpectError(bad, "overflows int64");
  bad = d.args;
  bad.stride_h = int64_t{1} << 40;
  ExpectError(bad, "stride or dilation of 2^30 or more");
  bad = d.args;
  bad.pad_left = -(int64_t{1} << 62);
  ExpectError(bad, "padding of magnitude 2^30 or more");
  // The direct path only handles one input channel per group.
  EXPECT_THROW(cpu::gemm_detail::Conv2DWithPath(Make({"g", 1, 3, 3, 6, 1, 1, 6, 1, 1, 0, 0, 0, 0,
                                                      1, 1, 3}, 1).args,
                                                 nullptr, ConvPath::kDirectDepthwise),
               hlo::Error);
}

}  // namespace

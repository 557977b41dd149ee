// cpu::Conv2D: NHWC input, HWIO filter, NHWC output with XLA's window semantics.
//
// Two paths:
//  - GEMM (every non-depthwise case): per feature group g, C[N*OH*OW x OC/G] = A x B where
//    B = filter[:, :, :, g-th slice] (a strided matrix, rows (kh, kw, ci)) and A is the implicit
//    im2col matrix, packed tile by tile straight into the GEMM's A panels (Im2colPacker): the
//    full im2col never exists. A 1x1 window with unit strides is a plain GEMM on the input.
//  - Direct depthwise (in_c == feature_groups): a GEMM with k = kh*kw would be far too thin for
//    the micro-kernel, so a loop vectorized over channels accumulates each output pixel instead.
//
// Guarantees: results equal a naive f32 convolution up to reassociation; bad arguments throw
// hlo::Error; the epilogue sees disjoint blocks covering the (N*OH*OW) x OC output, once each.
#include <algorithm>
#include <string>

#include "hlo/diagnostic.h"
#include "targets/cpu/gemm.h"
#include "targets/cpu/gemm_conv.h"
#include "targets/cpu/gemm_depthwise_kernels.h"
#include "targets/cpu/gemm_driver.h"
#include "targets/cpu/gemm_kernels.h"

namespace cpu {
namespace gemm_detail {
namespace {

void Check(bool ok, const std::string& message) {
  if (!ok) throw hlo::Error("conv2d: " + message);
}

int64_t CheckedProduct(std::initializer_list<int64_t> factors, const char* what) {
  int64_t product = 1;
  for (int64_t f : factors) {
    Check(!__builtin_mul_overflow(product, f, &product), std::string(what) + " overflows int64");
  }
  return product;
}

void ValidateConvArgs(const Conv2DArgs& a) {
  Check(a.batch >= 0 && a.in_h >= 0 && a.in_w >= 0 && a.in_c >= 0 && a.k_h >= 0 && a.k_w >= 0 &&
            a.out_c >= 0 && a.out_h >= 0 && a.out_w >= 0,
        "negative dimension");
  Check(a.stride_h >= 1 && a.stride_w >= 1, "strides must be >= 1");
  Check(a.lhs_dilation_h >= 1 && a.lhs_dilation_w >= 1 && a.rhs_dilation_h >= 1 &&
            a.rhs_dilation_w >= 1,
        "dilations must be >= 1");
  Check(a.feature_groups >= 1, "feature_groups must be >= 1");
  Check(a.in_c % a.feature_groups == 0 && a.out_c % a.feature_groups == 0,
        "in_c " + std::to_string(a.in_c) + " and out_c " + std::to_string(a.out_c) +
            " must be multiples of feature_groups " + std::to_string(a.feature_groups));
  const int64_t outputs = CheckedProduct({a.batch, a.out_h, a.out_w, a.out_c}, "output size");
  const int64_t inputs = CheckedProduct({a.batch, a.in_h, a.in_w, a.in_c}, "input size");
  const int64_t filters =
      CheckedProduct({a.k_h, a.k_w, a.in_c / a.feature_groups, a.out_c}, "filter size");
  // Window positions oh * stride + kh * dilation - pad must stay far from int64 overflow: with
  // every term below 2^30 they stay below 2^62.
  constexpr int64_t kMaxWindowTerm = int64_t{1} << 30;
  for (int64_t term : {a.out_h, a.out_w, a.k_h, a.k_w, a.stride_h, a.stride_w, a.rhs_dilation_h,
                       a.rhs_dilation_w, a.lhs_dilation_h, a.lhs_dilation_w}) {
    Check(term < kMaxWindowTerm, "window size, stride or dilation of 2^30 or more");
  }
  Check(a.pad_top > -kMaxWindowTerm && a.pad_top < kMaxWindowTerm &&
            a.pad_left > -kMaxWindowTerm && a.pad_left < kMaxWindowTerm,
        "padding of magnitude 2^30 or more");
  if (outputs == 0) return;
  Check(a.output != nullptr, "output is null");
  Check((inputs == 0 || a.input != nullptr) && (filters == 0 || a.filter != nullptr),
        "input or filter is null");
}

// Input row/column for output coordinate `out` and window offset `tap`, or -1 when the tap lands
// on padding or between dilated input elements.
int64_t InputCoordinate(int64_t out, int64_t tap, int64_t stride, int64_t pad_low,
                        int64_t rhs_dilation, int64_t lhs_dilation, int64_t in_size) {
  const int64_t dilated = out * stride + tap * rhs_dilation - pad_low;
  if (lhs_dilation == 1) return dilated >= 0 && dilated < in_size ? dilated : -1;  // no division
  if (dilated < 0 || dilated % lhs_dilation != 0) return -1;
  const int64_t coordinate = dilated / lhs_dilation;
  return coordinate < in_size ? coordinate : -1;
}

// Tiles of the implicit im2col matrix of feature group `group`: row r = (b, oh, ow), column
// p = (kh, kw, ci) with ci < in_c / groups (the order of the HWIO filter's rows).
class Im2colPacker final : public APacker {
 public:
  Im2colPacker(const Conv2DArgs& args, int64_t group)
      : args_(args), group_channels_(args.in_c / args.feature_groups),
        channel_offset_(group * group_channels_) {}

  // Panel by panel: for each run of consecutive channels of one (kh, kw) tap, point at each
  // row's input pixel (or at zeros for padding) and transpose the run into the panel.
  void Pack(int64_t row0, int64_t rows, int64_t p0, int64_t depth, int mr,
            float* dst) const override {
    const Conv2DArgs& a = args_;
    for (int64_t panel_row = 0; panel_row < rows; panel_row += mr) {
      const int64_t panel_rows = std::min<int64_t>(mr, rows - panel_row);
      float* panel = dst + panel_row * depth;
      int64_t batch[kMaxMr], oh[kMaxMr], ow[kMaxMr];
      for (int64_t i = 0; i < panel_rows; ++i) {
        const int64_t row = row0 + panel_row + i;
        ow[i] = row % a.out_w;
        oh[i] = (row / a.out_w) % a.out_h;
        batch[i] = row / (a.out_w * a.out_h);
      }
      int64_t p = p0;
      int64_t ci = p % group_channels_;
      int64_t tap = p / group_channels_;
      while (p < p0 + depth) {
        const int64_t run = std::min(group_channels_ - ci, p0 + depth - p);
        const int64_t kh = tap / a.k_w, kw = tap % a.k_w;
        const float* sources[kMaxMr];
        for (int i = 0; i < mr; ++i) {
          sources[i] = ZeroRow();
          if (i >= panel_rows) continue;
          const int64_t ih = InputCoordinate(oh[i], kh, a.stride_h, a.pad_top, a.rhs_dilation_h,
                                             a.lhs_dilation_h, a.in_h);
          const int64_t iw = InputCoordinate(ow[i], kw, a.stride_w, a.pad_left,
                                             a.rhs_dilation_w, a.lhs_dilation_w, a.in_w);
          if (ih >= 0 && iw >= 0)
            sources[i] = a.input + ((batch[i] * a.in_h + ih) * a.in_w + iw) * a.in_c +
                         channel_offset_ + ci;
        }
        PackRowsTransposed(sources, run, mr, panel + (p - p0) * mr);
        p += run;
        ci = 0;
        ++tap;
      }
    }
  }

 private:
  const Conv2DArgs& args_;
  int64_t group_channels_;
  int64_t channel_offset_;
};

// True when the window is the identity (1x1, unit strides and dilations, no padding, output the
// size of the input): the im2col matrix is then the input itself.
bool IsPointwise(const Conv2DArgs& a) {
  return a.k_h == 1 && a.k_w == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_top == 0 &&
         a.pad_left == 0 && a.lhs_dilation_h == 1 && a.lhs_dilation_w == 1 &&
         a.out_h == a.in_h && a.out_w == a.in_w;
}

void ConvViaGemm(const Conv2DArgs& a, ThreadPool* pool) {
  const int64_t groups = a.feature_groups;
  const int64_t group_in = a.in_c / groups, group_out = a.out_c / groups;
  for (int64_t g = 0; g < groups; ++g) {
    const Im2colPacker im2col(a, g);
    const MatrixAPacker pointwise(a.input + g * group_in, a.in_c, /*transposed=*/false);
    DriverArgs d;
    d.m = a.batch * a.out_h * a.out_w;
    d.n = group_out;
    d.k = a.k_h * a.k_w * group_in;
    d.a = IsPointwise(a) ? static_cast<const APacker*>(&pointwise) : &im2col;
    d.b = a.filter + g * group_out;  // row (kh, kw, ci) starts at ((kh*k_w + kw)*group_in + ci)*out_c
    d.ldb = a.out_c;
    d.c = a.output + g * group_out;
    d.ldc = a.out_c;
    // The group's GEMM numbers its columns from 0; the epilogue sees the whole output's columns.
    const GemmEpilogue shifted = [&](const GemmBlock& block) {
      GemmBlock in_output = block;
      in_output.col += g * group_out;
      a.epilogue(in_output);
    };
    d.epilogue = groups == 1 || !a.epilogue ? &a.epilogue : &shifted;
    RunGemm(d, pool, KernelForShape(d.m, d.n));
  }
}

// Depthwise (one input channel per group, `multiplier` = out_c / in_c outputs per channel).
// Multiplier 1 (the common case): per output pixel, the valid taps' input pixels and filter
// rows are gathered as pointers and the pixel kernel (gemm_depthwise_kernels.h) accumulates in
// registers, vectorized over channels. Other multipliers: a plain loop.
void ConvDirectDepthwise(const Conv2DArgs& a, ThreadPool* pool) {
  const int64_t multiplier = a.out_c / a.in_c;
  const int64_t pixel_rows = a.batch * a.out_h;  // parallel over (b, oh)
  const DepthwisePixelFn pixel_kernel = BestDepthwisePixelKernel();
  constexpr int kTapChunk = 32;  // taps gathered per kernel call (windows may be larger)
  auto run_rows = [&](int64_t begin, int64_t end) {
    const float* x_taps[kTapChunk];
    const float* f_taps[kTapChunk];
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / a.out_h, oh = row % a.out_h;
      for (int64_t ow = 0; ow < a.out_w; ++ow) {
        float* out = a.output + (row * a.out_w + ow) * a.out_c;
        int taps = 0;
        bool accumulate = false;
        for (int64_t kh = 0; kh < a.k_h; ++kh) {
          const int64_t ih = InputCoordinate(oh, kh, a.stride_h, a.pad_top, a.rhs_dilation_h,
                                             a.lhs_dilation_h, a.in_h);
          if (ih < 0) continue;
          for (int64_t kw = 0; kw < a.k_w; ++kw) {
            const int64_t iw = InputCoordinate(ow, kw, a.stride_w, a.pad_left,
                                               a.rhs_dilation_w, a.lhs_dilation_w, a.in_w);
            if (iw < 0) continue;
            const float* x = a.input + ((b * a.in_h + ih) * a.in_w + iw) * a.in_c;
            const float* f = a.filter + (kh * a.k_w + kw) * a.out_c;
            if (multiplier != 1) {
              if (!accumulate) std::fill(out, out + a.out_c, 0.0f);
              accumulate = true;
              for (int64_t c = 0; c < a.in_c; ++c)
                for (int64_t j = 0; j < multiplier; ++j)
                  out[c * multiplier + j] += x[c] * f[c * multiplier + j];
              continue;
            }
            x_taps[taps] = x;
            f_taps[taps] = f;
            if (++taps == kTapChunk) {
              pixel_kernel(x_taps, f_taps, taps, a.out_c, out, accumulate);
              accumulate = true;
              taps = 0;
            }
          }
        }
        // The rest of the taps; a pixel whose window lies entirely in padding becomes 0.
        if (taps > 0 || !accumulate) pixel_kernel(x_taps, f_taps, taps, a.out_c, out, accumulate);
      }
    }
    if (a.epilogue) {
      GemmBlock block;
      block.row = begin * a.out_w;
      block.rows = (end - begin) * a.out_w;
      block.cols = a.out_c;
      block.c = a.output + block.row * a.out_c;
      block.ldc = a.out_c;
      if (block.rows > 0 && block.cols > 0) a.epilogue(block);
    }
  };
  const double work = static_cast<double>(pixel_rows) * static_cast<double>(a.out_w) *
                      static_cast<double>(a.out_c) * static_cast<double>(a.k_h) *
                      static_cast<double>(a.k_w);
  if (pool && work >= double{1 << 16}) {
    pool->ParallelFor(pixel_rows, 1, run_rows);
  } else {
    run_rows(0, pixel_rows);
  }
}

}  // namespace

void Conv2DWithPath(const Conv2DArgs& args, ThreadPool* pool, ConvPath path) {
  ValidateConvArgs(args);
  if (args.batch * args.out_h * args.out_w * args.out_c == 0) return;
  const bool depthwise = args.in_c == args.feature_groups && args.feature_groups > 1;
  switch (path) {
    case ConvPath::kAuto:
      if (depthwise) {
        ConvDirectDepthwise(args, pool);
      } else {
        ConvViaGemm(args, pool);
      }
      return;
    case ConvPath::kGemm:
      ConvViaGemm(args, pool);
      return;
    case ConvPath::kDirectDepthwise:
      Check(args.in_c == args.feature_groups, "the direct path needs in_c == feature_groups");
      ConvDirectDepthwise(args, pool);
      return;
  }
}

}  // namespace gemm_detail

void Conv2D(const Conv2DArgs& args, ThreadPool* pool) {
  gemm_detail::Conv2DWithPath(args, pool, gemm_detail::ConvPath::kAuto);
}

}  // namespace cpu

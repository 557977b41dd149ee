// convolution for the evaluator.
//
// Guarantees:
//  - General dim_labels (any permutation of batch/feature/spatial for input, kernel and
//    output), any number of spatial dims, window stride, padding (negative too), lhs (base)
//    dilation, rhs (window) dilation, window reversal, feature_group_count and
//    batch_group_count, as XLA's operation semantics define them:
//      * feature groups: input features split into G groups of C/G; output feature o belongs
//        to group o / (O/G) and reads input features of that group; kernel input feature
//        dimension has C/G entries.
//      * batch groups: input batch split into G consecutive groups of N/G; output batch is
//        N/G; output feature o belongs to group o / (O/G) and reads input batch
//        group * (N/G) + output_batch.
//  - Accumulates in f32 for bf16/f16/f32, f64 for f64, wrapping 64-bit for integers; rounds
//    to the result type once. Each output sums over kernel spatial positions (row-major) and,
//    within each, input features in increasing order: deterministic.
//  - No im2col: operands are repacked as input [N][spatial...][C] and kernel
//    [spatial...][C/G][O]; the innermost loop runs over contiguous output features (or, when
//    groups have a single output feature, across depthwise groups or over input features).
#include <algorithm>

#include "hlo/evaluator_family_util.h"

namespace hlo::eval::rc {
namespace {

struct ConvGeometry {
  int64_t batch = 0, in_features = 0, out_batch = 0, out_features = 0;
  int64_t kernel_in_features = 0;
  int64_t feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  std::vector<WindowDim> window;
  std::vector<int64_t> input_perm, kernel_perm, output_perm;
};

void CheckPermutation(const std::vector<int64_t>& perm, int64_t rank, const Instruction& inst,
                      const char* what) {
  Require(static_cast<int64_t>(perm.size()) == rank, inst,
          std::string(what) + " dim_labels do not match its rank");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : perm) {
    Require(d >= 0 && d < rank && !seen[d], inst, std::string(what) + " dim_labels are invalid");
    seen[d] = true;
  }
}

ConvGeometry CheckConvolution(const Instruction& inst, const Shape& input, const Shape& kernel) {
  Require(inst.has_attr<ConvolutionAttrs>(), inst, "missing convolution attributes");
  const ConvolutionAttrs& attrs = inst.attr<ConvolutionAttrs>();
  const ConvDimensionNumbers& dn = attrs.dnums;
  const Shape& output = inst.shape();
  Require(input.IsArray() && kernel.IsArray() && output.IsArray(), inst,
          "operands and result must be arrays");
  const size_t spatial = dn.input_spatial.size();
  Require(dn.kernel_spatial.size() == spatial && dn.output_spatial.size() == spatial &&
              attrs.window.dims.size() == spatial,
          inst, "input, kernel, output and window must have the same number of spatial dims");
  ConvGeometry g;
  g.input_perm = {dn.input_batch};
  g.input_perm.insert(g.input_perm.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  g.input_perm.push_back(dn.input_feature);
  g.kernel_perm = dn.kernel_spatial;
  g.kernel_perm.push_back(dn.kernel_input_feature);
  g.kernel_perm.push_back(dn.kernel_output_feature);
  g.output_perm = {dn.output_batch};
  g.output_perm.insert(g.output_perm.end(), dn.output_spatial.begin(), dn.output_spatial.end());
  g.output_perm.push_back(dn.output_feature);
  CheckPermutation(g.input_perm, input.rank(), inst, "input");
  CheckPermutation(g.kernel_perm, kernel.rank(), inst, "kernel");
  CheckPermutation(g.output_perm, output.rank(), inst, "output");

  g.batch = input.dims[dn.input_batch];
  g.in_features = input.dims[dn.input_feature];
  g.kernel_in_features = kernel.dims[dn.kernel_input_feature];
  g.out_features = kernel.dims[dn.kernel_output_feature];
  g.out_batch = output.dims[dn.output_batch];
  g.feature_groups = attrs.feature_group_count;
  g.batch_groups = attrs.batch_group_count;
  Require(g.feature_groups >= 1 && g.batch_groups >= 1, inst, "group counts must be positive");
  Require(g.feature_groups == 1 || g.batch_groups == 1, inst,
          "feature_group_count and batch_group_count cannot both exceed 1");
  Require(g.in_features == g.kernel_in_features * g.feature_groups, inst,
          "input features must equal kernel input features x feature_group_count");
  Require(g.out_features % g.feature_groups == 0 && g.out_features % g.batch_groups == 0, inst,
          "kernel output features must be divisible by the group counts");
  Require(g.batch % g.batch_groups == 0 && g.out_batch == g.batch / g.batch_groups, inst,
          "output batch must be input batch / batch_group_count");
  Require(output.dims[dn.output_feature] == g.out_features, inst,
          "output features must equal the kernel's output features");
  g.window = attrs.window.dims;
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDim& w = g.window[s];
    const int64_t in_size = input.dims[dn.input_spatial[s]];
    const int64_t kernel_size = kernel.dims[dn.kernel_spatial[s]];
    Require(w.size == kernel_size, inst, "window size must equal the kernel's spatial size");
    const int64_t expected = WindowOutputSize(w, in_size, inst);
    Require(output.dims[dn.output_spatial[s]] == expected, inst,
            "output spatial dimension " + std::to_string(s) + " should be " +
                std::to_string(expected) + ", got " +
                std::to_string(output.dims[dn.output_spatial[s]]));
    g.in_spatial.push_back(in_size);
    g.kernel_spatial.push_back(kernel_size);
    g.out_spatial.push_back(expected);
  }
  return g;
}

// For output coordinate `o` along spatial dim `s`: the (kernel index, input index) pairs that
// hit a real input element (not padding, not a base-dilation hole), in kernel order.
void ValidTaps(const ConvGeometry& g, size_t s, int64_t o,
               std::vector<std::pair<int64_t, int64_t>>& taps) {
  taps.clear();
  const WindowDim& w = g.window[s];
  ForEachWindowTap(w, o * w.stride - w.pad_lo, g.in_spatial[s], [&](int64_t k, int64_t i) {
    // Window reversal flips which kernel element meets this input position.
    taps.emplace_back(w.reversal ? g.kernel_spatial[s] - 1 - k : k, i);
  });
}

// Which index the innermost loop runs over. All three add, for each output element, the
// products tap by tap and within a tap by increasing input feature, so they give identical
// results; they differ only in which loop is long and contiguous.
enum class InnerLoop {
  kOutputFeatures,  // the output features of a group (the common case)
  kAcrossGroups,    // depthwise (one input and one output feature per group): across groups
  kInputFeatures,   // one output feature per group (batch groups, grouped weight gradients)
};

InnerLoop ChooseInnerLoop(const ConvGeometry& g, int64_t out_per_group) {
  if (out_per_group != 1) return InnerLoop::kOutputFeatures;
  if (g.feature_groups > 1 && g.kernel_in_features == 1) return InnerLoop::kAcrossGroups;
  return InnerLoop::kInputFeatures;
}

template <typename Acc>
void RunConvolution(const Instruction& inst, const Literal& input_lit, const Literal& kernel_lit,
                    const ConvGeometry& g, Literal& result) {
  const int64_t cin_g = g.kernel_in_features;
  // Output features handled by each group (feature groups and batch groups never mix).
  const int64_t groups = std::max(g.feature_groups, g.batch_groups);
  const int64_t out_per_group = g.out_features / groups;
  const InnerLoop loop = ChooseInnerLoop(g, out_per_group);
  const std::vector<Acc> input = PackPermuted<Acc>(input_lit, g.input_perm, inst);
  // Kernel as [spatial...][C/G][O], or [spatial...][O][C/G] when the inner loop runs over
  // input features.
  std::vector<int64_t> kernel_perm = g.kernel_perm;
  if (loop == InnerLoop::kInputFeatures)
    std::swap(kernel_perm[kernel_perm.size() - 2], kernel_perm.back());
  const std::vector<Acc> kernel = PackPermuted<Acc>(kernel_lit, kernel_perm, inst);
  const size_t spatial = g.in_spatial.size();
  int64_t out_positions = 1;
  for (int64_t d : g.out_spatial) out_positions *= d;
  const int64_t out_f = g.out_features;
  std::vector<Acc> output(static_cast<size_t>(g.out_batch * out_positions * out_f), Acc{0});
  if (output.empty()) {
    UnpackPermuted<Acc>(output, g.output_perm, result, inst);
    return;
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(g.in_spatial);  // in positions
  const std::vector<int64_t> kernel_strides = RowMajorStrides(g.kernel_spatial);
  int64_t in_positions = 1;
  for (int64_t d : g.in_spatial) in_positions *= d;
  const int64_t batch_per_group = g.batch / g.batch_groups;

  std::vector<std::vector<std::pair<int64_t, int64_t>>> taps(spatial);
  std::vector<size_t> tap_pos(spatial);
  for (int64_t ob = 0; ob < g.out_batch; ++ob) {
    int64_t out_linear = 0;
    ForEachIndex(g.out_spatial, [&](std::span<const int64_t> o) {
      Acc* y = output.data() + (ob * out_positions + out_linear++) * out_f;
      for (size_t s = 0; s < spatial; ++s) {
        ValidTaps(g, s, o[s], taps[s]);
        if (taps[s].empty()) return;
      }
      std::fill(tap_pos.begin(), tap_pos.end(), 0);
      while (true) {
        int64_t in_pos = 0, kernel_pos = 0;
        for (size_t s = 0; s < spatial; ++s) {
          kernel_pos += taps[s][tap_pos[s]].first * kernel_strides[s];
          in_pos += taps[s][tap_pos[s]].second * in_strides[s];
        }
        const Acc* w_tap = kernel.data() + kernel_pos * cin_g * out_f;
        const Acc* x_pos = input.data() + in_pos * g.in_features;
        switch (loop) {
          case InnerLoop::kAcrossGroups: {
            // Depthwise: one input feature per output feature, both contiguous across groups.
            const Acc* __restrict x = x_pos + ob * in_positions * g.in_features;
            for (int64_t co = 0; co < out_f; ++co) y[co] += x[co] * w_tap[co];
            break;
          }
          case InnerLoop::kInputFeatures:
            for (int64_t co = 0; co < out_f; ++co) {
              const int64_t batch = g.batch_groups > 1 ? co * batch_per_group + ob : ob;
              const int64_t feature_base = g.feature_groups > 1 ? co * cin_g : 0;
              const Acc* __restrict x = x_pos + batch * in_positions * g.in_features + feature_base;
              const Acc* __restrict w = w_tap + co * cin_g;
              Acc acc = y[co];
              for (int64_t ci = 0; ci < cin_g; ++ci) acc += x[ci] * w[ci];
              y[co] = acc;
            }
            break;
          case InnerLoop::kOutputFeatures:
            for (int64_t grp = 0; grp < groups; ++grp) {
              const int64_t batch = g.batch_groups > 1 ? grp * batch_per_group + ob : ob;
              const int64_t feature_base = g.feature_groups > 1 ? grp * cin_g : 0;
              const Acc* x = x_pos + batch * in_positions * g.in_features + feature_base;
              const int64_t co0 = grp * out_per_group;
              Acc* __restrict yg = y + co0;
              int64_t ci = 0;
              // Four input features per pass keep y in a register across them; the additions
              // stay in increasing-ci order, so the result equals the one-at-a-time loop.
              for (; ci + 4 <= cin_g; ci += 4) {
                const Acc x0 = x[ci], x1 = x[ci + 1], x2 = x[ci + 2], x3 = x[ci + 3];
                const Acc* __restrict w0 = w_tap + ci * out_f + co0;
                const Acc* __restrict w1 = w0 + out_f;
                const Acc* __restrict w2 = w1 + out_f;
                const Acc* __restrict w3 = w2 + out_f;
                for (int64_t co = 0; co < out_per_group; ++co) {
                  Acc v = yg[co];
                  v += x0 * w0[co];
                  v += x1 * w1[co];
                  v += x2 * w2[co];
                  v += x3 * w3[co];
                  yg[co] = v;
                }
              }
              for (; ci < cin_g; ++ci) {
                const Acc xv = x[ci];
                const Acc* __restrict wrow = w_tap + ci * out_f + co0;
                for (int64_t co = 0; co < out_per_group; ++co) yg[co] += xv * wrow[co];
              }
            }
            break;
        }
        // Next kernel tap (row-major); stop after the last one.
        bool more = false;
        for (size_t s = spatial; s-- > 0;) {
          if (++tap_pos[s] < taps[s].size()) {
            more = true;
            break;
          }
          tap_pos[s] = 0;
        }
        if (!more) break;
      }
    });
  }
  UnpackPermuted<Acc>(output, g.output_perm, result, inst);
}

}  // namespace

Literal EvaluateConvolution(const Instruction& inst, Operands operands) {
  Require(operands.size() == 2, inst, "expects an input and a kernel");
  const ConvGeometry g = CheckConvolution(inst, operands[0]->shape(), operands[1]->shape());
  Literal result = NewResult(inst);
  switch (
      ChooseAccumulator(inst.shape().type, operands[0]->shape().type, operands[1]->shape().type)) {
    case AccumulatorKind::kF32:
      RunConvolution<float>(inst, *operands[0], *operands[1], g, result);
      break;
    case AccumulatorKind::kF64:
      RunConvolution<double>(inst, *operands[0], *operands[1], g, result);
      break;
    case AccumulatorKind::kInt:
      RunConvolution<uint64_t>(inst, *operands[0], *operands[1], g, result);
      break;
  }
  return result;
}

}  // namespace hlo::eval::rc

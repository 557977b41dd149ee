// BatchNormExpander (batch-norm-expander): replaces batch-norm-inference, -training and -grad
// by elementwise, broadcast and reduce ops (feature dimension `feature_index`, statistics over
// every other dimension, N = elements per feature):
//
//   inference:  true_scale = scale * rsqrt(var + eps);  true_shift = offset - mean * true_scale
//               y = x * broadcast(true_scale) + broadcast(true_shift)        (XLA's expansion)
//   training:   mean = sum(x) / N;  c = x - broadcast(mean);  var = sum(c * c) / N
//               y = c * broadcast(scale * rsqrt(var + eps)) + broadcast(offset)
//               -> tuple(y, mean, var)
//   grad:       c = x - broadcast(mean);  inv = rsqrt(var + eps)
//               grad_offset = sum(dy);  grad_scale = sum(dy * c) * inv
//               grad_x = broadcast(scale * inv) * (dy - broadcast(grad_offset / N)
//                        - c * broadcast(sum(dy * c) / ((var + eps) * N)))
//               -> tuple(grad_x, grad_scale, grad_offset)
//
// The variance is the two-pass E[(x - mean)^2] (XLA uses E[x^2] - E[x]^2, which cancels badly
// when |mean| >> stddev); both are the biased variance the op defines. bf16/f16 operands are
// widened to f32 for the arithmetic and rounded once at the end, as the reference evaluator
// does. Reductions use one scalar f32/f64 add computation per type, `batch_norm_add_<type>`,
// defined ahead of its callers.
//
// Post-condition: no batch-norm-* instruction remains; results agree with the reference
// evaluator within floating-point tolerance (summation order differs).
// Does NOT: fuse the expansion (fusion does), or simplify the tuples training/grad leave for
// their get-tuple-element users (tuple-simplifier does).
#pragma once

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

class BatchNormExpander : public Pass {
 public:
  BatchNormExpander() = default;
  explicit BatchNormExpander(const TargetDescription&) {}
  std::string_view name() const override { return "batch-norm-expander"; }
  std::string_view description() const override {
    return "batch-norm-inference/-training/-grad into elementwise, broadcast and reduce ops";
  }
  bool Run(hlo::Module& module) override;
};

}  // namespace compiler

// Inference of value domains for floating-point parameters, so random inputs drive a real model
// through the regime it was built for instead of into NaN (the float counterpart of
// index_ranges.h, which bounds integer indices).
//
// Two facts are inferred from each parameter's uses:
//
//   positive   the value reaches an operand that is only defined (or only sane) for positive
//              inputs: sqrt, rsqrt, log, log-plus-one, the base of a power whose exponent is not
//              a constant integer, a divide's denominator, the variance of batch-norm-inference
//              / batch-norm-grad. Such values are drawn uniform in [0.5, 1.5): away from 0, so
//              rsqrt(v + eps) and 1/v stay below 1.5 instead of reaching 1/sqrt(eps) ~ 300 for
//              a variance drawn near 0, and of the same order as the N(0, 1) data around them.
//
//   scale      the value is the kernel (rhs) of an unbatched dot or of a convolution. It is drawn
//              N(0, 1/fan_in), fan_in = the product of the rhs contracting dimensions (dot) or
//              kernel elements / output features (convolution: spatial window x input features
//              per group). This is LeCun's initialisation: with unit-variance inputs each output
//              has unit variance, so activations keep a sane magnitude through 50 layers instead
//              of growing by sqrt(fan_in) per layer (with N(0, 1) kernels ResNet-50's output is
//              all NaN even with positive variances). LeCun rather than He (2/fan_in): the
//              corpus models interleave batch norm and residual adds that already keep the
//              scale O(1), and a smaller weight keeps the f32 sums of long contractions
//              (K = 4608) well conditioned.
//              A dot with batch dimensions multiplies two activations (attention's q.k^T and
//              p.v, DLRM's feature interaction) — a weight is shared across the batch — so its
//              operands stay N(0, 1): scaling v would shrink attention outputs to ~1/128, below
//              the bf16 comparison tolerance, and the model already scales q.k^T by 1/sqrt(d).
//
// The walk follows each parameter's users through ops that keep "this is the same value" —
// convert, reshape, bitcast, copy, broadcast, transpose, concatenate, slice, the value operands
// of select, get-tuple-element of tuple parameters, into the computations called by `call` and
// `fusion` (and back out through their results) — and, for `positive` only, through add or
// multiply by a positive constant (v + eps, n * 2 keep the sign). Where a value has several
// uses, positive wins and the smallest scale wins. Integer and pred parameters get the default.
#pragma once

#include <vector>

#include "hlo/ir.h"

namespace io {

struct FloatDomain {
  bool positive = false;  // drawn uniform in [0.5, 1.5) instead of N(0, 1)
  double scale = 1.0;     // multiplies the drawn value: 1/sqrt(fan_in) for kernels
  bool operator==(const FloatDomain&) const = default;
};

// One entry per flattened entry-parameter leaf (parameter order, tuples depth-first), like
// InferParameterValueBounds.
std::vector<FloatDomain> InferFloatParameterDomains(const hlo::Module& module);

}  // namespace io

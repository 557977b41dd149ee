// batch-norm-inference, batch-norm-training and batch-norm-grad for the evaluator, per XLA's
// operation semantics (feature dimension `feature_index`, statistics over all other dims):
//
//   inference: y = (x - mean[c]) * scale[c] / sqrt(var[c] + eps) + offset[c]
//   training:  mean[c] = E[x], var[c] = E[(x - mean[c])^2] (biased), y as above;
//              returns (y, mean, var)
//   grad:      grad_offset[c] = sum(dy)
//              grad_scale[c]  = sum(dy * (x - mean[c])) / sqrt(var[c] + eps)
//              grad_x = scale[c] / sqrt(var[c] + eps)
//                       * (dy - grad_offset[c] / n - (x - mean[c]) * sum(dy * (x - mean[c]))
//                                                    / ((var[c] + eps) * n))
//              with n the element count per feature; returns (grad_x, grad_scale, grad_offset)
//
// Guarantees: computed in f64 and rounded once to the result type; an empty feature (n = 0)
// gives mean 0 and variance 0 rather than dividing by zero. Shapes are validated first.
#include "hlo/evaluator_family_util.h"

namespace hlo::eval::rc {
namespace {

// The operand seen as [outer][features][stride] (row-major), stride = product of the dims after
// the feature dim.
struct FeatureLayout {
  int64_t features = 0, stride = 1, per_feature = 0, outer = 0;
};

// Calls fn(linear_index, feature) for every element in row-major order (no divisions).
template <typename Fn>
void ForEachElement(const FeatureLayout& f, Fn&& fn) {
  size_t i = 0;
  for (int64_t o = 0; o < f.outer; ++o) {
    for (int64_t c = 0; c < f.features; ++c) {
      for (int64_t j = 0; j < f.stride; ++j) fn(i++, c);
    }
  }
}

FeatureLayout CheckFeature(const Instruction& inst, const Shape& operand) {
  Require(inst.has_attr<BatchNormAttrs>(), inst, "missing epsilon/feature_index");
  const int64_t fi = inst.attr<BatchNormAttrs>().feature_index;
  Require(operand.IsArray() && IsFloating(operand.type), inst,
          "operand must be a floating-point array");
  Require(fi >= 0 && fi < operand.rank(), inst,
          "feature_index " + std::to_string(fi) + " is out of range");
  FeatureLayout f;
  f.features = operand.dims[fi];
  f.stride = RowMajorStrides(operand.dims)[fi];
  f.per_feature = f.features == 0 ? 0 : operand.ElementCount() / f.features;
  f.outer = f.features == 0 || f.stride == 0 ? 0 : operand.ElementCount() / (f.features * f.stride);
  return f;
}

std::vector<double> ToDoubles(const Literal& literal, const Instruction& inst) {
  std::vector<int64_t> identity(literal.shape().dims.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int64_t>(i);
  return PackPermuted<double>(literal, identity, inst);
}

void FromDoubles(const std::vector<double>& values, Literal& out, const Instruction& inst) {
  std::vector<int64_t> identity(out.shape().dims.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int64_t>(i);
  UnpackPermuted<double>(values, identity, out, inst);
}

// scale[c] / sqrt(var[c] + eps), computed once per feature.
std::vector<double> NormalizationFactors(const std::vector<double>& scale,
                                         const std::vector<double>& var, double eps) {
  std::vector<double> factor(scale.size());
  for (size_t c = 0; c < scale.size(); ++c) factor[c] = scale[c] / std::sqrt(var[c] + eps);
  return factor;
}

void CheckPerFeature(const Instruction& inst, Operands operands, size_t first,
                     const FeatureLayout& f) {
  for (size_t i = first; i < operands.size(); ++i) {
    const Shape& s = operands[i]->shape();
    if (i == 4 && inst.opcode() == Opcode::kBatchNormGrad) continue;  // grad_output
    Require(s.IsArray() && s.rank() == 1 && s.dims[0] == f.features && IsFloating(s.type), inst,
            "operand " + std::to_string(i) + " must be a float vector of " +
                std::to_string(f.features) + " features");
  }
}

std::vector<Literal*> TupleOutputs(Literal& result, const Instruction& inst) {
  Require(result.IsTuple() && result.elements().size() == 3, inst, "result must be a 3-tuple");
  std::vector<Literal*> outs;
  for (Literal& e : result.mutable_elements()) outs.push_back(&e);
  return outs;
}

void CheckOutputs(const Instruction& inst, const std::vector<Literal*>& outs, const Shape& operand,
                  const FeatureLayout& f) {
  Require(outs[0]->shape().IsArray() && outs[0]->shape().dims == operand.dims, inst,
          "first result must have the operand's shape");
  for (size_t i = 1; i < 3; ++i) {
    Require(outs[i]->shape().IsArray() && outs[i]->shape().dims == std::vector<int64_t>{f.features},
            inst, "statistics results must be vectors of the feature count");
  }
}

Literal BatchNormInference(const Instruction& inst, Operands operands) {
  Require(operands.size() == 5, inst, "expects operand, scale, offset, mean, variance");
  const FeatureLayout f = CheckFeature(inst, operands[0]->shape());
  CheckPerFeature(inst, operands, 1, f);
  Require(inst.shape().IsArray() && inst.shape().dims == operands[0]->shape().dims, inst,
          "result must have the operand's shape");
  const double eps = inst.attr<BatchNormAttrs>().epsilon;
  std::vector<double> x = ToDoubles(*operands[0], inst);
  const std::vector<double> scale = ToDoubles(*operands[1], inst);
  const std::vector<double> offset = ToDoubles(*operands[2], inst);
  const std::vector<double> mean = ToDoubles(*operands[3], inst);
  const std::vector<double> var = ToDoubles(*operands[4], inst);
  const std::vector<double> factor = NormalizationFactors(scale, var, eps);
  ForEachElement(f, [&](size_t i, int64_t c) { x[i] = (x[i] - mean[c]) * factor[c] + offset[c]; });
  Literal result = NewResult(inst);
  FromDoubles(x, result, inst);
  return result;
}

// Per-feature mean and biased variance (two passes, for accuracy).
void Moments(const std::vector<double>& x, const FeatureLayout& f, std::vector<double>& mean,
             std::vector<double>& var) {
  mean.assign(static_cast<size_t>(f.features), 0.0);
  var.assign(static_cast<size_t>(f.features), 0.0);
  if (f.per_feature == 0) return;
  ForEachElement(f, [&](size_t i, int64_t c) { mean[c] += x[i]; });
  for (double& m : mean) m /= static_cast<double>(f.per_feature);
  ForEachElement(f, [&](size_t i, int64_t c) { var[c] += (x[i] - mean[c]) * (x[i] - mean[c]); });
  for (double& v : var) v /= static_cast<double>(f.per_feature);
}

Literal BatchNormTraining(const Instruction& inst, Operands operands) {
  Require(operands.size() == 3, inst, "expects operand, scale, offset");
  const FeatureLayout f = CheckFeature(inst, operands[0]->shape());
  CheckPerFeature(inst, operands, 1, f);
  Literal result = NewResult(inst);
  std::vector<Literal*> outs = TupleOutputs(result, inst);
  CheckOutputs(inst, outs, operands[0]->shape(), f);
  const double eps = inst.attr<BatchNormAttrs>().epsilon;
  std::vector<double> x = ToDoubles(*operands[0], inst);
  const std::vector<double> scale = ToDoubles(*operands[1], inst);
  const std::vector<double> offset = ToDoubles(*operands[2], inst);
  std::vector<double> mean, var;
  Moments(x, f, mean, var);
  const std::vector<double> factor = NormalizationFactors(scale, var, eps);
  ForEachElement(f, [&](size_t i, int64_t c) { x[i] = (x[i] - mean[c]) * factor[c] + offset[c]; });
  FromDoubles(x, *outs[0], inst);
  FromDoubles(mean, *outs[1], inst);
  FromDoubles(var, *outs[2], inst);
  return result;
}

Literal BatchNormGrad(const Instruction& inst, Operands operands) {
  Require(operands.size() == 5, inst, "expects operand, scale, mean, variance, grad_output");
  const FeatureLayout f = CheckFeature(inst, operands[0]->shape());
  CheckPerFeature(inst, operands, 1, f);
  Require(operands[4]->shape().IsArray() && operands[4]->shape().dims == operands[0]->shape().dims,
          inst, "grad_output must have the operand's shape");
  Literal result = NewResult(inst);
  std::vector<Literal*> outs = TupleOutputs(result, inst);
  CheckOutputs(inst, outs, operands[0]->shape(), f);
  const double eps = inst.attr<BatchNormAttrs>().epsilon;
  const std::vector<double> x = ToDoubles(*operands[0], inst);
  const std::vector<double> scale = ToDoubles(*operands[1], inst);
  const std::vector<double> mean = ToDoubles(*operands[2], inst);
  const std::vector<double> var = ToDoubles(*operands[3], inst);
  std::vector<double> dy = ToDoubles(*operands[4], inst);
  std::vector<double> sum_dy(static_cast<size_t>(f.features), 0.0);
  std::vector<double> sum_dy_xc(static_cast<size_t>(f.features), 0.0);
  ForEachElement(f, [&](size_t i, int64_t c) {
    sum_dy[c] += dy[i];
    sum_dy_xc[c] += dy[i] * (x[i] - mean[c]);
  });
  const double n = static_cast<double>(f.per_feature);
  std::vector<double> grad_scale(static_cast<size_t>(f.features));
  for (int64_t c = 0; c < f.features; ++c) grad_scale[c] = sum_dy_xc[c] / std::sqrt(var[c] + eps);
  // Per feature: grad_x = factor * (dy - mean_dy - (x - mean) * slope).
  const std::vector<double> factor = NormalizationFactors(scale, var, eps);
  std::vector<double> mean_dy(static_cast<size_t>(f.features)),
      slope(static_cast<size_t>(f.features));
  for (int64_t c = 0; c < f.features; ++c) {
    mean_dy[c] = sum_dy[c] / n;
    slope[c] = sum_dy_xc[c] / ((var[c] + eps) * n);
  }
  ForEachElement(f, [&](size_t i, int64_t c) {
    dy[i] = factor[c] * (dy[i] - mean_dy[c] - (x[i] - mean[c]) * slope[c]);
  });
  FromDoubles(dy, *outs[0], inst);
  FromDoubles(grad_scale, *outs[1], inst);
  FromDoubles(sum_dy, *outs[2], inst);
  return result;
}

}  // namespace

Literal EvaluateBatchNorm(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kBatchNormInference:
      return BatchNormInference(inst, operands);
    case Opcode::kBatchNormTraining:
      return BatchNormTraining(inst, operands);
    case Opcode::kBatchNormGrad:
      return BatchNormGrad(inst, operands);
    default:
      break;
  }
  Fail(inst, "is not a batch-norm op");
}

}  // namespace hlo::eval::rc

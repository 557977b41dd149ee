#include "compiler/passes/batch_norm_expander.h"

#include <map>
#include <memory>

#include "compiler/passes/rewrite_builder.h"

namespace compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

// Builds the expansion of one batch-norm instruction in its computation.
class Expansion {
 public:
  Expansion(RewriteBuilder& b, ScalarAddComputations& reducers, Instruction* bn)
      : b_(b), reducers_(reducers), bn_(bn),
        attrs_(bn->attr<hlo::BatchNormAttrs>()),
        x_shape_(bn->operand(0)->shape()) {
    b_.set_origin(bn);
    const PrimitiveType t = x_shape_.type;
    widen_ = t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
    compute_type_ = widen_ ? PrimitiveType::kF32 : t;
    features_ = x_shape_.dims[static_cast<size_t>(attrs_.feature_index)];
    const int64_t total = x_shape_.ElementCount();
    // N = 0 only for an empty input: sums are 0 then, and dividing by 1 keeps them 0 (the
    // evaluator's convention for empty features) instead of producing NaN.
    per_feature_ = features_ == 0 || total == 0 ? 1 : total / features_;
  }

  Instruction* Operand(int64_t i) {
    Instruction* x = bn_->operand(i);
    return widen_ ? b_.Convert(x, compute_type_) : x;
  }
  Instruction* Narrow(Instruction* x) {
    return widen_ ? b_.Convert(x, x_shape_.type) : x;
  }
  Instruction* Bin(Opcode op, Instruction* a, Instruction* c) { return b_.Binary(op, a, c); }
  // A per-feature vector spread along the feature dimension of x.
  Instruction* Spread(Instruction* v) {
    return b_.Broadcast(v, x_shape_.dims, {attrs_.feature_index});
  }
  Instruction* FeatureConstant(double value) {
    return b_.Splat(hlo::Shape::Array(compute_type_, {features_}), value);
  }
  // Sum over every dimension but the feature one -> [features].
  Instruction* SumPerFeature(Instruction* x) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x_shape_.rank(); ++d) {
      if (d != attrs_.feature_index) dims.push_back(d);
    }
    Instruction* zero = b_.ScalarConstant(compute_type_, 0.0);
    return b_.Add(Opcode::kReduce, hlo::Shape::Array(compute_type_, {features_}), {x, zero},
                  hlo::DimensionsAttrs{dims}, {}, {reducers_.Add(compute_type_)});
  }
  Instruction* PerFeatureMean(Instruction* x) {
    Instruction* sum = SumPerFeature(x);
    return Bin(Opcode::kDivide, sum, FeatureConstant(static_cast<double>(per_feature_)));
  }
  Instruction* InvStddev(Instruction* variance) {
    Instruction* eps = FeatureConstant(attrs_.epsilon);
    return b_.Unary(Opcode::kRsqrt, Bin(Opcode::kAdd, variance, eps));
  }
  Instruction* Tuple(const std::vector<Instruction*>& elements) {
    return b_.Add(Opcode::kTuple, bn_->shape(), elements, hlo::NoAttrs{});
  }

  // Every intermediate is a named local so the instructions appear in a fixed, readable order
  // (C++ leaves the evaluation order of call arguments unspecified).
  Instruction* Inference() {
    Instruction* x = Operand(0);
    Instruction* scale = Operand(1);
    Instruction* offset = Operand(2);
    Instruction* mean = Operand(3);
    Instruction* variance = Operand(4);
    Instruction* inv = InvStddev(variance);
    Instruction* true_scale = Bin(Opcode::kMultiply, scale, inv);
    Instruction* mean_scaled = Bin(Opcode::kMultiply, mean, true_scale);
    Instruction* true_shift = Bin(Opcode::kSubtract, offset, mean_scaled);
    Instruction* scaled = Bin(Opcode::kMultiply, x, Spread(true_scale));
    Instruction* y = Bin(Opcode::kAdd, scaled, Spread(true_shift));
    return Narrow(y);
  }

  Instruction* Training() {
    Instruction* x = Operand(0);
    Instruction* scale = Operand(1);
    Instruction* offset = Operand(2);
    Instruction* mean = PerFeatureMean(x);
    Instruction* centered = Bin(Opcode::kSubtract, x, Spread(mean));
    Instruction* squares = Bin(Opcode::kMultiply, centered, centered);
    Instruction* variance = PerFeatureMean(squares);
    Instruction* inv = InvStddev(variance);
    Instruction* true_scale = Bin(Opcode::kMultiply, scale, inv);
    Instruction* scaled = Bin(Opcode::kMultiply, centered, Spread(true_scale));
    Instruction* y = Bin(Opcode::kAdd, scaled, Spread(offset));
    Instruction* y_out = Narrow(y);
    Instruction* mean_out = Narrow(mean);
    Instruction* variance_out = Narrow(variance);
    return Tuple({y_out, mean_out, variance_out});
  }

  Instruction* Grad() {
    Instruction* x = Operand(0);
    Instruction* scale = Operand(1);
    Instruction* mean = Operand(2);
    Instruction* variance = Operand(3);
    Instruction* dy = Operand(4);
    Instruction* centered = Bin(Opcode::kSubtract, x, Spread(mean));
    Instruction* inv = InvStddev(variance);
    Instruction* grad_offset = SumPerFeature(dy);
    Instruction* dy_centered = Bin(Opcode::kMultiply, dy, centered);
    Instruction* sum_dy_centered = SumPerFeature(dy_centered);
    Instruction* grad_scale = Bin(Opcode::kMultiply, sum_dy_centered, inv);
    Instruction* n = FeatureConstant(static_cast<double>(per_feature_));
    Instruction* mean_dy = Bin(Opcode::kDivide, grad_offset, n);
    Instruction* eps = FeatureConstant(attrs_.epsilon);
    Instruction* var_eps = Bin(Opcode::kAdd, variance, eps);
    Instruction* var_eps_n = Bin(Opcode::kMultiply, var_eps, n);
    Instruction* projection = Bin(Opcode::kDivide, sum_dy_centered, var_eps_n);
    Instruction* dy_minus_mean = Bin(Opcode::kSubtract, dy, Spread(mean_dy));
    Instruction* along = Bin(Opcode::kMultiply, centered, Spread(projection));
    Instruction* inner = Bin(Opcode::kSubtract, dy_minus_mean, along);
    Instruction* scale_inv = Bin(Opcode::kMultiply, scale, inv);
    Instruction* grad_x = Bin(Opcode::kMultiply, Spread(scale_inv), inner);
    Instruction* grad_x_out = Narrow(grad_x);
    Instruction* grad_scale_out = Narrow(grad_scale);
    Instruction* grad_offset_out = Narrow(grad_offset);
    return Tuple({grad_x_out, grad_scale_out, grad_offset_out});
  }

 private:
  RewriteBuilder& b_;
  ScalarAddComputations& reducers_;
  Instruction* bn_;
  const hlo::BatchNormAttrs attrs_;
  const hlo::Shape x_shape_;
  bool widen_ = false;
  PrimitiveType compute_type_ = PrimitiveType::kF32;
  int64_t features_ = 0;
  int64_t per_feature_ = 1;
};

bool IsBatchNorm(const Instruction& inst) {
  return (inst.opcode() == Opcode::kBatchNormInference ||
          inst.opcode() == Opcode::kBatchNormTraining || inst.opcode() == Opcode::kBatchNormGrad) &&
         inst.has_attr<hlo::BatchNormAttrs>();
}

}  // namespace

bool BatchNormExpander::Run(hlo::Module& module) {
  ScalarAddComputations reducers(module, "batch_norm_add_");
  bool changed = false;
  // Snapshot: expanding adds reducer computations to the module.
  std::vector<hlo::Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (hlo::Computation* computation : computations) {
    std::vector<Instruction*> todo;
    for (const auto& inst : computation->instructions()) {
      if (IsBatchNorm(*inst)) todo.push_back(inst.get());
    }
    if (todo.empty()) continue;
    RewriteBuilder builder(*computation);
    for (Instruction* bn : todo) {
      Expansion expansion(builder, reducers, bn);
      Instruction* result = bn->opcode() == Opcode::kBatchNormInference ? expansion.Inference()
                            : bn->opcode() == Opcode::kBatchNormTraining ? expansion.Training()
                                                                         : expansion.Grad();
      result->mutable_shape() = bn->shape();  // same logical shape; keeps the original layout
      bn->ReplaceAllUsesWith(result);
      RemoveDeadChain(*computation, {bn});
    }
    computation->SortTopologically();
    changed = true;
  }
  return changed;
}

}  // namespace compiler

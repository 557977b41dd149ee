// Value-domain inference for floating-point parameters; see value_domains.h for the rules and
// why they were chosen.
#include "tools/io/value_domains.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "tools/io/index_ranges.h"

namespace io {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Deeper chains are not worth the walk (and the limit guards against odd graphs).
constexpr int kMaxWalkDepth = 32;

FloatDomain Merge(FloatDomain a, const FloatDomain& b) {
  a.positive = a.positive || b.positive;
  a.scale = std::min(a.scale, b.scale);
  return a;
}

// The constant `value` is, seen through broadcast/reshape/convert/copy/bitcast; nullptr if it
// is computed.
const hlo::Literal* ConstantBehind(const Instruction* value) {
  for (int depth = 0; value != nullptr && depth < kMaxWalkDepth; ++depth) {
    switch (value->opcode()) {
      case Opcode::kConstant:
        return value->has_attr<hlo::ConstantAttrs>() ? &value->attr<hlo::ConstantAttrs>().literal
                                                     : nullptr;
      case Opcode::kBroadcast:
      case Opcode::kReshape:
      case Opcode::kConvert:
      case Opcode::kCopy:
      case Opcode::kBitcast:
        if (value->operand_count() != 1) return nullptr;
        value = value->operand(0);
        break;
      default: return nullptr;
    }
  }
  return nullptr;
}

// True if `value` is a constant whose every element satisfies `predicate` (false for tuples,
// empty arrays and computed values).
template <typename Predicate>
bool IsConstantWhere(const Instruction* value, Predicate predicate) {
  const hlo::Literal* literal = ConstantBehind(value);
  if (literal == nullptr || literal->IsTuple() || literal->element_count() == 0) return false;
  for (int64_t i = 0; i < literal->element_count(); ++i) {
    if (!predicate(literal->GetAsDouble(i))) return false;
  }
  return true;
}

bool IsPositiveConstant(const Instruction* value) {
  return IsConstantWhere(value, [](double x) { return std::isfinite(x) && x > 0; });
}

bool IsIntegerConstant(const Instruction* value) {
  return IsConstantWhere(value, [](double x) { return std::isfinite(x) && x == std::trunc(x); });
}

// The domain a kernel operand needs: N(0, 1/fan_in). Nothing for an empty contraction.
FloatDomain KernelDomain(double fan_in) {
  FloatDomain domain;
  if (fan_in >= 1) domain.scale = 1.0 / std::sqrt(fan_in);
  return domain;
}

// A batched dot multiplies two activations (attention's q.k and p.v, DLRM's interaction): a
// weight is shared across the batch, so only an unbatched rhs is a kernel.
FloatDomain DotKernelDomain(const Instruction& dot) {
  if (!dot.has_attr<hlo::DotAttrs>() || dot.operand_count() < 2) return {};
  const hlo::DotDimensionNumbers& dnums = dot.attr<hlo::DotAttrs>().dnums;
  if (!dnums.rhs_batch.empty()) return {};
  const hlo::Shape& rhs = dot.operand(1)->shape();
  double fan_in = 1;
  for (int64_t d : dnums.rhs_contracting) {
    if (d < 0 || d >= rhs.rank()) return {};
    fan_in *= static_cast<double>(rhs.dims[static_cast<size_t>(d)]);
  }
  return KernelDomain(fan_in);
}

// Kernel elements / output features = window size x input features per group, for plain,
// grouped and depthwise convolutions alike.
FloatDomain ConvolutionKernelDomain(const Instruction& convolution) {
  if (!convolution.has_attr<hlo::ConvolutionAttrs>() || convolution.operand_count() < 2) return {};
  const hlo::Shape& kernel = convolution.operand(1)->shape();
  int64_t out_dim = convolution.attr<hlo::ConvolutionAttrs>().dnums.kernel_output_feature;
  if (out_dim < 0 || out_dim >= kernel.rank()) return {};
  int64_t out_features = kernel.dims[static_cast<size_t>(out_dim)];
  if (out_features <= 0) return {};
  return KernelDomain(static_cast<double>(kernel.ElementCount() / out_features));
}

// `sign_only`: the walk has passed through an op that keeps the sign but not the value (v + eps),
// so only `positive` still applies; a kernel scale would no longer describe the parameter.
class DomainWalker {
 public:
  FloatDomain FromUses(const Instruction& value, int depth, bool sign_only) {
    const Instruction* call_site = calls_.empty() ? nullptr : calls_.back();
    if (depth > kMaxWalkDepth || !visited_.insert({&value, call_site, sign_only}).second) {
      return {};
    }
    FloatDomain domain;
    for (const Instruction* user : value.users()) {
      for (int64_t k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) == &value) domain = Merge(domain, FromUse(*user, k, depth, sign_only));
      }
    }
    // The value is what a called computation returns: follow the call's own users.
    if (call_site != nullptr && value.parent() != nullptr && value.parent()->root() == &value) {
      calls_.pop_back();
      domain = Merge(domain, FromUses(*call_site, depth + 1, sign_only));
      calls_.push_back(call_site);
    }
    return domain;
  }

  // Follows get-tuple-element users down `path` to the tuple leaf, then walks its uses.
  FloatDomain ForLeaf(const Instruction& value, const std::vector<int64_t>& path, size_t at) {
    if (at == path.size()) return FromUses(value, 0, /*sign_only=*/false);
    FloatDomain domain;
    for (const Instruction* user : value.users()) {
      if (user->opcode() == Opcode::kGetTupleElement && user->has_attr<hlo::TupleIndexAttrs>() &&
          user->attr<hlo::TupleIndexAttrs>().index == path[at]) {
        domain = Merge(domain, ForLeaf(*user, path, at + 1));
      }
    }
    return domain;
  }

 private:
  FloatDomain FromUse(const Instruction& user, int64_t k, int depth, bool sign_only) {
    auto positive_if = [](bool condition) {
      FloatDomain domain;
      domain.positive = condition;
      return domain;
    };
    auto other_operand = [&]() -> const Instruction* {
      return user.operand_count() == 2 ? user.operand(1 - k) : nullptr;
    };
    switch (user.opcode()) {
      // The same values, moved or re-typed.
      case Opcode::kConvert:
        if (!hlo::IsFloating(user.shape().type)) return {};
        return FromUses(user, depth + 1, sign_only);
      case Opcode::kReshape:
      case Opcode::kBitcast:
      case Opcode::kCopy:
      case Opcode::kBroadcast:
      case Opcode::kTranspose:
      case Opcode::kConcatenate:
      case Opcode::kSlice:
      case Opcode::kReverse: return FromUses(user, depth + 1, sign_only);
      case Opcode::kSelect:  // the chosen values pass through (jnp.where)
        return k >= 1 ? FromUses(user, depth + 1, sign_only) : FloatDomain{};
      case Opcode::kCall:
      case Opcode::kFusion: return InCallee(user, k, depth, sign_only);
      // v + c and v * c with c > 0 keep v's sign: v + eps before rsqrt.
      case Opcode::kAdd:
      case Opcode::kMultiply:
        return IsPositiveConstant(other_operand()) ? FromUses(user, depth + 1, true)
                                                   : FloatDomain{};
      // Operands defined (or finite) only for positive values.
      case Opcode::kSqrt:
      case Opcode::kRsqrt:
      case Opcode::kLog:
      case Opcode::kLog1p: return positive_if(true);
      case Opcode::kDivide: return positive_if(k == 1);
      case Opcode::kPower:
        return positive_if(k == 0 && user.operand_count() == 2 &&
                           !IsIntegerConstant(user.operand(1)));
      case Opcode::kBatchNormInference:  // (x, scale, offset, mean, variance)
        return positive_if(k == 4);
      case Opcode::kBatchNormGrad:  // (x, scale, mean, variance, grad)
        return positive_if(k == 3);
      // Kernels, scaled unless the walk only knows the sign by now.
      case Opcode::kDot: return k == 1 && !sign_only ? DotKernelDomain(user) : FloatDomain{};
      case Opcode::kConvolution:
        return k == 1 && !sign_only ? ConvolutionKernelDomain(user) : FloatDomain{};
      default: return {};  // arithmetic etc.: the value is no longer the parameter's
    }
  }

  // JAX wraps jnp helpers in calls and XLA's CPU dumps wrap dots in fusions: continue at the
  // callee's parameter.
  FloatDomain InCallee(const Instruction& call, int64_t k, int depth, bool sign_only) {
    if (call.called_computations().empty() || call.called_computations()[0] == nullptr) return {};
    const hlo::Computation& callee = *call.called_computations()[0];
    if (k >= callee.parameter_count() || callee.parameter(k) == nullptr) return {};
    calls_.push_back(&call);
    FloatDomain domain = FromUses(*callee.parameter(k), depth + 1, sign_only);
    calls_.pop_back();
    return domain;
  }

  // (instruction, innermost call site, sign_only) already walked.
  std::set<std::tuple<const Instruction*, const Instruction*, bool>> visited_;
  std::vector<const Instruction*> calls_;  // the call/fusion instructions entered, innermost last
};

}  // namespace

std::vector<FloatDomain> InferFloatParameterDomains(const hlo::Module& module) {
  std::vector<FloatDomain> domains;
  for (const ParameterLeafPath& leaf : EntryParameterLeafPaths(module)) {
    DomainWalker walker;  // fresh per leaf: a shared value may constrain several leaves
    domains.push_back(walker.ForLeaf(*leaf.parameter, leaf.path, 0));
  }
  return domains;
}

}  // namespace io

// Epilogue recognition for output fusion (fusion_epilogue.h).
#include "compiler/fusion/fusion_epilogue.h"

#include <algorithm>
#include <complex>

#include "compiler/fusion/fusion_cost.h"

namespace compiler::fusion {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::vector<int64_t> NonUnitDims(const hlo::Shape& shape) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dims[static_cast<size_t>(d)] != 1) out.push_back(d);
  }
  return out;
}

std::vector<int64_t> NonUnitSizes(const hlo::Shape& shape) {
  std::vector<int64_t> out;
  for (int64_t d : NonUnitDims(shape)) out.push_back(shape.dims[static_cast<size_t>(d)]);
  return out;
}

// A broadcast whose operand varies only along `feature_dim` of the result (or not at all).
bool IsPerFeatureBroadcast(const Instruction& b, int64_t feature_dim, bool* is_scalar) {
  if (b.opcode() != Opcode::kBroadcast) return false;
  const auto& dims = b.attr<hlo::DimensionsAttrs>().dimensions;
  const hlo::Shape& in = b.operand(0)->shape();
  *is_scalar = true;
  for (int64_t j = 0; j < in.rank() && j < static_cast<int64_t>(dims.size()); ++j) {
    if (in.dims[static_cast<size_t>(j)] == 1) continue;
    *is_scalar = false;
    if (feature_dim < 0 || dims[static_cast<size_t>(j)] != feature_dim) return false;
  }
  return true;
}

bool IsZeroConstant(const Instruction& inst) {
  if (inst.opcode() != Opcode::kConstant || !inst.shape().IsArray()) return false;
  const hlo::Literal& literal = inst.attr<hlo::ConstantAttrs>().literal;
  if (literal.element_count() > kSmallConstantElements) return false;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (literal.GetComplex(i) != std::complex<double>(0.0)) return false;  // both parts of c64
  }
  return true;
}

// The broadcast plus its operand when that is a small constant (both fused, duplicated if
// shared: they compute nothing).
std::vector<Instruction*> BroadcastMembers(Instruction* broadcast) {
  std::vector<Instruction*> members{broadcast};
  Instruction* operand = broadcast->operand(0);
  if (operand->opcode() == Opcode::kConstant && !IsNeverFusible(*operand)) {
    members.push_back(operand);
  }
  return members;
}

}  // namespace

std::string_view EpilogueName(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::kBiasAdd: return "bias-add";
    case Epilogue::kScale: return "scale";
    case Epilogue::kRelu: return "relu";
    case Epilogue::kGelu: return "gelu";
    case Epilogue::kConvert: return "convert";
    case Epilogue::kResidualAdd: return "residual-add";
  }
  return "unknown";
}

int64_t ContractionFeatureDim(const Instruction& c) {
  if (c.opcode() == Opcode::kConvolution) {
    return c.attr<hlo::ConvolutionAttrs>().dnums.output_feature;
  }
  if (c.opcode() != Opcode::kDot) return -1;
  const hlo::DotDimensionNumbers& d = c.attr<hlo::DotAttrs>().dnums;
  const int64_t rhs_free = c.operand(1)->shape().rank() -
                           static_cast<int64_t>(d.rhs_batch.size() + d.rhs_contracting.size());
  return rhs_free == 1 ? c.shape().rank() - 1 : -1;
}

std::optional<EpilogueStep> ClassifyEpilogueStep(const Instruction& value,
                                                 const Instruction& consumer, int64_t index,
                                                 int64_t feature_dim, std::string* why) {
  EpilogueStep step;
  step.feature_dim = feature_dim;
  const std::string op(hlo::OpcodeName(consumer.opcode()));
  switch (consumer.opcode()) {
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      const bool plain = consumer.opcode() == Opcode::kReshape ||
                         (value.shape().HasDefaultLayout() && consumer.shape().HasDefaultLayout());
      if (!plain || NonUnitSizes(value.shape()) != NonUnitSizes(consumer.shape())) {
        *why = "a non-degenerate " + op + " after the contraction ends the epilogue chain";
        return std::nullopt;
      }
      step.feature_dim = -1;
      if (feature_dim >= 0 && value.shape().dims[static_cast<size_t>(feature_dim)] != 1) {
        const std::vector<int64_t> from = NonUnitDims(value.shape());
        const std::vector<int64_t> to = NonUnitDims(consumer.shape());
        const auto m = std::find(from.begin(), from.end(), feature_dim) - from.begin();
        step.feature_dim = to[static_cast<size_t>(m)];
      }
      return step;
    }
    case Opcode::kConvert:
      if (!hlo::IsFloating(consumer.shape().type) || !hlo::IsFloating(value.shape().type)) {
        *why = "convert to a non-float type is not an epilogue";
        return std::nullopt;
      }
      step.epilogue = Epilogue::kConvert;
      return step;
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum: {
      Instruction* other = consumer.operand(1 - index);
      bool scalar = false;
      const bool per_feature = IsPerFeatureBroadcast(*other, feature_dim, &scalar);
      if (consumer.opcode() == Opcode::kAdd) {
        if (per_feature) {
          step.epilogue = Epilogue::kBiasAdd;
          step.side_members = BroadcastMembers(other);
          return step;
        }
        if (other->shape().Compatible(value.shape()) && other->opcode() != Opcode::kBroadcast) {
          step.epilogue = Epilogue::kResidualAdd;
          return step;
        }
        *why = "add operand is neither a bias along the output features nor a residual";
        return std::nullopt;
      }
      if (consumer.opcode() == Opcode::kMultiply) {
        if (per_feature) {
          step.epilogue = Epilogue::kScale;
          step.side_members = BroadcastMembers(other);
          return step;
        }
        *why = "multiply operand is not a scalar or per-feature scale";
        return std::nullopt;
      }
      const bool zero = IsZeroConstant(*other) || (other->opcode() == Opcode::kBroadcast &&
                                                   IsZeroConstant(*other->operand(0)));
      if (!zero) {
        *why = "maximum with a non-zero operand is not a relu";
        return std::nullopt;
      }
      step.epilogue = Epilogue::kRelu;
      if (other->opcode() == Opcode::kBroadcast) {
        step.side_members = BroadcastMembers(other);
      } else {
        step.side_members = {other};
      }
      return step;
    }
    default:
      *why = "consumer " + op + " is not a contraction epilogue";
      return std::nullopt;
  }
}

}  // namespace compiler::fusion

// MatchRequantize (requantize_pattern.h).
#include "targets/systolic/lowering/requantize_pattern.h"

#include <cmath>

#include "hlo/literal.h"

namespace systolic::lowering {
namespace {

// The value of a scalar constant, possibly broadcast.
std::optional<double> ConstantValue(const hlo::Instruction* inst) {
  if (inst->opcode() == hlo::Opcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != hlo::Opcode::kConstant || !inst->shape().IsArray() ||
      inst->shape().ElementCount() != 1) {
    return std::nullopt;
  }
  return inst->attr<hlo::ConstantAttrs>().literal.GetAsDouble(0);
}

}  // namespace

std::optional<RequantizePattern> MatchRequantize(const hlo::Instruction& convert) {
  hlo::PrimitiveType to = convert.shape().type;
  if (convert.opcode() != hlo::Opcode::kConvert ||
      (to != hlo::PrimitiveType::kS8 && to != hlo::PrimitiveType::kU8)) {
    return std::nullopt;
  }
  const hlo::Instruction* clamp = convert.operand(0);
  if (clamp->opcode() != hlo::Opcode::kClamp) return std::nullopt;
  const hlo::Instruction* round = clamp->operand(1);
  if (round->opcode() != hlo::Opcode::kRoundNearestEven ||
      round->shape().type != kRequantizeInputType ||
      round->shape().ElementCount() != convert.shape().ElementCount()) {
    return std::nullopt;
  }
  std::optional<double> lo = ConstantValue(clamp->operand(0));
  std::optional<double> hi = ConstantValue(clamp->operand(2));
  const double min = to == hlo::PrimitiveType::kS8 ? -128 : 0;
  const double max = to == hlo::PrimitiveType::kS8 ? 127 : 255;
  if (!lo || !hi || *lo != std::floor(*lo) || *hi != std::floor(*hi) || *lo < min ||
      *hi > max || *lo > *hi) {
    return std::nullopt;
  }
  return RequantizePattern{round->operand(0), *lo, *hi};
}

}  // namespace systolic::lowering

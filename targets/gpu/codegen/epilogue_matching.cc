// kOutput fusion roots -> cuBLASLt epilogues (see epilogue_matching.h).
#include "targets/gpu/codegen/epilogue_matching.h"

#include <cmath>

namespace gpu_codegen {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// broadcast(constant +0.0) of any shape.
bool IsPositiveZeroSplat(const Instruction& inst) {
  if (inst.opcode() != Opcode::kBroadcast) return false;
  const Instruction& scalar = *inst.operand(0);
  if (scalar.opcode() != Opcode::kConstant || scalar.shape().rank() != 0) return false;
  const double value = scalar.attr<hlo::ConstantAttrs>().literal.GetAsDouble(0);
  return value == 0.0 && !std::signbit(value);
}

// broadcast(parameter p : [n]) along dimension 1 of a rank-2 result: p's number, else -1.
int64_t ColumnBiasParameter(const Instruction& inst) {
  if (inst.opcode() != Opcode::kBroadcast || inst.shape().rank() != 2) return -1;
  const Instruction& bias = *inst.operand(0);
  if (bias.opcode() != Opcode::kParameter || bias.shape().rank() != 1) return -1;
  if (inst.attr<hlo::DimensionsAttrs>().dimensions != std::vector<int64_t>{1}) return -1;
  return bias.attr<hlo::ParameterAttrs>().number;
}

}  // namespace

std::optional<MatchedEpilogue> MatchCublasLtEpilogue(const hlo::Computation& fused,
                                                     const Instruction& dot) {
  const Instruction* value = fused.root();
  if (value == &dot) return MatchedEpilogue{};
  if (dot.shape().rank() != 2 || value->shape().type != dot.shape().type ||
      !dot.attr<hlo::DotAttrs>().dnums.lhs_batch.empty())
    return std::nullopt;
  bool relu = false;
  if (value->opcode() == Opcode::kMaximum) {
    if (IsPositiveZeroSplat(*value->operand(1))) {
      value = value->operand(0);
    } else if (IsPositiveZeroSplat(*value->operand(0))) {
      value = value->operand(1);
    } else {
      return std::nullopt;
    }
    relu = true;
  }
  if (value == &dot) return MatchedEpilogue{gpu::Epilogue::kRelu, -1};
  if (value->opcode() != Opcode::kAdd) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    if (value->operand(side) != &dot) continue;
    const int64_t bias = ColumnBiasParameter(*value->operand(1 - side));
    if (bias < 0) return std::nullopt;
    return MatchedEpilogue{relu ? gpu::Epilogue::kReluBias : gpu::Epilogue::kBias, bias};
  }
  return std::nullopt;
}

}  // namespace gpu_codegen

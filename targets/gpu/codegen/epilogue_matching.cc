// kOutput fusion roots -> cuBLASLt epilogues (see epilogue_matching.h).
#include "targets/gpu/codegen/epilogue_matching.h"

#include <cmath>

namespace gpu::codegen {

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

// broadcast(constant c) with c within f32 rounding of `expected`.
bool IsSplatOf(const Instruction& inst, double expected) {
  if (inst.opcode() != Opcode::kBroadcast) return false;
  const Instruction& scalar = *inst.operand(0);
  if (scalar.opcode() != Opcode::kConstant || scalar.shape().rank() != 0) return false;
  const double value = scalar.attr<hlo::ConstantAttrs>().literal.GetAsDouble(0);
  return std::abs(value - expected) <= 1e-6 * std::abs(expected);
}

// `inst` is opcode(a, b) in either operand order: sets `other` to the operand that is not
// matched by `is_first`.
template <typename Predicate>
bool BinaryWith(const Instruction& inst, Opcode opcode, Predicate is_first,
                const Instruction*& other) {
  if (inst.opcode() != opcode) return false;
  for (int side = 0; side < 2; ++side)
    if (is_first(*inst.operand(side))) {
      other = inst.operand(1 - side);
      return true;
    }
  return false;
}

// x·x·x as multiply(x, multiply(x, x)) in any operand order, or power(x, broadcast(3)).
bool IsCube(const Instruction& inst, const Instruction& x) {
  const Instruction* rest = nullptr;
  if (inst.opcode() == Opcode::kPower)
    return inst.operand(0) == &x && IsSplatOf(*inst.operand(1), 3.0);
  if (!BinaryWith(inst, Opcode::kMultiply, [&](const Instruction& i) { return &i == &x; }, rest))
    return false;
  return rest->opcode() == Opcode::kMultiply && rest->operand(0) == &x && rest->operand(1) == &x;
}

// `root` is the tanh approximation of GELU of `x` (jax.nn.gelu(approximate=True)):
//     x · (0.5 · (1 + tanh(sqrt(2/π) · (x + 0.044715 · x³))))
// with every multiply and add in either operand order.
bool IsTanhGelu(const Instruction& root, const Instruction& x) {
  const double kSqrt2OverPi = 0.7978845608028654, kCubic = 0.044715;
  auto is_x = [&](const Instruction& i) { return &i == &x; };
  const Instruction *half_cdf = nullptr, *one_plus = nullptr, *tanh_value = nullptr,
                    *inner = nullptr, *sum = nullptr, *scaled_cube = nullptr, *cube = nullptr;
  return BinaryWith(root, Opcode::kMultiply, is_x, half_cdf) &&
         BinaryWith(*half_cdf, Opcode::kMultiply,
                    [&](const Instruction& i) { return IsSplatOf(i, 0.5); }, one_plus) &&
         BinaryWith(*one_plus, Opcode::kAdd,
                    [&](const Instruction& i) { return IsSplatOf(i, 1.0); }, tanh_value) &&
         tanh_value->opcode() == Opcode::kTanh && (inner = tanh_value->operand(0)) != nullptr &&
         BinaryWith(*inner, Opcode::kMultiply,
                    [&](const Instruction& i) { return IsSplatOf(i, kSqrt2OverPi); }, sum) &&
         BinaryWith(*sum, Opcode::kAdd, is_x, scaled_cube) &&
         BinaryWith(*scaled_cube, Opcode::kMultiply,
                    [&](const Instruction& i) { return IsSplatOf(i, kCubic); }, cube) &&
         IsCube(*cube, x);
}

// `value` is D or add(D, b) with b a column bias: the bias parameter (-1 for none) and whether
// it matched at all.
std::optional<int64_t> DotOrDotPlusBias(const Instruction& value, const Instruction& dot) {
  if (&value == &dot) return -1;
  if (value.opcode() != Opcode::kAdd) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    if (value.operand(side) != &dot) continue;
    const int64_t bias = ColumnBiasParameter(*value.operand(1 - side));
    if (bias >= 0) return bias;
  }
  return std::nullopt;
}

// The GELU epilogues: root = gelu(x) with x = D or add(D, b).
std::optional<MatchedEpilogue> MatchGelu(const Instruction& root, const Instruction& dot) {
  if (root.opcode() != Opcode::kMultiply) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const Instruction& x = *root.operand(side);
    const std::optional<int64_t> bias = DotOrDotPlusBias(x, dot);
    if (bias && IsTanhGelu(root, x))
      return MatchedEpilogue{*bias >= 0 ? gpu::Epilogue::kGeluBias : gpu::Epilogue::kGelu, *bias};
  }
  return std::nullopt;
}

}  // namespace

std::optional<MatchedEpilogue> MatchCublasLtEpilogue(const hlo::Computation& fused,
                                                     const Instruction& dot) {
  const Instruction* value = fused.root();
  if (value == &dot) return MatchedEpilogue{};
  if (dot.shape().rank() != 2 || value->shape().type != dot.shape().type ||
      !dot.attr<hlo::DotAttrs>().dnums.lhs_batch.empty())
    return std::nullopt;
  if (std::optional<MatchedEpilogue> gelu = MatchGelu(*value, dot)) return gelu;
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

}  // namespace gpu::codegen

// MatchRequantize (requantize_pattern.h).
#include "targets/systolic/lowering/requantize_pattern.h"

#include <cmath>
#include <cstdlib>

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

// The value of an integer scalar constant, possibly broadcast.
std::optional<int64_t> IntegerConstant(const hlo::Instruction* inst) {
  if (inst->opcode() == hlo::Opcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != hlo::Opcode::kConstant || !inst->shape().IsArray() ||
      inst->shape().ElementCount() != 1 || !hlo::IsInteger(inst->shape().type)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(inst->attr<hlo::ConstantAttrs>().literal.GetAsDouble(0));
}

// Walks the integer idiom of MatchIntegerRequantize below the clamp.
class IntegerIdiom {
 public:
  IntegerIdiom(const std::function<bool(const hlo::Instruction*)>& outside,
               const std::function<const hlo::Instruction*(const hlo::Instruction*)>& resolve)
      : outside_(outside), resolve_(resolve) {}

  // x = add(y, zp) | y.
  bool MatchOffset(const hlo::Instruction* x) {
    if (Inside(x) && x->opcode() == hlo::Opcode::kAdd) {
      for (int side = 0; side < 2; ++side) {
        std::optional<int64_t> zp = Constant(Operand(x, 1 - side));
        if (!zp || *zp <= -(int64_t{1} << 30) || *zp >= (int64_t{1} << 30)) continue;
        // y must stay within 2^30 for the s32 add not to wrap: a shift by at least 1.
        if (MatchRescale(Operand(x, side)) && (quant_.shift >= 1 || *zp == 0)) {
          quant_.zero_point = static_cast<int32_t>(*zp);
          return true;
        }
        quant_ = Requantization{};
      }
    }
    return MatchRescale(x);
  }

  const hlo::Instruction* value() const { return value_; }
  const Requantization& quant() const { return quant_; }

 private:
  bool Inside(const hlo::Instruction* inst) const { return !outside_ || !outside_(inst); }
  // The instruction computing operand `i` of `inst` (through the caller's substitutions).
  const hlo::Instruction* Operand(const hlo::Instruction* inst, int64_t i) const {
    const hlo::Instruction* operand = inst->operand(i);
    return resolve_ ? resolve_(operand) : operand;
  }
  std::optional<int64_t> Constant(const hlo::Instruction* inst) const {
    if (!Inside(inst) ||
        (inst->opcode() == hlo::Opcode::kBroadcast && !Inside(inst->operand(0)))) {
      return std::nullopt;
    }
    return IntegerConstant(inst);
  }
  static bool IsS32(const hlo::Instruction* inst) {
    return inst->shape().IsArray() && inst->shape().type == hlo::PrimitiveType::kS32;
  }

  // y in s32: the gemmlowp form, a shift, or v itself.
  bool MatchRescale(const hlo::Instruction* y) {
    if (!IsS32(y)) return false;
    if (Inside(y) && y->opcode() == hlo::Opcode::kConvert &&
        Operand(y, 0)->shape().type == hlo::PrimitiveType::kS64) {
      return MatchFixedPoint(Operand(y, 0));
    }
    quant_.mode = Requantization::Mode::kFixedPointFloor;
    quant_.multiplier = 1;
    if (Inside(y) && y->opcode() == hlo::Opcode::kShiftRightArithmetic) {
      std::optional<int64_t> n = Constant(Operand(y, 1));
      if (!n || *n < 0 || *n > 62) return false;
      quant_.shift = static_cast<uint32_t>(*n);
      const hlo::Instruction* shifted = Operand(y, 0);
      if (Inside(shifted) && shifted->opcode() == hlo::Opcode::kMaximum) {
        for (int side = 0; side < 2; ++side) {
          std::optional<int64_t> zero = Constant(Operand(shifted, 1 - side));
          if (zero && *zero == 0 && IsS32(Operand(shifted, side))) {
            quant_.relu = true;
            value_ = Operand(shifted, side);
            return true;
          }
        }
      }
      value_ = shifted;
      return true;
    }
    value_ = y;  // a plain clamp of s32
    return true;
  }

  // s64: shift-right-arithmetic(add(multiply(convert<s64>(v), M), 2^(n-1)) | multiply(...), n).
  bool MatchFixedPoint(const hlo::Instruction* shift) {
    if (!Inside(shift) || shift->opcode() != hlo::Opcode::kShiftRightArithmetic) return false;
    std::optional<int64_t> n = Constant(Operand(shift, 1));
    if (!n || *n < 1 || *n > 62) return false;
    const hlo::Instruction* product = Operand(shift, 0);
    quant_.mode = Requantization::Mode::kFixedPointFloor;
    if (Inside(product) && product->opcode() == hlo::Opcode::kAdd) {
      const hlo::Instruction* found = nullptr;
      for (int side = 0; side < 2 && !found; ++side) {
        std::optional<int64_t> nudge = Constant(Operand(product, 1 - side));
        if (nudge && *nudge == (int64_t{1} << (*n - 1))) found = Operand(product, side);
      }
      if (!found) return false;
      quant_.mode = Requantization::Mode::kFixedPointRound;
      product = found;
    }
    if (!Inside(product) || product->opcode() != hlo::Opcode::kMultiply) return false;
    for (int side = 0; side < 2; ++side) {
      std::optional<int64_t> m = Constant(Operand(product, 1 - side));
      const hlo::Instruction* widen = Operand(product, side);
      if (!m || *m == 0 || std::abs(*m) > (int64_t{1} << (*n - 1)) ||
          std::abs(*m) >= (int64_t{1} << 31) || !Inside(widen) ||
          widen->opcode() != hlo::Opcode::kConvert || !IsS32(Operand(widen, 0))) {
        continue;
      }
      quant_.multiplier = static_cast<int32_t>(*m);
      quant_.shift = static_cast<uint32_t>(*n);
      value_ = Operand(widen, 0);
      return true;
    }
    return false;
  }

  const std::function<bool(const hlo::Instruction*)>& outside_;
  const std::function<const hlo::Instruction*(const hlo::Instruction*)>& resolve_;
  Requantization quant_;
  const hlo::Instruction* value_ = nullptr;
};

}  // namespace

std::optional<IntegerRequantizePattern> MatchIntegerRequantize(
    const hlo::Instruction& convert, const std::function<bool(const hlo::Instruction*)>& outside,
    const std::function<const hlo::Instruction*(const hlo::Instruction*)>& resolve) {
  const hlo::PrimitiveType to = convert.shape().type;
  if (convert.opcode() != hlo::Opcode::kConvert ||
      (to != hlo::PrimitiveType::kS8 && to != hlo::PrimitiveType::kU8)) {
    return std::nullopt;
  }
  const hlo::Instruction* clamp = convert.operand(0);
  if ((outside && outside(clamp)) || clamp->opcode() != hlo::Opcode::kClamp ||
      clamp->shape().type != hlo::PrimitiveType::kS32 ||
      clamp->operand(1)->shape().ElementCount() != convert.shape().ElementCount()) {
    return std::nullopt;
  }
  IntegerIdiom idiom(outside, resolve);
  auto bound = [&](const hlo::Instruction* b) -> std::optional<int64_t> {
    if (outside && (outside(b) || (b->opcode() == hlo::Opcode::kBroadcast &&
                                   outside(b->operand(0))))) {
      return std::nullopt;
    }
    return IntegerConstant(b);
  };
  std::optional<int64_t> lo = bound(clamp->operand(0)), hi = bound(clamp->operand(2));
  const int64_t min = to == hlo::PrimitiveType::kS8 ? -128 : 0;
  const int64_t max = to == hlo::PrimitiveType::kS8 ? 127 : 255;
  const hlo::Instruction* clamped = resolve ? resolve(clamp->operand(1)) : clamp->operand(1);
  if (!lo || !hi || *lo < min || *hi > max || *lo > *hi || !idiom.MatchOffset(clamped)) {
    return std::nullopt;
  }
  IntegerRequantizePattern pattern{idiom.value(), idiom.quant(), static_cast<double>(*lo),
                                   static_cast<double>(*hi), {}};
  // Every node between the convert and v: by construction the idiom's steps and constants.
  std::vector<const hlo::Instruction*> stack = {&convert};
  while (!stack.empty()) {
    const hlo::Instruction* step = stack.back();
    stack.pop_back();
    if (step == pattern.value || !pattern.steps.insert(step).second) continue;
    for (const hlo::Instruction* operand : step->operands()) stack.push_back(operand);
  }
  return pattern;
}

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

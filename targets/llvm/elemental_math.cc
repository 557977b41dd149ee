// Elementwise ops (unary, binary, ternary classes of hlo/opcodes.def): the element rule of each
// opcode for float, integer and pred types, following the semantics at the top of hlo/ir.h.
//
// Guarantees:
//   - bf16/f16 are widened to f32, computed, and rounded to nearest even (elemental_util.h).
//   - Integer divide/remainder never execute a trapping division: the divisor is replaced by 1
//     where the result is defined by ir.h's special cases (x/0 = -1, INT_MIN/-1 = INT_MIN,
//     x%0 = x, INT_MIN%-1 = 0). Shifts never shift by >= the width (no poison): such amounts
//     give 0 or the sign fill explicitly.
//   - maximum/minimum propagate NaN exactly as the interpreter (first NaN operand wins).
//   - Type errors (e.g. `not` on f32, `exponential` on s32) are hlo::Errors raised when the
//     generator is made, before any IR is emitted.
#include <string>

#include <llvm/IR/Intrinsics.h>

#include "hlo/shape_inference.h"
#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"
#include "targets/llvm/llvm_math.h"
#include "targets/llvm/llvm_math_fast.h"

namespace llvm_codegen {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

// Arithmetic (add ... power, abs/negate/sign) is defined on numbers; hlo/'s type table
// (ElementwiseAcceptsType) admits pred for it, which the emitter does not implement.
bool IsArithmetic(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign:
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kPower:
      return true;
    default:
      return false;
  }
}

llvm::Value* EmitIntegerPower(llvm::IRBuilder<>& b, bool is_signed, llvm::Value* base,
                              llvm::Value* exponent) {
  // Square-and-multiply over every exponent bit, unrolled (straight-line, wrapping).
  llvm::Type* type = base->getType();
  const unsigned width = type->getIntegerBitWidth();
  llvm::Value* one = llvm::ConstantInt::get(type, 1);
  llvm::Value* result = one;
  llvm::Value* power = base;
  for (unsigned bit = 0; bit < width; ++bit) {
    llvm::Value* set = b.CreateTrunc(b.CreateLShr(exponent, bit), b.getInt1Ty());
    result = b.CreateSelect(set, b.CreateMul(result, power), result);
    if (bit + 1 < width) power = b.CreateMul(power, power);
  }
  if (!is_signed) return result;
  // Negative exponents: 1^n = 1, (-1)^n = ±1, anything else 0.
  llvm::Value* minus_one = llvm::ConstantInt::getSigned(type, -1);
  llvm::Value* odd = b.CreateTrunc(exponent, b.getInt1Ty());
  llvm::Value* negative_result = b.CreateSelect(
      b.CreateICmpEQ(base, one), one,
      b.CreateSelect(b.CreateICmpEQ(base, minus_one), b.CreateSelect(odd, minus_one, one),
                     llvm::ConstantInt::get(type, 0)));
  return b.CreateSelect(b.CreateICmpSLT(exponent, llvm::ConstantInt::get(type, 0)), negative_result,
                        result);
}

llvm::Value* EmitIntegerUnary(llvm::IRBuilder<>& b, const Instruction& inst, PrimitiveType type,
                              llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  const bool is_signed = hlo::IsSignedInteger(type);
  switch (inst.opcode()) {
    case Opcode::kNot:
      return b.CreateNot(x);
    case Opcode::kNegate:
      return b.CreateSub(zero, x);
    case Opcode::kAbs:
      return is_signed ? b.CreateSelect(b.CreateICmpSLT(x, zero), b.CreateSub(zero, x), x) : x;
    case Opcode::kSign: {
      llvm::Value* positive = b.CreateZExt(b.CreateICmpSGT(x, zero), t);
      if (!is_signed) return b.CreateZExt(b.CreateICmpNE(x, zero), t);
      return b.CreateSub(positive, b.CreateZExt(b.CreateICmpSLT(x, zero), t));
    }
    case Opcode::kPopulationCount:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
    case Opcode::kClz:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b.getFalse());  // clz(0) = width
    default:
      break;
  }
  detail::Fail(inst, "no integer rule");
}

llvm::Value* EmitIntegerBinary(llvm::IRBuilder<>& b, const Instruction& inst, PrimitiveType type,
                               llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  const unsigned width = t->getIntegerBitWidth();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* all_ones = llvm::ConstantInt::getSigned(t, -1);
  const bool is_signed = hlo::IsSignedInteger(type);
  const bool is_pred = type == PrimitiveType::kPred;
  llvm::Value* too_far = b.CreateICmpUGE(y, llvm::ConstantInt::get(t, width));
  llvm::Value* safe_amount = b.CreateSelect(too_far, zero, y);
  switch (inst.opcode()) {
    case Opcode::kAdd:
      return b.CreateAdd(x, y);
    case Opcode::kSubtract:
      return b.CreateSub(x, y);
    case Opcode::kMultiply:
      return b.CreateMul(x, y);
    case Opcode::kAnd:
      return b.CreateAnd(x, y);
    case Opcode::kOr:
      return b.CreateOr(x, y);
    case Opcode::kXor:
      return b.CreateXor(x, y);
    case Opcode::kMaximum:
      if (is_pred) return b.CreateOr(x, y);
      return b.CreateSelect(is_signed ? b.CreateICmpSGT(x, y) : b.CreateICmpUGT(x, y), x, y);
    case Opcode::kMinimum:
      if (is_pred) return b.CreateAnd(x, y);
      return b.CreateSelect(is_signed ? b.CreateICmpSLT(x, y) : b.CreateICmpULT(x, y), x, y);
    case Opcode::kDivide: {
      llvm::Value* by_zero = b.CreateICmpEQ(y, zero);
      if (!is_signed) {
        llvm::Value* quotient = b.CreateUDiv(x, b.CreateSelect(by_zero, one, y));
        return b.CreateSelect(by_zero, all_ones, quotient);
      }
      llvm::Value* overflow = b.CreateAnd(
          b.CreateICmpEQ(x, llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(width))),
          b.CreateICmpEQ(y, all_ones));
      // INT_MIN / 1 = INT_MIN is the defined INT_MIN / -1 result.
      llvm::Value* quotient =
          b.CreateSDiv(x, b.CreateSelect(b.CreateOr(by_zero, overflow), one, y));
      return b.CreateSelect(by_zero, all_ones, quotient);
    }
    case Opcode::kRemainder: {
      llvm::Value* by_zero = b.CreateICmpEQ(y, zero);
      if (!is_signed)
        return b.CreateSelect(by_zero, x, b.CreateURem(x, b.CreateSelect(by_zero, one, y)));
      // x % -1 = 0 = x % 1, which also covers INT_MIN % -1 without overflow.
      llvm::Value* unit = b.CreateOr(by_zero, b.CreateICmpEQ(y, all_ones));
      return b.CreateSelect(by_zero, x, b.CreateSRem(x, b.CreateSelect(unit, one, y)));
    }
    case Opcode::kShiftLeft:
      return b.CreateSelect(too_far, zero, b.CreateShl(x, safe_amount));
    case Opcode::kShiftRightLogical:
      return b.CreateSelect(too_far, zero, b.CreateLShr(x, safe_amount));
    case Opcode::kShiftRightArithmetic:
      return b.CreateAShr(x, b.CreateSelect(too_far, llvm::ConstantInt::get(t, width - 1), y));
    case Opcode::kPower:
      return EmitIntegerPower(b, is_signed, x, y);
    default:
      break;
  }
  detail::Fail(inst, "no integer rule");
}

llvm::Value* EmitClamp(llvm::IRBuilder<>& b, PrimitiveType type, llvm::Value* lo, llvm::Value* x,
                       llvm::Value* hi) {
  if (hlo::IsFloating(type)) {
    lo = detail::Widen(b, lo, type);
    x = detail::Widen(b, x, type);
    hi = detail::Widen(b, hi, type);
    llvm::Value* low_bounded = b.CreateSelect(b.CreateFCmpOGT(x, lo), x, lo);
    llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOLT(low_bounded, hi), low_bounded, hi);
    llvm::Value* any_nan = b.CreateOr(b.CreateFCmpUNO(lo, x), b.CreateFCmpUNO(hi, hi));
    return detail::Narrow(
        b, b.CreateSelect(any_nan, llvm::ConstantFP::getNaN(x->getType()), clamped), type);
  }
  const bool is_signed = hlo::IsSignedInteger(type);
  llvm::Value* low_bounded =
      b.CreateSelect(is_signed ? b.CreateICmpSGT(x, lo) : b.CreateICmpUGT(x, lo), x, lo);
  return b.CreateSelect(
      is_signed ? b.CreateICmpSLT(low_bounded, hi) : b.CreateICmpULT(low_bounded, hi), low_bounded,
      hi);
}

}  // namespace

ElementGenerator ElementalEmitter::MakeElementwiseGenerator(
    const Instruction& inst, std::vector<ElementGenerator> operands) {
  const PrimitiveType operand_type = inst.operand(0)->shape().type;
  const PrimitiveType type = inst.shape().type;
  if (!hlo::ElementwiseAcceptsType(inst.opcode(), operand_type) ||
      (IsArithmetic(inst.opcode()) && operand_type == PrimitiveType::kPred)) {
    detail::Fail(inst, "not defined for " + std::string(hlo::PrimitiveTypeName(operand_type)));
  }
  if (inst.opcode() == Opcode::kReducePrecision) {
    const auto& attrs = inst.attr<hlo::ReducePrecisionAttrs>();
    if (attrs.exponent_bits < 1 || attrs.mantissa_bits < 0) {
      detail::Fail(inst, "needs exponent_bits >= 1 and mantissa_bits >= 0");
    }
  }
  if (inst.opcode() == Opcode::kBitcastConvert &&
      hlo::BitWidth(operand_type) != hlo::BitWidth(type)) {
    const int operand_width = hlo::BitWidth(operand_type);
    const int width = hlo::BitWidth(type);
    if (operand_type == PrimitiveType::kPred || type == PrimitiveType::kPred) {
      detail::Fail(inst, "bitcast-convert between pred and a wider type");
    }
    ElementGenerator operand = operands[0];
    llvm::IRBuilder<>& b = b_;
    if (operand_width > width) {
      // Wide -> narrow: the result's extra last dimension picks a little-endian piece.
      return [&b, operand, operand_width, width, type, operand_type](const IrIndex& index) {
        IrIndex outer(index.begin(), index.end() - 1);
        llvm::Value* bits =
            b.CreateBitCast(operand(outer), b.getIntNTy(static_cast<unsigned>(operand_width)));
        llvm::Value* shift =
            b.CreateMul(b.CreateZExtOrTrunc(index.back(), bits->getType()),
                        llvm::ConstantInt::get(bits->getType(), static_cast<uint64_t>(width)));
        llvm::Value* piece =
            b.CreateTrunc(b.CreateLShr(bits, shift), b.getIntNTy(static_cast<unsigned>(width)));
        return b.CreateBitCast(piece, IrType(type, b.getContext()));
      };
    }
    // Narrow -> wide: the operand's extra last dimension holds the pieces, lowest first.
    return [&b, operand, operand_width, width, type](const IrIndex& index) {
      llvm::Type* wide = b.getIntNTy(static_cast<unsigned>(width));
      llvm::Value* bits = llvm::ConstantInt::get(wide, 0);
      for (int piece = 0; piece < width / operand_width; ++piece) {
        IrIndex inner = index;
        inner.push_back(b.getInt64(static_cast<uint64_t>(piece)));
        llvm::Value* part =
            b.CreateBitCast(operand(inner), b.getIntNTy(static_cast<unsigned>(operand_width)));
        bits = b.CreateOr(bits, b.CreateShl(b.CreateZExt(part, wide),
                                            static_cast<uint64_t>(piece * operand_width)));
      }
      return b.CreateBitCast(bits, IrType(type, b.getContext()));
    };
  }
  // select's predicate and clamp's bounds may be scalars broadcast over the result.
  std::vector<bool> scalar;
  for (const Instruction* operand : inst.operands()) {
    scalar.push_back(operand->shape().rank() == 0 && inst.shape().rank() != 0);
  }
  return [this, &inst, operands = std::move(operands), scalar](const IrIndex& index) {
    std::vector<llvm::Value*> values;
    for (size_t k = 0; k < operands.size(); ++k)
      values.push_back(operands[k](scalar[k] ? IrIndex{} : index));
    return EmitElementwise(inst, values);
  };
}

llvm::Value* ElementalEmitter::EmitElementwise(const Instruction& inst,
                                               std::span<llvm::Value* const> values) {
  const PrimitiveType type = inst.shape().type;
  const PrimitiveType operand_type = inst.operand(0)->shape().type;
  switch (inst.opcode()) {
    case Opcode::kConvert:
      return detail::EmitConvert(b_, values[0], operand_type, type);
    case Opcode::kBitcastConvert:
      return detail::EmitBitcastSameWidth(b_, values[0], operand_type, type);
    case Opcode::kReducePrecision: {
      const auto& attrs = inst.attr<hlo::ReducePrecisionAttrs>();
      return detail::EmitReducePrecision(b_, values[0], type, attrs.exponent_bits,
                                         attrs.mantissa_bits);
    }
    case Opcode::kCompare:
      return detail::EmitCompare(b_, inst.attr<hlo::CompareAttrs>(), operand_type, values[0],
                                 values[1]);
    case Opcode::kSelect:
      return b_.CreateSelect(values[0], values[1], values[2]);
    case Opcode::kClamp:
      return EmitClamp(b_, type, values[0], values[1], values[2]);
    case Opcode::kCopy:
      return values[0];
    case Opcode::kIsFinite: {
      llvm::Value* x = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs,
                                               detail::Widen(b_, values[0], operand_type));
      return b_.CreateFCmpOLT(x, llvm::ConstantFP::getInfinity(x->getType()));
    }
    default:
      break;
  }
  const bool unary = hlo::OpcodeClass(inst.opcode()) == hlo::OpClass::kElementwiseUnary;
  if (hlo::IsFloating(type)) {
    llvm::Value* x = detail::Widen(b_, values[0], type);
    llvm::Value* result = unary ? EmitFloatUnary(inst, x)
                                : EmitFloatBinary(inst, x, detail::Widen(b_, values[1], type));
    return detail::Narrow(b_, result, type);
  }
  return unary ? EmitIntegerUnary(b_, inst, type, values[0])
               : EmitIntegerBinary(b_, inst, type, values[0], values[1]);
}

llvm::Value* ElementalEmitter::EmitFloatUnary(const Instruction& inst, llvm::Value* x) {
  const bool f32 = x->getType()->isFloatTy();
  llvm::Value* zero = llvm::ConstantFP::get(x->getType(), 0.0);
  llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
  auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  switch (inst.opcode()) {
    case Opcode::kAbs:
      return intrinsic(llvm::Intrinsic::fabs);
    case Opcode::kNegate:
      return b_.CreateFNeg(x);
    case Opcode::kSign:  // NaN, -0 and +0 are their own sign
      return b_.CreateSelect(b_.CreateFCmpONE(x, zero),
                             b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, one, x), x);
    case Opcode::kCeil:
      return intrinsic(llvm::Intrinsic::ceil);
    case Opcode::kFloor:
      return intrinsic(llvm::Intrinsic::floor);
    case Opcode::kRoundNearestAfz:
      return intrinsic(llvm::Intrinsic::round);
    case Opcode::kRoundNearestEven:
      return intrinsic(llvm::Intrinsic::roundeven);
    case Opcode::kSqrt:
      return intrinsic(llvm::Intrinsic::sqrt);
    case Opcode::kRsqrt:
      return b_.CreateFDiv(one, intrinsic(llvm::Intrinsic::sqrt));
    case Opcode::kExp:
      return EmitExp(x);
    case Opcode::kLog:
      return EmitLog(x);
    case Opcode::kTanh:
      return EmitTanh(x);
    case Opcode::kExpm1:
      return f32 ? math::EmitExpm1F32(b_, x) : EmitLibmCallF64("expm1", {x});
    case Opcode::kLog1p:
      return f32 ? math::EmitLog1pF32(b_, x) : EmitLibmCallF64("log1p", {x});
    case Opcode::kLogistic:
      if (f32) return math::EmitLogisticF32Fast(b_, x);
      return b_.CreateFDiv(one, b_.CreateFAdd(one, EmitExp(b_.CreateFNeg(x))));
    case Opcode::kSin:
      return f32 ? math::EmitSinF32(b_, x) : EmitLibmCallF64("sin", {x});
    case Opcode::kCos:
      return f32 ? math::EmitCosF32(b_, x) : EmitLibmCallF64("cos", {x});
    case Opcode::kTan:
      return f32 ? math::EmitTanF32(b_, x) : EmitLibmCallF64("tan", {x});
    case Opcode::kCbrt:
      return f32 ? math::EmitCbrtF32(b_, x) : EmitLibmCallF64("cbrt", {x});
    case Opcode::kErf:
      return f32 ? math::EmitErfF32Fast(b_, x) : EmitLibmCallF64("erf", {x});
    default:
      break;
  }
  detail::Fail(inst, "no floating-point rule");
}

llvm::Value* ElementalEmitter::EmitFloatBinary(const Instruction& inst, llvm::Value* x,
                                               llvm::Value* y) {
  const bool f32 = x->getType()->isFloatTy();
  switch (inst.opcode()) {
    case Opcode::kAdd:
      return b_.CreateFAdd(x, y);
    case Opcode::kSubtract:
      return b_.CreateFSub(x, y);
    case Opcode::kMultiply:
      return b_.CreateFMul(x, y);
    case Opcode::kDivide:
      return b_.CreateFDiv(x, y);
    case Opcode::kRemainder:
      return b_.CreateFRem(x, y);  // fmod: the sign of the dividend
    case Opcode::kMaximum:
    case Opcode::kMinimum: {
      // The first NaN operand wins, then the strict comparison (so max(-0, +0) = +0).
      llvm::Value* pick_x =
          inst.opcode() == Opcode::kMaximum ? b_.CreateFCmpOGT(x, y) : b_.CreateFCmpOLT(x, y);
      llvm::Value* result = b_.CreateSelect(pick_x, x, y);
      result = b_.CreateSelect(b_.CreateFCmpUNO(y, y), y, result);
      return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, result);
    }
    case Opcode::kPower:
      return f32 ? math::EmitPowF32(b_, x, y) : EmitLibmCallF64("pow", {x, y});
    case Opcode::kAtan2:
      return f32 ? math::EmitAtan2F32(b_, x, y) : EmitLibmCallF64("atan2", {x, y});
    default:
      break;
  }
  detail::Fail(inst, "no floating-point rule");
}

}  // namespace llvm_codegen

// Element conversions and comparisons: convert, bitcast-convert (same width), compare and
// reduce-precision, bit-for-bit as hlo/evaluator_convert.cc and evaluator_compare.cc define them.
//
// Guarantees: float -> integer uses LLVM's saturating fptosi.sat / fptoui.sat (NaN -> 0, bounds
// saturate), never a poison-producing fptosi; conversions to bf16/f16 go through f32 exactly as
// the interpreter does (including f64 -> f32 -> bf16 double rounding); TOTALORDER compares the
// sign-magnitude bit patterns mapped to two's complement.
#include <algorithm>

#include <llvm/IR/Intrinsics.h>

#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"

namespace llvm_codegen::detail {

using hlo::PrimitiveType;

llvm::Value* EmitConvert(llvm::IRBuilder<>& b, llvm::Value* value, PrimitiveType from,
                         PrimitiveType to) {
  llvm::LLVMContext& context = b.getContext();
  if (from == to) return value;
  if (to == PrimitiveType::kPred) {
    if (hlo::IsFloating(from)) {
      llvm::Value* wide = Widen(b, value, from);
      return b.CreateFCmpUNE(wide, llvm::ConstantFP::get(wide->getType(), 0.0));  // NaN -> true
    }
    return b.CreateICmpNE(value, llvm::ConstantInt::get(value->getType(), 0));
  }
  llvm::Type* target = IrType(to, context);
  const bool from_float = hlo::IsFloating(from);
  const bool to_float = hlo::IsFloating(to);
  const bool from_signed = hlo::IsSignedInteger(from);  // pred converts as unsigned 0/1
  if (!from_float && !to_float) {
    return from_signed ? b.CreateSExtOrTrunc(value, target) : b.CreateZExtOrTrunc(value, target);
  }
  if (from_float && !to_float) {
    const auto saturating =
        hlo::IsSignedInteger(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    llvm::Value* wide = Widen(b, value, from);
    return b.CreateIntrinsic(saturating, {target, wide->getType()}, {wide});
  }
  // The result is a float: f64 directly, every other type through f32 (ir.h).
  llvm::Type* via = to == PrimitiveType::kF64 ? b.getDoubleTy() : b.getFloatTy();
  llvm::Value* result;
  if (from_float) {
    result = b.CreateFPCast(Widen(b, value, from), via);
  } else {
    result = from_signed ? b.CreateSIToFP(value, via) : b.CreateUIToFP(value, via);
  }
  return Narrow(b, result, to);
}

llvm::Value* EmitBitcastSameWidth(llvm::IRBuilder<>& b, llvm::Value* value, PrimitiveType from,
                                  PrimitiveType to) {
  if (from == to) return value;
  if (from == PrimitiveType::kPred) value = b.CreateZExt(value, b.getInt8Ty());
  if (to == PrimitiveType::kPred) {
    return b.CreateICmpNE(b.CreateBitCast(value, b.getInt8Ty()), b.getInt8(0));
  }
  return b.CreateBitCast(value, IrType(to, b.getContext()));
}

namespace {

llvm::CmpInst::Predicate FloatPredicate(hlo::ComparisonDirection direction) {
  switch (direction) {
    case hlo::ComparisonDirection::kEq:
      return llvm::CmpInst::FCMP_OEQ;
    case hlo::ComparisonDirection::kNe:
      return llvm::CmpInst::FCMP_UNE;  // NaN != anything
    case hlo::ComparisonDirection::kGe:
      return llvm::CmpInst::FCMP_OGE;
    case hlo::ComparisonDirection::kGt:
      return llvm::CmpInst::FCMP_OGT;
    case hlo::ComparisonDirection::kLe:
      return llvm::CmpInst::FCMP_OLE;
    case hlo::ComparisonDirection::kLt:
      return llvm::CmpInst::FCMP_OLT;
  }
  return llvm::CmpInst::FCMP_FALSE;
}

llvm::CmpInst::Predicate IntegerPredicate(hlo::ComparisonDirection direction, bool is_signed) {
  switch (direction) {
    case hlo::ComparisonDirection::kEq:
      return llvm::CmpInst::ICMP_EQ;
    case hlo::ComparisonDirection::kNe:
      return llvm::CmpInst::ICMP_NE;
    case hlo::ComparisonDirection::kGe:
      return is_signed ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE;
    case hlo::ComparisonDirection::kGt:
      return is_signed ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT;
    case hlo::ComparisonDirection::kLe:
      return is_signed ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE;
    case hlo::ComparisonDirection::kLt:
      return is_signed ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT;
  }
  return llvm::CmpInst::ICMP_EQ;
}

// Total-order key of a float: negative values get their magnitude bits flipped, so the signed
// integer order is -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
llvm::Value* TotalOrderKey(llvm::IRBuilder<>& b, llvm::Value* value, PrimitiveType type) {
  llvm::IntegerType* bits_type = b.getIntNTy(static_cast<unsigned>(hlo::BitWidth(type)));
  llvm::Value* bits = b.CreateBitCast(value, bits_type);
  llvm::Value* flipped = b.CreateXor(
      bits,
      llvm::ConstantInt::get(bits_type, llvm::APInt::getSignedMaxValue(bits_type->getBitWidth())));
  return b.CreateSelect(b.CreateICmpSLT(bits, llvm::ConstantInt::get(bits_type, 0)), flipped, bits);
}

}  // namespace

llvm::Value* EmitCompare(llvm::IRBuilder<>& b, const hlo::CompareAttrs& attrs, PrimitiveType type,
                         llvm::Value* lhs, llvm::Value* rhs) {
  if (hlo::IsFloating(type)) {
    if (attrs.type == hlo::ComparisonType::kTotalOrder) {
      return b.CreateICmp(IntegerPredicate(attrs.direction, /*is_signed=*/true),
                          TotalOrderKey(b, lhs, type), TotalOrderKey(b, rhs, type));
    }
    return b.CreateFCmp(FloatPredicate(attrs.direction), Widen(b, lhs, type), Widen(b, rhs, type));
  }
  bool is_signed = hlo::IsSignedInteger(type);
  if (attrs.type == hlo::ComparisonType::kSigned) is_signed = true;
  if (attrs.type == hlo::ComparisonType::kUnsigned) is_signed = false;
  if (type == PrimitiveType::kPred) is_signed = false;  // false < true
  return b.CreateICmp(IntegerPredicate(attrs.direction, is_signed), lhs, rhs);
}

llvm::Value* EmitReducePrecision(llvm::IRBuilder<>& b, llvm::Value* value, PrimitiveType type,
                                 int64_t exponent_bits, int64_t mantissa_bits) {
  // f64 works on its own bits; f32, bf16 and f16 on the f32 pattern (exact for them).
  const bool is_f64 = type == PrimitiveType::kF64;
  const int total = is_f64 ? 64 : 32;
  const int type_exponent = is_f64 ? 11 : 8;
  const int type_mantissa = is_f64 ? 52 : 23;
  const int e = static_cast<int>(std::min<int64_t>(exponent_bits, type_exponent));
  const int m = static_cast<int>(std::min<int64_t>(mantissa_bits, type_mantissa));
  llvm::Value* wide = Widen(b, value, type);
  llvm::IntegerType* int_type = b.getIntNTy(static_cast<unsigned>(total));
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(int_type, v); };
  llvm::Value* bits = b.CreateBitCast(wide, int_type);
  if (m < type_mantissa) {
    // Round half to even at the last kept mantissa bit, then clear the dropped bits.
    const int dropped = type_mantissa - m;
    const uint64_t last_kept_bit = uint64_t{1} << dropped;
    llvm::Value* kept_lsb = b.CreateLShr(b.CreateAnd(bits, constant(last_kept_bit)), dropped);
    llvm::Value* sum = b.CreateAdd(bits, b.CreateAdd(kept_lsb, constant((last_kept_bit >> 1) - 1)));
    bits = b.CreateAnd(sum, constant(~(last_kept_bit - 1)));
  }
  if (e < type_exponent) {
    const uint64_t sign_mask = uint64_t{1} << (total - 1);
    const uint64_t exponent_mask = ((uint64_t{1} << type_exponent) - 1) << type_mantissa;
    const int64_t bias = (int64_t{1} << (type_exponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (e - 1)) - 1;
    const uint64_t max_exponent = static_cast<uint64_t>(bias + reduced_bias) << type_mantissa;
    const uint64_t min_exponent = static_cast<uint64_t>(bias - reduced_bias) << type_mantissa;
    llvm::Value* exponent = b.CreateAnd(bits, constant(exponent_mask));
    llvm::Value* signed_zero = b.CreateAnd(bits, constant(sign_mask));
    llvm::Value* signed_inf = b.CreateOr(signed_zero, constant(exponent_mask));
    bits = b.CreateSelect(
        b.CreateICmpUGT(exponent, constant(max_exponent)), signed_inf,
        b.CreateSelect(b.CreateICmpULE(exponent, constant(min_exponent)), signed_zero, bits));
  }
  llvm::Value* reduced = b.CreateBitCast(bits, wide->getType());
  reduced = b.CreateSelect(b.CreateFCmpUNO(wide, wide), wide, reduced);  // NaN stays NaN
  return Narrow(b, reduced, type);
}

}  // namespace llvm_codegen::detail

// Elementwise ops: the dispatcher for every op of class kElementwiseUnary / Binary / Ternary,
// plus the type-agnostic ones (copy, select, clamp).
//
// Guarantees: operands are checked (array, element type, element count) before any loop runs,
// so an unverified module cannot read out of bounds; ops undefined for an element type (e.g.
// `not` on f32) are hlo::Errors. clamp(min, x, max) = min(max(x, lo), hi) with the NaN
// propagation of maximum/minimum (ir.h); lo, hi and select's predicate may be scalars.
#include <cmath>
#include <cstring>
#include <limits>

#include "hlo/evaluator_elementwise_internal.h"

namespace hlo::eval {
namespace {

// Checks that `operand` is an array of `type` with `count` elements (or one element when
// `scalar_ok`).
void CheckOperand(const Instruction& inst, const Literal& operand, int64_t index,
                  PrimitiveType type, int64_t count, bool scalar_ok = false) {
  const Shape& shape = operand.shape();
  bool ok = shape.IsArray() && shape.type == type &&
            (operand.element_count() == count ||
             (scalar_ok && shape.rank() == 0));
  if (!ok) {
    throw Error("operand " + std::to_string(index) + " of '" + std::string(OpcodeName(inst.opcode())) +
                "' has shape " + shape.ToString(false) + ", expected " +
                std::string(PrimitiveTypeName(type)) + " with " + std::to_string(count) +
                " elements");
  }
}

// c128 elements, moved whole.
struct Bytes16 {
  uint64_t words[2];
};

// select(pred, on_true, on_false): picks whole elements, so it works on raw bytes.
template <typename Word>
void SelectWords(const Literal& pred, const Literal& on_true, const Literal& on_false,
                 Literal& out) {
  auto p = pred.data<uint8_t>();
  auto t = on_true.data<Word>();
  auto f = on_false.data<Word>();
  auto dst = out.mutable_data<Word>();
  const bool scalar_pred = p.size() == 1 && dst.size() != 1;
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = (scalar_pred ? p[0] : p[i]) ? t[i] : f[i];
}

void Select(const Literal& pred, const Literal& on_true, const Literal& on_false, Literal& out) {
  switch (ByteSize(out.shape().type)) {
    case 1: return SelectWords<uint8_t>(pred, on_true, on_false, out);
    case 2: return SelectWords<uint16_t>(pred, on_true, on_false, out);
    case 4: return SelectWords<uint32_t>(pred, on_true, on_false, out);
    case 8: return SelectWords<uint64_t>(pred, on_true, on_false, out);
    case 16: return SelectWords<Bytes16>(pred, on_true, on_false, out);
    default: ThrowUnsupported(Opcode::kSelect, out.shape().type);
  }
}

template <typename C>
C ClampValue(C lo, C x, C hi) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(lo) || std::isnan(x) || std::isnan(hi)) {
      return std::numeric_limits<C>::quiet_NaN();
    }
  }
  // Ties go to the bound, as XLA:CPU does: clamp(+0, -0, 1) is +0.
  C low_bounded = x > lo ? x : lo;
  return low_bounded < hi ? low_bounded : hi;
}

void Clamp(const Literal& lo, const Literal& x, const Literal& hi, Literal& out) {
  DispatchArrayType(out.shape().type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    using T = ElementTraits<P>;
    auto lo_data = lo.data<typename T::Storage>();
    auto x_data = x.data<typename T::Storage>();
    auto hi_data = hi.data<typename T::Storage>();
    auto dst = out.mutable_data<typename T::Storage>();
    // A scalar bound is broadcast (XLA allows scalar min/max for clamp).
    const size_t lo_step = lo_data.size() == dst.size() ? 1 : 0;
    const size_t hi_step = hi_data.size() == dst.size() ? 1 : 0;
    for (size_t i = 0; i < dst.size(); ++i) {
      dst[i] = T::Store(ClampValue(T::Load(lo_data[i * lo_step]), T::Load(x_data[i]),
                                   T::Load(hi_data[i * hi_step])));
    }
  });
}

void IsFinite(const Literal& in, Literal& out) {
  DispatchArrayType(in.shape().type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    if constexpr (kIsFloatType<P>) {
      MapUnary<P, PrimitiveType::kPred>(in, out, [](auto x) -> uint8_t { return std::isfinite(x); });
    } else {
      ThrowUnsupported(Opcode::kIsFinite, P);
    }
  });
}

}  // namespace

Literal EvaluateElementwise(const Instruction& inst, Operands operands) {
  Literal result = MakeResult(inst);
  const Shape& shape = inst.shape();
  if (!shape.IsArray()) {
    throw Error("elementwise '" + std::string(OpcodeName(inst.opcode())) +
                "' needs an array result, got " + shape.ToString(false));
  }
  const int64_t count = shape.ElementCount();
  const Opcode op = inst.opcode();
  for (size_t k = 0; k < operands.size(); ++k) {
    if (!operands[k]->shape().IsArray()) {
      throw Error("operand " + std::to_string(k) + " is not an array");
    }
  }
  const PrimitiveType in_type = operands.empty() ? shape.type : operands[0]->shape().type;
  if (IsComplexElementwise(op, operands, shape)) {
    ComplexElementwise(op, operands, result);
    return result;
  }
  switch (op) {
    case Opcode::kConvert:
      CheckOperand(inst, *operands[0], 0, in_type, count);
      ConvertElements(*operands[0], result);
      return result;
    case Opcode::kBitcastConvert:
      BitcastConvertElements(*operands[0], result);
      return result;
    case Opcode::kReducePrecision:
      CheckOperand(inst, *operands[0], 0, shape.type, count);
      ReducePrecisionElements(inst.attr<ReducePrecisionAttrs>(), *operands[0], result);
      return result;
    case Opcode::kCopy:
      CheckOperand(inst, *operands[0], 0, shape.type, count);
      std::memcpy(result.mutable_bytes().data(), operands[0]->bytes().data(),
                  result.bytes().size());
      return result;
    case Opcode::kIsFinite:
      CheckOperand(inst, *operands[0], 0, in_type, count);
      IsFinite(*operands[0], result);
      return result;
    case Opcode::kCompare:
      CheckOperand(inst, *operands[0], 0, in_type, count);
      CheckOperand(inst, *operands[1], 1, in_type, count);
      CompareElements(inst.attr<CompareAttrs>(), *operands[0], *operands[1], result);
      return result;
    case Opcode::kSelect:
      CheckOperand(inst, *operands[0], 0, PrimitiveType::kPred, count, /*scalar_ok=*/true);
      CheckOperand(inst, *operands[1], 1, shape.type, count);
      CheckOperand(inst, *operands[2], 2, shape.type, count);
      Select(*operands[0], *operands[1], *operands[2], result);
      return result;
    case Opcode::kClamp:
      CheckOperand(inst, *operands[0], 0, shape.type, count, /*scalar_ok=*/true);
      CheckOperand(inst, *operands[1], 1, shape.type, count);
      CheckOperand(inst, *operands[2], 2, shape.type, count, /*scalar_ok=*/true);
      Clamp(*operands[0], *operands[1], *operands[2], result);
      return result;
    default:
      break;
  }
  for (size_t k = 0; k < operands.size(); ++k) {
    CheckOperand(inst, *operands[k], static_cast<int64_t>(k), shape.type, count);
  }
  const bool floating = IsFloating(shape.type);
  switch (OpcodeClass(op)) {
    case OpClass::kElementwiseUnary:
      floating ? FloatUnary(op, *operands[0], result) : IntegerUnary(op, *operands[0], result);
      return result;
    case OpClass::kElementwiseBinary:
      floating ? FloatBinary(op, *operands[0], *operands[1], result)
               : IntegerBinary(op, *operands[0], *operands[1], result);
      return result;
    case OpClass::kElementwiseTernary:
    case OpClass::kDataMovement:
    case OpClass::kReduction:
    case OpClass::kContraction:
    case OpClass::kControl:
    case OpClass::kCollective:
    case OpClass::kOther:
      break;
  }
  throw Error("'" + std::string(OpcodeName(op)) + "' is not an elementwise op");
}

}  // namespace hlo::eval

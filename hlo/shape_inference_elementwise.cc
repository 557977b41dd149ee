// Shape inference for the elementwise ops (unary, binary, ternary), including convert,
// bitcast-convert, compare, select and clamp.
//
// Rules (as XLA's shape inference states them): operands of a binary op have the same element
// type and dimensions (HLO has no implicit broadcasting); compare returns pred; select takes a
// predicate of the same dims or a scalar one; clamp's bounds may be scalars; convert keeps the
// declared element type; bitcast-convert between types of different widths adds or removes a
// minor dimension of size (wide bits / narrow bits); transcendental ops need floating point,
// bitwise ops pred or integers, shifts and bit counts integers. Complex values: exp, log, sqrt
// and the trigonometric ops accept them; abs, real and imag return the part type (f32 for c64);
// complex(re, im) builds c64/c128 from f32/f64; compare is EQ/NE only; convert never leaves
// complex (take real or imag).
#include <string>

#include "hlo/shape_inference_internal.h"

namespace hlo::shape_inference {
namespace {

enum class TypeClass { kAny, kFloating, kFloatingOrComplex, kIntegral, kPredOrIntegral };

// Which element types the op accepts. Exhaustive so that a new elementwise opcode must decide.
TypeClass AcceptedTypes(Opcode op) {
  switch (op) {
    case Opcode::kCeil:
    case Opcode::kErf:
    case Opcode::kFloor:
    case Opcode::kIsFinite:
    case Opcode::kReducePrecision:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kAtan2:
    case Opcode::kComplex:
      return TypeClass::kFloating;
    // XLA defines these on complex values too.
    case Opcode::kCbrt:
    case Opcode::kCos:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSin:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kReal:
    case Opcode::kImag:
      return TypeClass::kFloatingOrComplex;
    case Opcode::kClz:
    case Opcode::kPopulationCount:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
      return TypeClass::kIntegral;
    case Opcode::kNot:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return TypeClass::kPredOrIntegral;
    default:
      return TypeClass::kAny;
  }
}

void ExpectTypeClass(const Instruction& inst, const Shape& shape, int64_t operand) {
  const PrimitiveType t = shape.type;
  const char* wanted = nullptr;
  switch (AcceptedTypes(inst.opcode())) {
    case TypeClass::kAny: return;
    case TypeClass::kFloating:
      if (!IsFloating(t)) wanted = "a floating-point";
      break;
    case TypeClass::kFloatingOrComplex:
      if (!IsFloating(t) && !IsComplex(t)) wanted = "a floating-point or complex";
      break;
    case TypeClass::kIntegral:
      if (!IsInteger(t)) wanted = "an integer";
      break;
    case TypeClass::kPredOrIntegral:
      if (!IsInteger(t) && t != PrimitiveType::kPred) wanted = "a pred or integer";
      break;
  }
  if (wanted != nullptr) {
    Fail(inst, "operand " + std::to_string(operand) + " has shape " + shape.ToString(false) +
                   " but " + std::string(OpcodeName(inst.opcode())) + " needs " + wanted +
                   " element type");
  }
}

// Operand `i` must have exactly `expected`'s element type and dimensions.
void ExpectSameShape(const Instruction& inst, int64_t i, const Shape& expected) {
  const Shape& shape = ExpectArrayOperand(inst, i);
  if (!shape.Compatible(expected)) {
    Fail(inst, "operand " + std::to_string(i) + " has shape " + shape.ToString(false) + " but " +
                   expected.ToString(false) + " was expected");
  }
}

Shape InferBitcastConvert(const Instruction& inst, const Shape& operand) {
  const Shape& declared = DeclaredArray(inst);
  const int from_bits = BitWidth(operand.type);
  const int to_bits = BitWidth(declared.type);
  if (from_bits == to_bits) return Shape::Array(declared.type, operand.dims);
  if (operand.type == PrimitiveType::kPred || declared.type == PrimitiveType::kPred) {
    Fail(inst, "cannot bitcast-convert between pred and " +
                   std::string(PrimitiveTypeName(operand.type == PrimitiveType::kPred
                                                     ? declared.type
                                                     : operand.type)));
  }
  std::vector<int64_t> dims = operand.dims;
  if (from_bits > to_bits) {
    // Each wide element becomes (from/to) narrow ones along a new minor dimension.
    dims.push_back(from_bits / to_bits);
  } else {
    const int64_t ratio = to_bits / from_bits;
    if (dims.empty() || dims.back() != ratio) {
      Fail(inst, "bitcast-convert from " + operand.ToString(false) + " to " +
                     std::string(PrimitiveTypeName(declared.type)) +
                     " needs a minor dimension of size " + std::to_string(ratio));
    }
    dims.pop_back();
  }
  return Shape::Array(declared.type, std::move(dims));
}

Shape InferUnary(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kCopy:
      // copy may duplicate whole tuples.
      return OperandShape(inst, 0);
    case Opcode::kConvert: {
      const Shape& operand = ExpectArrayOperand(inst, 0);
      const PrimitiveType to = DeclaredArray(inst).type;
      if (IsComplex(operand.type) && !IsComplex(to)) {
        Fail(inst, "convert from " + std::string(PrimitiveTypeName(operand.type)) + " to " +
                       std::string(PrimitiveTypeName(to)) +
                       " is not defined (take real or imag of a complex value)");
      }
      return Shape::Array(to, operand.dims);
    }
    case Opcode::kBitcastConvert:
      return InferBitcastConvert(inst, ExpectArrayOperand(inst, 0));
    default:
      break;
  }
  const Shape& operand = ExpectArrayOperand(inst, 0);
  ExpectTypeClass(inst, operand, 0);
  if (inst.opcode() == Opcode::kReducePrecision) {
    const auto& attrs = AttrsOf<ReducePrecisionAttrs>(inst, "reduce-precision");
    if (attrs.exponent_bits < 1 || attrs.mantissa_bits < 0) {
      Fail(inst, "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
    }
  }
  PrimitiveType result_type = operand.type;
  if (inst.opcode() == Opcode::kIsFinite) result_type = PrimitiveType::kPred;
  // abs, real and imag of a complex value are real.
  const bool to_component = inst.opcode() == Opcode::kAbs || inst.opcode() == Opcode::kReal ||
                            inst.opcode() == Opcode::kImag;
  if (to_component && IsComplex(operand.type)) result_type = ComplexComponentType(operand.type);
  return Shape::Array(result_type, operand.dims);
}

Shape InferBinary(const Instruction& inst) {
  const Shape& lhs = ExpectArrayOperand(inst, 0);
  ExpectSameShape(inst, 1, lhs);
  ExpectTypeClass(inst, lhs, 0);
  if (inst.opcode() == Opcode::kComplex) {
    if (lhs.type != PrimitiveType::kF32 && lhs.type != PrimitiveType::kF64) {
      Fail(inst, "complex needs f32 or f64 parts, got " + std::string(PrimitiveTypeName(lhs.type)));
    }
    const bool f64 = lhs.type == PrimitiveType::kF64;
    return Shape::Array(f64 ? PrimitiveType::kC128 : PrimitiveType::kC64, lhs.dims);
  }
  if (inst.opcode() == Opcode::kCompare && IsComplex(lhs.type)) {
    const ComparisonDirection d = AttrsOf<CompareAttrs>(inst, "compare").direction;
    if (d != ComparisonDirection::kEq && d != ComparisonDirection::kNe) {
      Fail(inst, "complex values compare only for EQ and NE, not " +
                     std::string(ComparisonDirectionName(d)));
    }
  }
  const PrimitiveType result_type =
      inst.opcode() == Opcode::kCompare ? PrimitiveType::kPred : lhs.type;
  return Shape::Array(result_type, lhs.dims);
}

Shape InferSelect(const Instruction& inst) {
  const Shape& pred = ExpectArrayOperand(inst, 0);
  const Shape& on_true = ExpectArrayOperand(inst, 1);
  ExpectSameShape(inst, 2, on_true);
  // A scalar predicate selects between whole arrays (XLA accepts it); otherwise it is per element.
  if (pred.type != PrimitiveType::kPred || (pred.rank() != 0 && pred.dims != on_true.dims)) {
    Fail(inst, "operand 0 has shape " + pred.ToString(false) + " but " +
                   Shape::Array(PrimitiveType::kPred, on_true.dims).ToString(false) +
                   " or pred[] was expected");
  }
  return Shape::Array(on_true.type, on_true.dims);
}

Shape InferClamp(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 1);
  for (int64_t bound : {int64_t{0}, int64_t{2}}) {
    const Shape& shape = ExpectArrayOperand(inst, bound);
    // The bounds may be scalars (broadcast implicitly) or match the operand.
    if (shape.type != operand.type || (shape.rank() != 0 && shape.dims != operand.dims)) {
      Fail(inst, "operand " + std::to_string(bound) + " has shape " + shape.ToString(false) +
                     " but " + operand.ToString(false) + " or a " +
                     std::string(PrimitiveTypeName(operand.type)) + " scalar was expected");
    }
  }
  return Shape::Array(operand.type, operand.dims);
}

}  // namespace

Shape InferElementwiseShape(const Instruction& inst) {
  switch (OpcodeClass(inst.opcode())) {
    case OpClass::kElementwiseUnary:
      return InferUnary(inst);
    case OpClass::kElementwiseBinary:
      return InferBinary(inst);
    case OpClass::kElementwiseTernary:
      return inst.opcode() == Opcode::kSelect ? InferSelect(inst) : InferClamp(inst);
    case OpClass::kDataMovement:
    case OpClass::kReduction:
    case OpClass::kContraction:
    case OpClass::kControl:
    case OpClass::kCollective:
    case OpClass::kOther:
      break;
  }
  Fail(inst, "is not an elementwise op (internal error)");
}

}  // namespace hlo::shape_inference

namespace hlo {

bool ElementwiseAcceptsType(Opcode opcode, PrimitiveType type) {
  using shape_inference::TypeClass;
  switch (shape_inference::AcceptedTypes(opcode)) {
    case TypeClass::kAny: return true;
    case TypeClass::kFloating: return IsFloating(type);
    case TypeClass::kFloatingOrComplex: return IsFloating(type) || IsComplex(type);
    case TypeClass::kIntegral: return IsInteger(type);
    case TypeClass::kPredOrIntegral: return IsInteger(type) || type == PrimitiveType::kPred;
  }
  return false;
}

}  // namespace hlo

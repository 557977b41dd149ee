// The elementwise op table (row_op_table.h), and the element types the vector unit holds.
#include "targets/systolic/lowering/row_op_table.h"

#include <cmath>

#include "hlo/literal.h"
#include "simulator/isa/arch_config.h"

namespace systolic::lowering {
namespace {

using hlo::Opcode;
using hlo::PrimitiveType;

// Binary elementwise HLO ops with a one-instruction vector equivalent (one table).
std::optional<systolic::Opcode> VectorBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd: return systolic::Opcode::kVAdd;
    case Opcode::kSubtract: return systolic::Opcode::kVSub;
    case Opcode::kMultiply: return systolic::Opcode::kVMul;
    case Opcode::kMaximum: return systolic::Opcode::kVMax;
    case Opcode::kMinimum: return systolic::Opcode::kVMin;
    default: return std::nullopt;
  }
}
// Binary integer-only HLO ops (shifts, bitwise logic, division) with a one-instruction
// equivalent.
std::optional<systolic::Opcode> VectorIntegerBinary(Opcode op) {
  switch (op) {
    case Opcode::kShiftLeft: return systolic::Opcode::kVShl;
    case Opcode::kShiftRightArithmetic: return systolic::Opcode::kVShra;
    case Opcode::kShiftRightLogical: return systolic::Opcode::kVShrl;
    case Opcode::kAnd: return systolic::Opcode::kVAnd;
    case Opcode::kOr: return systolic::Opcode::kVOr;
    case Opcode::kXor: return systolic::Opcode::kVXor;
    case Opcode::kDivide: return systolic::Opcode::kVDiv;
    case Opcode::kRemainder: return systolic::Opcode::kVRem;
    default: return std::nullopt;
  }
}
// Unary float HLO ops with a one-instruction vector equivalent.
std::optional<systolic::Opcode> VectorUnary(Opcode op) {
  switch (op) {
    case Opcode::kExp: return systolic::Opcode::kVExp;
    case Opcode::kTanh: return systolic::Opcode::kVTanh;
    case Opcode::kRsqrt: return systolic::Opcode::kVRsqrt;
    case Opcode::kSin: return systolic::Opcode::kVSin;
    case Opcode::kCos: return systolic::Opcode::kVCos;
    case Opcode::kLog: return systolic::Opcode::kVLog;
    case Opcode::kLog1p: return systolic::Opcode::kVLog1p;
    case Opcode::kExpm1: return systolic::Opcode::kVExpm1;
    case Opcode::kLogistic: return systolic::Opcode::kVLogistic;
    case Opcode::kErf: return systolic::Opcode::kVErf;
    case Opcode::kFloor: return systolic::Opcode::kVFloor;
    case Opcode::kCeil: return systolic::Opcode::kVCeil;
    case Opcode::kRoundNearestAfz: return systolic::Opcode::kVRound;
    default: return std::nullopt;
  }
}

CompareDirection IsaCompare(hlo::ComparisonDirection direction) {
  switch (direction) {
    case hlo::ComparisonDirection::kEq: return CompareDirection::kEq;
    case hlo::ComparisonDirection::kNe: return CompareDirection::kNe;
    case hlo::ComparisonDirection::kGe: return CompareDirection::kGe;
    case hlo::ComparisonDirection::kGt: return CompareDirection::kGt;
    case hlo::ComparisonDirection::kLe: return CompareDirection::kLe;
    case hlo::ComparisonDirection::kLt: return CompareDirection::kLt;
  }
  return CompareDirection::kEq;
}

bool IsIntegerDtype(Dtype d) { return d == Dtype::kS32 || d == Dtype::kS8 || d == Dtype::kU8; }

}  // namespace

std::optional<RowOp> ElementwiseRowOp(const hlo::Instruction& inst, Dtype dtype, std::string* why) {
  const hlo::CompareAttrs compare =
      inst.opcode() == Opcode::kCompare ? inst.attr<hlo::CompareAttrs>() : hlo::CompareAttrs{};
  return ElementwiseRowOp(inst.opcode(), compare, dtype, why);
}

std::optional<RowOp> ElementwiseRowOp(Opcode op, const hlo::CompareAttrs& compare, Dtype dtype,
                                      std::string* why) {
  const bool is_float = IsVectorFloat(dtype);
  RowOp row;
  if (auto binary = VectorBinary(op)) {
    row.kind = RowOpKind::kBinary;
    row.opcode = *binary;
  } else if (auto bitwise = VectorIntegerBinary(op); bitwise && IsIntegerDtype(dtype)) {
    row.kind = RowOpKind::kBinary;
    row.opcode = *bitwise;
  } else if (op == Opcode::kNot && IsIntegerDtype(dtype)) {
    row.kind = RowOpKind::kBitNot;
  } else if (auto unary = VectorUnary(op); unary && is_float) {
    row.kind = RowOpKind::kUnary;
    row.opcode = *unary;
  } else if (op == Opcode::kDivide && is_float) {
    row.kind = RowOpKind::kDivide;
  } else if (op == Opcode::kSqrt && is_float) {
    row.kind = RowOpKind::kSqrt;
  } else if (op == Opcode::kNegate && dtype != Dtype::kPred && dtype != Dtype::kU8) {
    row.kind = RowOpKind::kNegate;
  } else if (op == Opcode::kAbs && dtype != Dtype::kPred && dtype != Dtype::kU8) {
    row.kind = RowOpKind::kAbs;
  } else if (op == Opcode::kClamp) {
    row.kind = RowOpKind::kClamp;
  } else if (op == Opcode::kSelect) {
    row.kind = RowOpKind::kSelect;
  } else if (dtype == Dtype::kPred &&
             (op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kXor)) {
    // pred is one byte holding 0 or 1: and = min, or = max, xor = not-equal.
    row.kind = RowOpKind::kPredicate;
    row.opcode = op == Opcode::kAnd  ? systolic::Opcode::kVMin
                 : op == Opcode::kOr ? systolic::Opcode::kVMax
                                     : systolic::Opcode::kVCmp;
  } else if (dtype == Dtype::kPred && op == Opcode::kNot) {
    row.kind = RowOpKind::kNot;
  } else if (op == Opcode::kCompare && compare.type != hlo::ComparisonType::kTotalOrder) {
    row.kind = RowOpKind::kCompare;
    row.compare = IsaCompare(compare.direction);
  } else {
    if (why) {
      *why = "opcode " + std::string(hlo::OpcodeName(op)) + " on " + std::string(DtypeName(dtype));
    }
    return std::nullopt;
  }
  bool pred_op = row.kind == RowOpKind::kCompare || row.kind == RowOpKind::kSelect ||
                 row.kind == RowOpKind::kPredicate || row.kind == RowOpKind::kNot;
  if (dtype == Dtype::kPred && !pred_op) {
    if (why) *why = "pred arithmetic";
    return std::nullopt;
  }
  return row;
}

std::optional<Dtype> IsaDtype(hlo::PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32: return Dtype::kF32;
    case PrimitiveType::kBF16: return Dtype::kBf16;
    case PrimitiveType::kF16: return Dtype::kF16;
    case PrimitiveType::kS32: return Dtype::kS32;
    case PrimitiveType::kS8: return Dtype::kS8;
    case PrimitiveType::kU8: return Dtype::kU8;
    case PrimitiveType::kPred: return Dtype::kPred;
    default: return std::nullopt;  // 16-bit and 64-bit integers, f64, tuples: not on the unit
  }
}

std::optional<VectorReducer> VectorReducerOf(const hlo::Instruction& reduce) {
  const hlo::Instruction* init = reduce.operand(1);
  if (reduce.operand_count() != 2 || init->opcode() != Opcode::kConstant) return std::nullopt;
  const hlo::Instruction* combine = reduce.called_computations().at(0)->root();
  const bool over_params = combine->operand_count() == 2 &&
                           combine->operand(0)->opcode() == Opcode::kParameter &&
                           combine->operand(1)->opcode() == Opcode::kParameter;
  const double init_value = init->attr<hlo::ConstantAttrs>().literal.GetAsDouble(0);
  if (reduce.shape().IsArray() && reduce.shape().type == PrimitiveType::kPred) {
    if (over_params && combine->opcode() == Opcode::kAnd && init_value == 1) {
      return VectorReducer::kAnd;
    }
    if (over_params && combine->opcode() == Opcode::kOr && init_value == 0) {
      return VectorReducer::kOr;
    }
    return std::nullopt;
  }
  if (over_params && combine->opcode() == Opcode::kAdd && init_value == 0) {
    return VectorReducer::kSum;
  }
  if (over_params && combine->opcode() == Opcode::kMaximum && std::isinf(init_value) &&
      init_value < 0) {
    return VectorReducer::kMax;
  }
  return std::nullopt;
}

bool VcvtMatchesConvert(PrimitiveType from, PrimitiveType to) {
  // pred -> x is 0 or 1 and x -> pred is x != 0 (NaN -> 1) in both.
  if (from == PrimitiveType::kPred || to == PrimitiveType::kPred) return from != to;
  return (hlo::IsFloating(to) && (hlo::IsFloating(from) || hlo::IsInteger(from))) ||
         (to == PrimitiveType::kS32 && (from == PrimitiveType::kS8 || from == PrimitiveType::kU8));
}

std::optional<double> ScalarFloatConstant(const hlo::Instruction* e,
                                          const hlo::Instruction** through) {
  while (e->opcode() == Opcode::kBroadcast || e->opcode() == Opcode::kReshape ||
         e->opcode() == Opcode::kBitcast) {
    e = e->operand(0);
  }
  if (through) *through = e;
  if (e->opcode() != Opcode::kConstant || !e->shape().IsArray() ||
      e->shape().ElementCount() != 1 || !hlo::IsFloating(e->shape().type)) {
    return std::nullopt;
  }
  return e->attr<hlo::ConstantAttrs>().literal.GetAsDouble(0);
}

bool VectorPowerExponent(double exponent) { return exponent == 2.0 || exponent == -0.5; }

bool IsVectorFloat(Dtype d) { return d == Dtype::kF32 || d == Dtype::kBf16 || d == Dtype::kF16; }

uint32_t MxuBit(Dtype d) {
  switch (d) {
    case Dtype::kS8: return kMxuInt8;
    case Dtype::kBf16: return kMxuBf16;
    case Dtype::kF32: return kMxuF32;
    default: return 0;  // the matrix unit takes no other input type
  }
}

int64_t ClassElements(RowClass cls, int64_t rows, int64_t cols) {
  switch (cls) {
    case RowClass::kFull: return rows * cols;
    case RowClass::kRow: return rows;
    case RowClass::kCol: return cols;
    case RowClass::kScalar: return 1;
  }
  return 0;
}

}  // namespace systolic::lowering

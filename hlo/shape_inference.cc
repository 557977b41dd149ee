// Shape inference entry point: dispatches each opcode to its family file, infers the leaves
// (parameter, constant, iota, ids, tokens) and holds the helpers every family shares.
//
// Guarantee: InferShape never reads past an operand list, attribute vector or callee list, and
// never trusts a declared shape beyond what XLA itself cannot infer (broadcast/reshape dims,
// convert's element type, custom-call results, ...). Errors are hlo::Error at the instruction.
#include "hlo/shape_inference.h"

#include <algorithm>
#include <limits>

#include "hlo/shape_inference_internal.h"

namespace hlo {
namespace shape_inference {

void Fail(const Instruction& inst, const std::string& message) {
  throw Error(inst.location(), inst.name() + ": " + message);
}

std::string DimsToString(std::span<const int64_t> dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "}";
}

void ExpectOperandCount(const Instruction& inst, int64_t count) {
  if (inst.operand_count() != count) {
    Fail(inst, "expects " + std::to_string(count) + " operand" + (count == 1 ? "" : "s") +
                   ", got " + std::to_string(inst.operand_count()));
  }
}

void ExpectOperandCountAtLeast(const Instruction& inst, int64_t count) {
  if (inst.operand_count() < count) {
    Fail(inst, "expects at least " + std::to_string(count) + " operand" +
                   (count == 1 ? "" : "s") + ", got " + std::to_string(inst.operand_count()));
  }
}

const Shape& OperandShape(const Instruction& inst, int64_t i) {
  if (i < 0 || i >= inst.operand_count() || inst.operand(i) == nullptr) {
    Fail(inst, "operand " + std::to_string(i) + " is missing");
  }
  return inst.operand(i)->shape();
}

const Shape& ExpectArrayOperand(const Instruction& inst, int64_t i) {
  const Shape& shape = OperandShape(inst, i);
  if (!shape.IsArray()) {
    Fail(inst, "operand " + std::to_string(i) + " has shape " + shape.ToString(false) +
                   " but an array was expected");
  }
  return shape;
}

void ExpectScalarIndexOperand(const Instruction& inst, int64_t i) {
  const Shape& shape = ExpectArrayOperand(inst, i);
  if (shape.rank() != 0 || !IsInteger(shape.type)) {
    Fail(inst, "operand " + std::to_string(i) + " has shape " + shape.ToString(false) +
                   " but a scalar integer index was expected");
  }
}

const Shape& DeclaredArray(const Instruction& inst) {
  if (!inst.shape().IsArray()) {
    Fail(inst, "result shape " + inst.shape().ToString(false) + " must be an array");
  }
  return inst.shape();
}

const Computation& Callee(const Instruction& inst, size_t i, std::string_view role,
                          int64_t expected_count) {
  const auto& called = inst.called_computations();
  const int64_t count = static_cast<int64_t>(called.size());
  if (expected_count >= 0 && count != expected_count) {
    Fail(inst, "expects " + std::to_string(expected_count) + " called computation" +
                   (expected_count == 1 ? "" : "s") + ", got " + std::to_string(count));
  }
  if (expected_count < 0 && count == 0) Fail(inst, "expects at least one called computation");
  if (i >= called.size() || called[i] == nullptr) {
    Fail(inst, "called computation '" + std::string(role) + "' is missing");
  }
  if (called[i]->root() == nullptr) {
    Fail(inst, std::string(role) + " computation '" + called[i]->name() + "' has no root");
  }
  return *called[i];
}

const Shape& RootShape(const Instruction& inst, const Computation& callee) {
  if (callee.root() == nullptr) Fail(inst, "computation '" + callee.name() + "' has no root");
  return callee.root()->shape();
}

void ExpectParameters(const Instruction& inst, const Computation& callee, std::string_view role,
                      std::span<const Shape> params) {
  const std::string what = std::string(role) + " computation '" + callee.name() + "'";
  if (callee.parameter_count() != static_cast<int64_t>(params.size())) {
    Fail(inst, what + " takes " + std::to_string(callee.parameter_count()) +
                   " parameters but " + std::to_string(params.size()) + " were expected");
  }
  for (size_t p = 0; p < params.size(); ++p) {
    const Instruction* param = callee.parameters()[p];
    if (param == nullptr) Fail(inst, what + " has no parameter " + std::to_string(p));
    if (!param->shape().Compatible(params[p])) {
      Fail(inst, what + " parameter " + std::to_string(p) + " has shape " +
                     param->shape().ToString(false) + " but " + params[p].ToString(false) +
                     " was expected");
    }
  }
}

void ExpectSignature(const Instruction& inst, const Computation& callee, std::string_view role,
                     std::span<const Shape> params, const Shape& result) {
  ExpectParameters(inst, callee, role, params);
  const Shape& root = RootShape(inst, callee);
  if (!root.Compatible(result)) {
    Fail(inst, std::string(role) + " computation '" + callee.name() + "' returns " +
                   root.ToString(false) + " but " + result.ToString(false) + " was expected");
  }
}

void ExpectDimension(const Instruction& inst, int64_t dim, int64_t rank, std::string_view what) {
  if (dim < 0 || dim >= rank) {
    Fail(inst, std::string(what) + " " + std::to_string(dim) + " is out of range for rank " +
                   std::to_string(rank));
  }
}

void ExpectDistinctDimensions(const Instruction& inst, std::span<const int64_t> dims, int64_t rank,
                              std::string_view what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    ExpectDimension(inst, d, rank, what);
    if (seen[static_cast<size_t>(d)]) {
      Fail(inst, std::string(what) + " " + DimsToString(dims) + " repeat dimension " +
                     std::to_string(d));
    }
    seen[static_cast<size_t>(d)] = true;
  }
}

bool SameTypeIgnoringFpPrecision(PrimitiveType a, PrimitiveType b) {
  return a == b || (IsFloating(a) && IsFloating(b));
}

Shape TupleOrSingle(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

int64_t WindowedOutputSize(const Instruction& inst, int64_t input_size, const WindowDim& window,
                           int64_t dim_index) {
  const std::string where = "window dimension " + std::to_string(dim_index);
  if (window.size < 1 || window.stride < 1 || window.base_dilation < 1 ||
      window.window_dilation < 1) {
    Fail(inst, where + " needs size, stride and dilations >= 1");
  }
  // 128-bit arithmetic: every factor fits in int64, so no intermediate below can overflow, and
  // absurd attribute values become a clean error instead of wrapping around.
  using Wide = __int128;
  const Wide dilated_input =
      input_size == 0 ? 0 : Wide{input_size - 1} * window.base_dilation + 1;
  const Wide padded = dilated_input + window.pad_lo + window.pad_hi;
  const Wide dilated_window = Wide{window.size - 1} * window.window_dilation + 1;
  if (padded < 0) {
    Fail(inst, where + " has negative padded size " + std::to_string(static_cast<int64_t>(padded)));
  }
  if (padded > std::numeric_limits<int64_t>::max()) Fail(inst, where + " is too large");
  if (padded < dilated_window) return 0;
  return static_cast<int64_t>((padded - dilated_window) / window.stride + 1);
}

Shape InferLeafShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
      // A parameter's shape is what it declares; the verifier checks its number separately.
      return inst.shape();
    case Opcode::kConstant: {
      const auto& attrs = AttrsOf<ConstantAttrs>(inst, "constant");
      if (!attrs.literal.shape().Compatible(inst.shape())) {
        Fail(inst, "literal has shape " + attrs.literal.shape().ToString(false) +
                       " but the constant declares " + inst.shape().ToString(false));
      }
      return inst.shape();
    }
    case Opcode::kIota: {
      const Shape& declared = DeclaredArray(inst);
      if (declared.rank() == 0) Fail(inst, "iota needs a result of rank >= 1");
      ExpectDimension(inst, AttrsOf<IotaAttrs>(inst, "iota").dimension, declared.rank(),
                      "iota_dimension");
      return Shape::Array(declared.type, declared.dims);
    }
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return Shape::Scalar(PrimitiveType::kU32);
    case Opcode::kRngGetAndUpdateState:
      return Shape::Array(PrimitiveType::kU64, {2});
    case Opcode::kAfterAll:
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        if (!OperandShape(inst, i).IsToken()) {
          Fail(inst, "operand " + std::to_string(i) + " has shape " +
                         OperandShape(inst, i).ToString(false) + " but a token was expected");
        }
      }
      return Shape::Token();
    default:
      Fail(inst, "is not a leaf opcode (internal error)");
  }
}

// The contract promises default layouts; families that pass an operand or callee shape through
// would otherwise leak its layout.
void ClearLayouts(Shape& shape) {
  shape.has_layout = false;
  shape.minor_to_major.clear();
  for (Shape& element : shape.tuple_shapes) ClearLayouts(element);
}

Shape InferShapeOfFamily(const Instruction& inst);

}  // namespace shape_inference

Shape InferShape(const Instruction& inst) {
  Shape shape = shape_inference::InferShapeOfFamily(inst);
  shape_inference::ClearLayouts(shape);
  return shape;
}

namespace shape_inference {

Shape InferShapeOfFamily(const Instruction& inst) {
  // The fixed arity from the opcode table first, so that every family may index its operands.
  const int arity = OpcodeArity(inst.opcode());
  if (arity != kVariadic) ExpectOperandCount(inst, arity);
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (inst.operand(i) == nullptr) Fail(inst, "operand " + std::to_string(i) + " is missing");
  }
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kAfterAll:
      return InferLeafShape(inst);
    case Opcode::kAbs:
    case Opcode::kBitcastConvert:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kCos:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kReducePrecision:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
    case Opcode::kClamp:
    case Opcode::kSelect:
      return InferElementwiseShape(inst);
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGetTupleElement:
    case Opcode::kPad:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kTuple:
    case Opcode::kOptimizationBarrier:
      return InferDataMovementShape(inst);
    case Opcode::kGather:
      return InferGatherShape(inst);
    case Opcode::kScatter:
      return InferScatterShape(inst);
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kMap:
      return InferReductionShape(inst);
    case Opcode::kFft:
      return InferFftShape(inst);
    case Opcode::kConvolution:
    case Opcode::kDot:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
      return InferContractionShape(inst);
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kFusion:
    case Opcode::kWhile:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
      return InferControlShape(inst);
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kReduceScatter:
      return InferCollectiveShape(inst);
  }
  Fail(inst, "has an unknown opcode");
}

}  // namespace shape_inference
}  // namespace hlo

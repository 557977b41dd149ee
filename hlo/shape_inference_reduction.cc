// Shape inference for reduce, reduce-window, select-and-scatter, sort, topk and map, including
// the signatures of their called computations:
//
//   reduce / reduce-window (N inputs, N inits): to_apply takes 2N scalars (accumulators typed as
//     the inits, then the input elements) and returns N scalars (a tuple when N > 1). The input
//     element types may differ from the accumulators in floating-point precision only.
//   select-and-scatter: select is (T, T) -> pred[], scatter is (T, T) -> T.
//   sort (N operands): the comparator takes 2N scalars (lhs/rhs of each operand, interleaved)
//     and returns pred[].
//   map (N operands): to_apply takes N scalars and returns one scalar.
//   topk: (values[..., k], s32 indices[..., k]) over the last dimension.
#include <string>

#include "hlo/shape_inference_internal.h"

namespace hlo::shape_inference {
namespace {

// Checks inputs [0, n) share dimensions and inits [n, 2n) are scalars; checks the reducer
// (callee 0) and returns the accumulator types.
std::vector<PrimitiveType> CheckReducer(const Instruction& inst, int64_t n) {
  const Shape& first = ExpectArrayOperand(inst, 0);
  std::vector<Shape> accumulators;
  for (int64_t k = 0; k < n; ++k) {
    const Shape& input = ExpectArrayOperand(inst, k);
    if (input.dims != first.dims) {
      Fail(inst, "operand " + std::to_string(k) + " has shape " + input.ToString(false) +
                     " but the dimensions of " + first.ToString(false) + " were expected");
    }
    const Shape& init = ExpectArrayOperand(inst, n + k);
    if (init.rank() != 0 || !SameTypeIgnoringFpPrecision(init.type, input.type)) {
      Fail(inst, "operand " + std::to_string(n + k) + " (init value) has shape " +
                     init.ToString(false) + " but a " +
                     std::string(PrimitiveTypeName(input.type)) + " scalar was expected");
    }
    accumulators.push_back(Shape::Scalar(init.type));
  }
  const Computation& reducer = Callee(inst, 0, "to_apply", 1);
  const std::string what = "to_apply computation '" + reducer.name() + "'";
  if (reducer.parameter_count() != 2 * n) {
    Fail(inst, what + " takes " + std::to_string(reducer.parameter_count()) +
                   " parameters but " + std::to_string(2 * n) + " were expected");
  }
  for (int64_t p = 0; p < 2 * n; ++p) {
    const Instruction* param = reducer.parameters()[static_cast<size_t>(p)];
    if (param == nullptr) Fail(inst, what + " has no parameter " + std::to_string(p));
    const Shape& accumulator = accumulators[static_cast<size_t>(p % n)];
    const bool is_accumulator = p < n;
    const bool ok = param->shape().IsArray() && param->shape().rank() == 0 &&
                    (is_accumulator
                         ? param->shape().type == accumulator.type
                         : SameTypeIgnoringFpPrecision(param->shape().type, accumulator.type));
    if (!ok) {
      Fail(inst, what + " parameter " + std::to_string(p) + " has shape " +
                     param->shape().ToString(false) + " but " + accumulator.ToString(false) +
                     " was expected");
    }
  }
  const Shape expected_root = TupleOrSingle(accumulators);
  if (!RootShape(inst, reducer).Compatible(expected_root)) {
    Fail(inst, what + " returns " + RootShape(inst, reducer).ToString(false) + " but " +
                   expected_root.ToString(false) + " was expected");
  }
  std::vector<PrimitiveType> types;
  for (const Shape& a : accumulators) types.push_back(a.type);
  return types;
}

int64_t EvenHalf(const Instruction& inst) {
  if (inst.operand_count() < 2 || inst.operand_count() % 2 != 0) {
    Fail(inst, "expects N inputs and N init values (an even count >= 2), got " +
                   std::to_string(inst.operand_count()));
  }
  return inst.operand_count() / 2;
}

Shape InferReduce(const Instruction& inst) {
  const int64_t n = EvenHalf(inst);
  const std::vector<PrimitiveType> types = CheckReducer(inst, n);
  const Shape& input = OperandShape(inst, 0);
  const auto& reduced = AttrsOf<DimensionsAttrs>(inst, "dimensions").dimensions;
  ExpectDistinctDimensions(inst, reduced, input.rank(), "reduce dimensions");
  std::vector<bool> is_reduced(input.dims.size(), false);
  for (int64_t d : reduced) is_reduced[static_cast<size_t>(d)] = true;
  std::vector<int64_t> kept;
  for (size_t d = 0; d < input.dims.size(); ++d) {
    if (!is_reduced[d]) kept.push_back(input.dims[d]);
  }
  std::vector<Shape> results;
  for (PrimitiveType t : types) results.push_back(Shape::Array(t, kept));
  return TupleOrSingle(std::move(results));
}

std::vector<int64_t> WindowedDims(const Instruction& inst, const Shape& input,
                                  const Window& window) {
  if (static_cast<int64_t>(window.dims.size()) != input.rank()) {
    Fail(inst, "window has " + std::to_string(window.dims.size()) +
                   " dimensions but the operand has rank " + std::to_string(input.rank()));
  }
  std::vector<int64_t> dims;
  for (size_t d = 0; d < window.dims.size(); ++d) {
    dims.push_back(
        WindowedOutputSize(inst, input.dims[d], window.dims[d], static_cast<int64_t>(d)));
  }
  return dims;
}

Shape InferReduceWindow(const Instruction& inst) {
  const int64_t n = EvenHalf(inst);
  const std::vector<PrimitiveType> types = CheckReducer(inst, n);
  const std::vector<int64_t> dims =
      WindowedDims(inst, OperandShape(inst, 0), AttrsOf<WindowAttrs>(inst, "window").window);
  std::vector<Shape> results;
  for (PrimitiveType t : types) results.push_back(Shape::Array(t, dims));
  return TupleOrSingle(std::move(results));
}

Shape InferSelectAndScatter(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& source = ExpectArrayOperand(inst, 1);
  const Shape& init = ExpectArrayOperand(inst, 2);
  const Shape scalar = Shape::Scalar(operand.type);
  if (!init.Compatible(scalar)) {
    Fail(inst, "operand 2 has shape " + init.ToString(false) + " but " +
                   scalar.ToString(false) + " was expected");
  }
  const Shape expected_source = Shape::Array(
      operand.type,
      WindowedDims(inst, operand, AttrsOf<WindowAttrs>(inst, "window").window));
  if (!source.Compatible(expected_source)) {
    Fail(inst, "operand 1 has shape " + source.ToString(false) + " but " +
                   expected_source.ToString(false) + " was expected");
  }
  const Shape pair[] = {scalar, scalar};
  ExpectSignature(inst, Callee(inst, 0, "select", 2), "select", pair,
                  Shape::Scalar(PrimitiveType::kPred));
  ExpectSignature(inst, Callee(inst, 1, "scatter", 2), "scatter", pair, scalar);
  return Shape::Array(operand.type, operand.dims);
}

Shape InferSort(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 1);
  const Shape& first = ExpectArrayOperand(inst, 0);
  ExpectDimension(inst, AttrsOf<SortAttrs>(inst, "sort").dimension, first.rank(),
                  "sort dimension");
  std::vector<Shape> results, comparator_params;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    const Shape& operand = ExpectArrayOperand(inst, k);
    if (operand.dims != first.dims) {
      Fail(inst, "operand " + std::to_string(k) + " has shape " + operand.ToString(false) +
                     " but the dimensions of " + first.ToString(false) + " were expected");
    }
    results.push_back(Shape::Array(operand.type, operand.dims));
    comparator_params.push_back(Shape::Scalar(operand.type));
    comparator_params.push_back(Shape::Scalar(operand.type));
  }
  ExpectSignature(inst, Callee(inst, 0, "comparator", 1), "comparator", comparator_params,
                  Shape::Scalar(PrimitiveType::kPred));
  return TupleOrSingle(std::move(results));
}

Shape InferTopK(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  if (operand.rank() == 0) Fail(inst, "topk needs an operand of rank >= 1");
  const int64_t k = AttrsOf<TopKAttrs>(inst, "topk").k;
  if (k < 0 || k > operand.dims.back()) {
    Fail(inst, "k=" + std::to_string(k) + " is out of range for " + operand.ToString(false));
  }
  std::vector<int64_t> dims = operand.dims;
  dims.back() = k;
  return Shape::Tuple({Shape::Array(operand.type, dims), Shape::Array(PrimitiveType::kS32, dims)});
}

Shape InferMap(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 1);
  const Shape& first = ExpectArrayOperand(inst, 0);
  std::vector<Shape> params;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    const Shape& operand = ExpectArrayOperand(inst, k);
    if (operand.dims != first.dims) {
      Fail(inst, "operand " + std::to_string(k) + " has shape " + operand.ToString(false) +
                     " but the dimensions of " + first.ToString(false) + " were expected");
    }
    params.push_back(Shape::Scalar(operand.type));
  }
  // XLA only supports maps over all dimensions, in order.
  const auto& dims = AttrsOf<DimensionsAttrs>(inst, "dimensions").dimensions;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims.size() != first.dims.size() || dims[i] != static_cast<int64_t>(i)) {
      Fail(inst, "map dimensions " + DimsToString(dims) + " must be all dimensions in order");
    }
  }
  const Computation& callee = Callee(inst, 0, "to_apply", 1);
  ExpectParameters(inst, callee, "to_apply", params);
  const Shape& root = RootShape(inst, callee);
  if (!root.IsArray() || root.rank() != 0) {
    Fail(inst, "to_apply computation '" + callee.name() + "' returns " + root.ToString(false) +
                   " but a scalar was expected");
  }
  return Shape::Array(root.type, first.dims);
}

}  // namespace

Shape InferReductionShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kReduce: return InferReduce(inst);
    case Opcode::kReduceWindow: return InferReduceWindow(inst);
    case Opcode::kSelectAndScatter: return InferSelectAndScatter(inst);
    case Opcode::kSort: return InferSort(inst);
    case Opcode::kTopK: return InferTopK(inst);
    case Opcode::kMap: return InferMap(inst);
    default: break;
  }
  Fail(inst, "is not a reduction op (internal error)");
}

}  // namespace hlo::shape_inference

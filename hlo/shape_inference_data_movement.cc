// Shape inference for the data-movement ops: bitcast, broadcast, concatenate, dynamic-slice,
// dynamic-update-slice, get-tuple-element, pad, reshape, reverse, slice, transpose, tuple and
// opt-barrier (gather and scatter live in shape_inference_gather.cc).
//
// These ops never change the element type. Where XLA cannot infer the dimensions (broadcast,
// reshape, bitcast), the declared dimensions are taken after checking what is checkable: the
// broadcast mapping, the element count, the byte size.
#include <limits>
#include <string>

#include "hlo/shape_inference_internal.h"

namespace hlo::shape_inference {
namespace {

Shape InferBroadcast(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& declared = DeclaredArray(inst);
  const auto& dims = AttrsOf<DimensionsAttrs>(inst, "dimensions").dimensions;
  if (static_cast<int64_t>(dims.size()) != operand.rank()) {
    Fail(inst, "dimensions " + DimsToString(dims) + " must map each of the " +
                   std::to_string(operand.rank()) + " operand dimensions");
  }
  ExpectDistinctDimensions(inst, dims, declared.rank(), "broadcast dimensions");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (declared.dims[static_cast<size_t>(dims[i])] != operand.dims[i]) {
      Fail(inst, "operand dimension " + std::to_string(i) + " has size " +
                     std::to_string(operand.dims[i]) + " but result dimension " +
                     std::to_string(dims[i]) + " has size " +
                     std::to_string(declared.dims[static_cast<size_t>(dims[i])]));
    }
  }
  return Shape::Array(operand.type, declared.dims);
}

Shape InferReshape(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& declared = DeclaredArray(inst);
  if (operand.ElementCount() != declared.ElementCount()) {
    Fail(inst, "cannot reshape " + operand.ToString(false) + " (" +
                   std::to_string(operand.ElementCount()) + " elements) to " +
                   declared.ToString(false) + " (" + std::to_string(declared.ElementCount()) +
                   " elements)");
  }
  return Shape::Array(operand.type, declared.dims);
}

Shape InferBitcast(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& declared = DeclaredArray(inst);
  // A bitcast reinterprets the buffer, so only the byte size must agree.
  const int64_t from_bytes = operand.ElementCount() * ByteSize(operand.type);
  const int64_t to_bytes = declared.ElementCount() * ByteSize(declared.type);
  if (from_bytes != to_bytes) {
    Fail(inst, "bitcast from " + operand.ToString(false) + " (" + std::to_string(from_bytes) +
                   " bytes) to " + declared.ToString(false) + " (" + std::to_string(to_bytes) +
                   " bytes) changes the byte size");
  }
  return Shape::Array(declared.type, declared.dims);
}

Shape InferTranspose(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const auto& perm = AttrsOf<DimensionsAttrs>(inst, "dimensions").dimensions;
  if (static_cast<int64_t>(perm.size()) != operand.rank()) {
    Fail(inst, "dimensions " + DimsToString(perm) + " is not a permutation of rank " +
                   std::to_string(operand.rank()));
  }
  ExpectDistinctDimensions(inst, perm, operand.rank(), "transpose dimensions");
  std::vector<int64_t> dims;
  dims.reserve(perm.size());
  for (int64_t p : perm) dims.push_back(operand.dims[static_cast<size_t>(p)]);
  return Shape::Array(operand.type, std::move(dims));
}

Shape InferSlice(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const auto& slice = AttrsOf<SliceAttrs>(inst, "slice").dims;
  if (static_cast<int64_t>(slice.size()) != operand.rank()) {
    Fail(inst, "slice has " + std::to_string(slice.size()) + " dimensions but the operand has " +
                   std::to_string(operand.rank()));
  }
  std::vector<int64_t> dims;
  dims.reserve(slice.size());
  for (size_t i = 0; i < slice.size(); ++i) {
    const SliceDim& s = slice[i];
    if (s.start < 0 || s.start > s.limit || s.limit > operand.dims[i] || s.stride < 1) {
      Fail(inst, "slice [" + std::to_string(s.start) + ":" + std::to_string(s.limit) + ":" +
                     std::to_string(s.stride) + "] is invalid for dimension " +
                     std::to_string(i) + " of size " + std::to_string(operand.dims[i]));
    }
    // ceil((limit - start) / stride), written so that a huge stride cannot overflow.
    dims.push_back(s.limit == s.start ? 0 : (s.limit - s.start - 1) / s.stride + 1);
  }
  return Shape::Array(operand.type, std::move(dims));
}

// Start indices of dynamic-slice / dynamic-update-slice from operand `first` on: one scalar per
// dimension (current form) or a single rank-1 vector (older dumps). All of one integer type.
void CheckStartIndices(const Instruction& inst, int64_t first, int64_t rank) {
  const int64_t count = inst.operand_count() - first;
  if (count == 1 && rank != 1 && ExpectArrayOperand(inst, first).rank() == 1) {
    const Shape& vector = OperandShape(inst, first);
    if (!IsInteger(vector.type) || vector.dims[0] != rank) {
      Fail(inst, "start index vector has shape " + vector.ToString(false) + " but s32[" +
                     std::to_string(rank) + "] was expected");
    }
    return;
  }
  if (count != rank) {
    Fail(inst, "expects " + std::to_string(rank) + " start indices, got " +
                   std::to_string(count));
  }
  for (int64_t i = first; i < inst.operand_count(); ++i) {
    ExpectScalarIndexOperand(inst, i);
    if (OperandShape(inst, i).type != OperandShape(inst, first).type) {
      Fail(inst, "start indices must all have the same type (operand " + std::to_string(i) +
                     " is " + OperandShape(inst, i).ToString(false) + ")");
    }
  }
}

Shape InferDynamicSlice(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 2);
  const Shape& operand = ExpectArrayOperand(inst, 0);
  CheckStartIndices(inst, 1, operand.rank());
  const auto& sizes = AttrsOf<DynamicSliceAttrs>(inst, "dynamic_slice_sizes").sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    Fail(inst, "dynamic_slice_sizes " + DimsToString(sizes) + " does not match rank " +
                   std::to_string(operand.rank()));
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || sizes[i] > operand.dims[i]) {
      Fail(inst, "slice size " + std::to_string(sizes[i]) + " is out of range for dimension " +
                     std::to_string(i) + " of size " + std::to_string(operand.dims[i]));
    }
  }
  return Shape::Array(operand.type, sizes);
}

Shape InferDynamicUpdateSlice(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 3);
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& update = ExpectArrayOperand(inst, 1);
  CheckStartIndices(inst, 2, operand.rank());
  if (update.type != operand.type || update.rank() != operand.rank()) {
    Fail(inst, "operand 1 has shape " + update.ToString(false) + " but a " +
                   std::string(PrimitiveTypeName(operand.type)) + " update of rank " +
                   std::to_string(operand.rank()) + " was expected");
  }
  for (size_t i = 0; i < update.dims.size(); ++i) {
    if (update.dims[i] > operand.dims[i]) {
      Fail(inst, "update " + update.ToString(false) + " does not fit in operand " +
                     operand.ToString(false));
    }
  }
  return Shape::Array(operand.type, operand.dims);
}

Shape InferConcatenate(const Instruction& inst) {
  ExpectOperandCountAtLeast(inst, 1);
  const Shape& first = ExpectArrayOperand(inst, 0);
  const auto& dims = AttrsOf<DimensionsAttrs>(inst, "dimensions").dimensions;
  if (dims.size() != 1) Fail(inst, "concatenate needs exactly one dimension");
  const int64_t axis = dims[0];
  ExpectDimension(inst, axis, first.rank(), "concatenate dimension");
  std::vector<int64_t> result = first.dims;
  result[static_cast<size_t>(axis)] = 0;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& shape = ExpectArrayOperand(inst, i);
    bool ok = shape.type == first.type && shape.rank() == first.rank();
    for (int64_t d = 0; ok && d < first.rank(); ++d) {
      ok = d == axis || shape.dims[static_cast<size_t>(d)] == first.dims[static_cast<size_t>(d)];
    }
    if (!ok) {
      Fail(inst, "operand " + std::to_string(i) + " has shape " + shape.ToString(false) +
                     " which does not concatenate with " + first.ToString(false) +
                     " along dimension " + std::to_string(axis));
    }
    result[static_cast<size_t>(axis)] += shape.dims[static_cast<size_t>(axis)];
  }
  return Shape::Array(first.type, std::move(result));
}

Shape InferPad(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& value = ExpectArrayOperand(inst, 1);
  if (value.rank() != 0 || value.type != operand.type) {
    Fail(inst, "operand 1 has shape " + value.ToString(false) + " but " +
                   std::string(PrimitiveTypeName(operand.type)) + "[] was expected");
  }
  const auto& padding = AttrsOf<PadAttrs>(inst, "padding").dims;
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    Fail(inst, "padding has " + std::to_string(padding.size()) +
                   " dimensions but the operand has " + std::to_string(operand.rank()));
  }
  std::vector<int64_t> dims;
  dims.reserve(padding.size());
  for (size_t i = 0; i < padding.size(); ++i) {
    const PadDim& p = padding[i];
    const int64_t d = operand.dims[i];
    if (p.interior < 0) {
      Fail(inst, "interior padding of dimension " + std::to_string(i) + " is negative");
    }
    // Interior padding goes between elements; negative edge padding removes elements.
    // Computed in 128 bits so that absurd padding is an error rather than a wrapped size.
    using Wide = __int128;
    const Wide wide = Wide{p.lo} + p.hi + d + (d > 0 ? Wide{d - 1} * p.interior : 0);
    if (wide < 0) {
      Fail(inst, "padding makes dimension " + std::to_string(i) + " negative (" +
                     std::to_string(static_cast<int64_t>(wide)) + ")");
    }
    if (wide > std::numeric_limits<int64_t>::max()) {
      Fail(inst, "padding makes dimension " + std::to_string(i) + " too large");
    }
    const int64_t size = static_cast<int64_t>(wide);
    dims.push_back(size);
  }
  return Shape::Array(operand.type, std::move(dims));
}

Shape InferGetTupleElement(const Instruction& inst) {
  const Shape& tuple = OperandShape(inst, 0);
  if (!tuple.IsTuple()) {
    Fail(inst, "operand 0 has shape " + tuple.ToString(false) + " but a tuple was expected");
  }
  const int64_t index = AttrsOf<TupleIndexAttrs>(inst, "index").index;
  if (index < 0 || index >= static_cast<int64_t>(tuple.tuple_shapes.size())) {
    Fail(inst, "index " + std::to_string(index) + " is out of range for " +
                   tuple.ToString(false));
  }
  return tuple.tuple_shapes[static_cast<size_t>(index)];
}

}  // namespace

Shape InferDataMovementShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kBitcast: return InferBitcast(inst);
    case Opcode::kBroadcast: return InferBroadcast(inst);
    case Opcode::kConcatenate: return InferConcatenate(inst);
    case Opcode::kDynamicSlice: return InferDynamicSlice(inst);
    case Opcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(inst);
    case Opcode::kGetTupleElement: return InferGetTupleElement(inst);
    case Opcode::kPad: return InferPad(inst);
    case Opcode::kReshape: return InferReshape(inst);
    case Opcode::kReverse: {
      const Shape& operand = ExpectArrayOperand(inst, 0);
      ExpectDistinctDimensions(inst, AttrsOf<DimensionsAttrs>(inst, "dimensions").dimensions,
                               operand.rank(), "reverse dimensions");
      return Shape::Array(operand.type, operand.dims);
    }
    case Opcode::kSlice: return InferSlice(inst);
    case Opcode::kTranspose: return InferTranspose(inst);
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      elements.reserve(static_cast<size_t>(inst.operand_count()));
      for (int64_t i = 0; i < inst.operand_count(); ++i) elements.push_back(OperandShape(inst, i));
      return Shape::Tuple(std::move(elements));
    }
    case Opcode::kOptimizationBarrier: return OperandShape(inst, 0);
    default: break;
  }
  Fail(inst, "is not a data-movement op (internal error)");
}

}  // namespace hlo::shape_inference

// Data movement: bitcast, broadcast, concatenate, dynamic-slice, dynamic-update-slice, pad,
// reshape, reverse, slice, transpose, iota, copy-like ops (gather is in evaluator_gather.cc).
//
// Guarantees: every op is one or two StridedCopy calls (memcpy of contiguous runs) after the
// attributes have been checked against the operand shapes, so a malformed module is an
// hlo::Error, never an out-of-bounds access. Start indices of dynamic-slice and
// dynamic-update-slice may have any integer type and are clamped so the window stays in bounds
// (ir.h). bitcast reinterprets the operand's physical buffer (its layout) in the result's
// layout; with default layouts on both sides it is a reshape.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/evaluator_family.h"
#include "hlo/evaluator_types.h"

namespace hlo::eval {
namespace {

[[noreturn]] void Fail(const Instruction& inst, const std::string& message) {
  throw Error("'" + std::string(OpcodeName(inst.opcode())) + "': " + message);
}

const Literal& ArrayOperand(const Instruction& inst, Operands operands, size_t k) {
  if (k >= operands.size() || !operands[k]->shape().IsArray()) {
    Fail(inst, "operand " + std::to_string(k) + " must be an array");
  }
  return *operands[k];
}

void CheckSameType(const Instruction& inst, const Literal& operand) {
  if (operand.shape().type != inst.shape().type) {
    Fail(inst, "operand type " + std::string(PrimitiveTypeName(operand.shape().type)) +
                   " differs from result type " + std::string(PrimitiveTypeName(inst.shape().type)));
  }
}

int64_t ElementSize(const Shape& shape) { return ByteSize(shape.type); }

Literal Broadcast(const Instruction& inst, const Literal& operand) {
  CheckSameType(inst, operand);
  const auto& map = inst.attr<DimensionsAttrs>().dimensions;
  const Shape& out_shape = inst.shape();
  if (map.size() != operand.shape().dims.size()) Fail(inst, "dimensions do not match operand rank");
  std::vector<int64_t> src_strides(out_shape.dims.size(), 0);
  std::vector<int64_t> operand_strides = RowMajorStrides(operand.shape().dims);
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0 || map[i] >= out_shape.rank() ||
        out_shape.dims[map[i]] != operand.shape().dims[i]) {
      Fail(inst, "operand dimension " + std::to_string(i) + " does not map onto the result");
    }
    src_strides[map[i]] = operand_strides[i];
  }
  Literal result = MakeResult(inst);
  StridedCopy(result.mutable_bytes().data(), 0, RowMajorStrides(out_shape.dims),
              operand.bytes().data(), 0, src_strides, out_shape.dims, ElementSize(out_shape));
  return result;
}

Literal Transpose(const Instruction& inst, const Literal& operand) {
  CheckSameType(inst, operand);
  const auto& perm = inst.attr<DimensionsAttrs>().dimensions;
  const Shape& out_shape = inst.shape();
  const auto& in_dims = operand.shape().dims;
  if (perm.size() != in_dims.size() || out_shape.dims.size() != in_dims.size()) {
    Fail(inst, "permutation does not match the operand rank");
  }
  std::vector<int64_t> operand_strides = RowMajorStrides(in_dims);
  std::vector<int64_t> src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(in_dims.size()) ||
        out_shape.dims[i] != in_dims[perm[i]]) {
      Fail(inst, "permutation entry " + std::to_string(i) + " is invalid");
    }
    src_strides[i] = operand_strides[perm[i]];
  }
  Literal result = MakeResult(inst);
  StridedCopy(result.mutable_bytes().data(), 0, RowMajorStrides(out_shape.dims),
              operand.bytes().data(), 0, src_strides, out_shape.dims, ElementSize(out_shape));
  return result;
}

Literal Slice(const Instruction& inst, const Literal& operand) {
  CheckSameType(inst, operand);
  const auto& slice = inst.attr<SliceAttrs>().dims;
  const auto& in_dims = operand.shape().dims;
  const Shape& out_shape = inst.shape();
  if (slice.size() != in_dims.size() || out_shape.dims.size() != in_dims.size()) {
    Fail(inst, "slice does not match the operand rank");
  }
  std::vector<int64_t> operand_strides = RowMajorStrides(in_dims);
  std::vector<int64_t> src_strides(slice.size());
  int64_t src_offset = 0;
  for (size_t d = 0; d < slice.size(); ++d) {
    const SliceDim& s = slice[d];
    if (s.start < 0 || s.limit > in_dims[d] || s.start > s.limit || s.stride < 1 ||
        out_shape.dims[d] != (s.limit - s.start + s.stride - 1) / s.stride) {
      Fail(inst, "slice of dimension " + std::to_string(d) + " is out of bounds");
    }
    src_strides[d] = operand_strides[d] * s.stride;
    src_offset += s.start * operand_strides[d];
  }
  Literal result = MakeResult(inst);
  StridedCopy(result.mutable_bytes().data(), 0, RowMajorStrides(out_shape.dims),
              operand.bytes().data(), src_offset, src_strides, out_shape.dims,
              ElementSize(out_shape));
  return result;
}

Literal Reverse(const Instruction& inst, const Literal& operand) {
  CheckSameType(inst, operand);
  const auto& in_dims = operand.shape().dims;
  std::vector<int64_t> src_strides = RowMajorStrides(in_dims);
  int64_t src_offset = 0;
  for (int64_t d : inst.attr<DimensionsAttrs>().dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(in_dims.size())) Fail(inst, "dimension out of range");
    if (in_dims[d] == 0) continue;
    src_offset += (in_dims[d] - 1) * src_strides[d];
    src_strides[d] = -src_strides[d];
  }
  Literal result = MakeResult(inst);
  if (inst.shape().dims != in_dims) Fail(inst, "result dimensions differ from the operand's");
  StridedCopy(result.mutable_bytes().data(), 0, RowMajorStrides(in_dims), operand.bytes().data(),
              src_offset, src_strides, in_dims, ElementSize(inst.shape()));
  return result;
}

Literal Concatenate(const Instruction& inst, Operands operands) {
  const auto& dims_attr = inst.attr<DimensionsAttrs>().dimensions;
  const Shape& out_shape = inst.shape();
  if (dims_attr.size() != 1 || dims_attr[0] < 0 || dims_attr[0] >= out_shape.rank()) {
    Fail(inst, "needs exactly one valid dimension");
  }
  const int64_t axis = dims_attr[0];
  Literal result = MakeResult(inst);
  std::vector<int64_t> out_strides = RowMajorStrides(out_shape.dims);
  int64_t position = 0;
  for (size_t k = 0; k < operands.size(); ++k) {
    const Literal& piece = ArrayOperand(inst, operands, k);
    CheckSameType(inst, piece);
    const auto& dims = piece.shape().dims;
    for (int64_t d = 0; d < out_shape.rank(); ++d) {
      if (dims.size() != out_shape.dims.size() || (d != axis && dims[d] != out_shape.dims[d])) {
        Fail(inst, "operand " + std::to_string(k) + " has incompatible dimensions");
      }
    }
    if (position + dims[axis] > out_shape.dims[axis]) Fail(inst, "operands exceed the result");
    StridedCopy(result.mutable_bytes().data(), position * out_strides[axis], out_strides,
                piece.bytes().data(), 0, RowMajorStrides(dims), dims, ElementSize(out_shape));
    position += dims[axis];
  }
  return result;
}

Literal Pad(const Instruction& inst, const Literal& operand, const Literal& padding_value) {
  CheckSameType(inst, operand);
  CheckSameType(inst, padding_value);
  if (padding_value.element_count() != 1) Fail(inst, "padding value must be a scalar");
  const auto& pads = inst.attr<PadAttrs>().dims;
  const auto& in_dims = operand.shape().dims;
  const Shape& out_shape = inst.shape();
  if (pads.size() != in_dims.size() || out_shape.dims.size() != in_dims.size()) {
    Fail(inst, "padding does not match the operand rank");
  }
  Literal result = MakeResult(inst);
  const int64_t element_size = ElementSize(out_shape);
  const int64_t zero = 0;
  // Fill with the padding value (a broadcast of the scalar), then place the operand.
  std::vector<int64_t> fill_strides(out_shape.dims.size(), 0);
  StridedCopy(result.mutable_bytes().data(), 0, RowMajorStrides(out_shape.dims),
              padding_value.bytes().data(), zero, fill_strides, out_shape.dims, element_size);
  std::vector<int64_t> out_strides = RowMajorStrides(out_shape.dims);
  std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  std::vector<int64_t> dst_strides(in_dims.size()), counts(in_dims.size());
  int64_t dst_offset = 0, src_offset = 0;
  for (size_t d = 0; d < pads.size(); ++d) {
    const PadDim& p = pads[d];
    if (p.interior < 0) Fail(inst, "interior padding must be >= 0");
    const int64_t step = p.interior + 1;
    const int64_t expected =
        p.lo + p.hi + in_dims[d] + std::max<int64_t>(in_dims[d] - 1, 0) * p.interior;
    if (out_shape.dims[d] != expected) Fail(inst, "result dimension " + std::to_string(d) + " is wrong");
    // Operand elements i land at lo + i*step; negative padding crops those outside [0, out).
    const int64_t first = p.lo >= 0 ? 0 : (-p.lo + step - 1) / step;
    const int64_t last_position = out_shape.dims[d] - 1 - p.lo;
    const int64_t last = last_position < 0 ? -1 : std::min(in_dims[d] - 1, last_position / step);
    counts[d] = std::max<int64_t>(last - first + 1, 0);
    dst_strides[d] = step * out_strides[d];
    dst_offset += (p.lo + first * step) * out_strides[d];
    src_offset += first * in_strides[d];
  }
  for (int64_t c : counts) {
    if (c == 0) return result;
  }
  StridedCopy(result.mutable_bytes().data(), dst_offset, dst_strides, operand.bytes().data(),
              src_offset, in_strides, counts, element_size);
  return result;
}

// Copies the row-major data of `in` into `out` in physical order of their layouts: element at
// physical position p of the operand becomes the element at physical position p of the result.
Literal Bitcast(const Instruction& inst, const Literal& operand) {
  // The layout is the operand instruction's (a literal's own shape may carry none).
  const Shape& in_shape = inst.operand_count() == 1 ? inst.operand(0)->shape() : operand.shape();
  const Shape& out_shape = inst.shape();
  Literal result = MakeResult(inst);
  if (result.bytes().size() != operand.bytes().size()) Fail(inst, "changes the size in bytes");
  if (ElementSize(in_shape) != ElementSize(out_shape) ||
      (in_shape.HasDefaultLayout() && out_shape.HasDefaultLayout())) {
    if (!(in_shape.HasDefaultLayout() && out_shape.HasDefaultLayout())) {
      Fail(inst, "element sizes differ and layouts are not the default");
    }
    if (!result.bytes().empty()) std::memcpy(result.mutable_bytes().data(), operand.bytes().data(), result.bytes().size());
    return result;
  }
  // Physical order = dimensions from major to minor; stride of each in row-major logical data.
  auto physical = [](const Shape& shape, std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
    std::vector<int64_t> m2m = shape.EffectiveMinorToMajor();
    std::vector<int64_t> logical = RowMajorStrides(shape.dims);
    for (size_t i = m2m.size(); i-- > 0;) {
      dims.push_back(shape.dims[m2m[i]]);
      strides.push_back(logical[m2m[i]]);
    }
  };
  std::vector<int64_t> in_dims, in_strides, out_dims, out_strides;
  physical(in_shape, in_dims, in_strides);
  physical(out_shape, out_dims, out_strides);
  const int64_t element_size = ElementSize(out_shape);
  std::vector<uint8_t> linear(operand.bytes().size());
  StridedCopy(linear.data(), 0, RowMajorStrides(in_dims), operand.bytes().data(), 0, in_strides,
              in_dims, element_size);
  StridedCopy(result.mutable_bytes().data(), 0, out_strides, linear.data(), 0,
              RowMajorStrides(out_dims), out_dims, element_size);
  return result;
}

Literal Iota(const Instruction& inst) {
  const Shape& shape = inst.shape();
  const int64_t dimension = inst.attr<IotaAttrs>().dimension;
  if (dimension < 0 || dimension >= shape.rank()) Fail(inst, "iota_dimension out of range");
  Literal result = MakeResult(inst);
  const int64_t stride = RowMajorStrides(shape.dims)[dimension];
  const int64_t extent = shape.dims[dimension];
  DispatchArrayType(shape.type, [&](auto type) {
    constexpr PrimitiveType P = decltype(type)::value;
    using T = ElementTraits<P>;
    auto data = result.mutable_data<typename T::Storage>();
    for (size_t i = 0; i < data.size(); ++i) {
      const int64_t value = (static_cast<int64_t>(i) / stride) % extent;
      data[i] = T::Store(static_cast<typename T::Compute>(value));
    }
  });
  return result;
}

// Start indices of dynamic-(update-)slice: one scalar per dimension (or the old single vector
// form), clamped to [0, dim - window].
std::vector<int64_t> ClampedStarts(std::span<const int64_t> operand_dims,
                                   std::span<const int64_t> window, Operands indices) {
  const size_t rank = operand_dims.size();
  std::vector<int64_t> starts(rank, 0);
  if (indices.size() == 1 && indices[0]->shape().rank() == 1 && rank != 1) {
    const Literal& vector = *indices[0];
    if (vector.element_count() != static_cast<int64_t>(rank) || !IsInteger(vector.shape().type)) {
      throw Error("start index vector has " + vector.shape().ToString(false) + ", expected " +
                  std::to_string(rank) + " integers");
    }
    for (size_t d = 0; d < rank; ++d) starts[d] = IndexAsInt64(vector, static_cast<int64_t>(d));
  } else {
    if (indices.size() != rank) {
      throw Error("expected " + std::to_string(rank) + " start indices, got " +
                  std::to_string(indices.size()));
    }
    for (size_t d = 0; d < rank; ++d) starts[d] = ScalarAsInt64(*indices[d]);
  }
  for (size_t d = 0; d < rank; ++d) {
    if (window[d] < 0 || window[d] > operand_dims[d]) {
      throw Error("window size " + std::to_string(window[d]) + " exceeds dimension " +
                  std::to_string(d) + " of size " + std::to_string(operand_dims[d]));
    }
    starts[d] = std::clamp<int64_t>(starts[d], 0, operand_dims[d] - window[d]);
  }
  return starts;
}

Literal DynamicSlice(const Instruction& inst, Operands operands) {
  const Literal& operand = ArrayOperand(inst, operands, 0);
  CheckSameType(inst, operand);
  const auto& in_dims = operand.shape().dims;
  const auto& sizes = inst.shape().dims;
  if (sizes.size() != in_dims.size()) Fail(inst, "result rank differs from the operand's");
  std::vector<int64_t> starts = ClampedStarts(in_dims, sizes, operands.subspan(1));
  std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  int64_t offset = 0;
  for (size_t d = 0; d < starts.size(); ++d) offset += starts[d] * in_strides[d];
  Literal result = MakeResult(inst);
  StridedCopy(result.mutable_bytes().data(), 0, RowMajorStrides(sizes), operand.bytes().data(),
              offset, in_strides, sizes, ElementSize(inst.shape()));
  return result;
}

}  // namespace

void DynamicUpdateSliceInPlace(Literal& target, const Literal& update, Operands indices) {
  const auto& dims = target.shape().dims;
  if (!update.shape().IsArray() || update.shape().type != target.shape().type ||
      update.shape().dims.size() != dims.size()) {
    throw Error("update " + update.shape().ToString(false) + " does not fit " +
                target.shape().ToString(false));
  }
  const auto& window = update.shape().dims;
  std::vector<int64_t> starts = ClampedStarts(dims, window, indices);
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t offset = 0;
  for (size_t d = 0; d < starts.size(); ++d) offset += starts[d] * strides[d];
  StridedCopy(target.mutable_bytes().data(), offset, strides, update.bytes().data(), 0,
              RowMajorStrides(window), window, ElementSize(target.shape()));
}

Literal EvaluateGather(const Instruction& inst, Operands operands);  // evaluator_gather.cc

Literal EvaluateDataMovement(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kIota: return Iota(inst);
    case Opcode::kBitcast: return Bitcast(inst, ArrayOperand(inst, operands, 0));
    case Opcode::kBroadcast: return Broadcast(inst, ArrayOperand(inst, operands, 0));
    case Opcode::kConcatenate: return Concatenate(inst, operands);
    case Opcode::kDynamicSlice: return DynamicSlice(inst, operands);
    case Opcode::kDynamicUpdateSlice: {
      Literal result = ArrayOperand(inst, operands, 0);
      CheckSameType(inst, result);
      DynamicUpdateSliceInPlace(result, ArrayOperand(inst, operands, 1), operands.subspan(2));
      return result;
    }
    case Opcode::kGather: return EvaluateGather(inst, operands);
    case Opcode::kPad:
      return Pad(inst, ArrayOperand(inst, operands, 0), ArrayOperand(inst, operands, 1));
    case Opcode::kReshape:
    case Opcode::kCopy: {
      const Literal& operand = ArrayOperand(inst, operands, 0);
      CheckSameType(inst, operand);
      Literal result = MakeResult(inst);
      if (result.bytes().size() != operand.bytes().size()) Fail(inst, "changes the element count");
      if (!result.bytes().empty()) std::memcpy(result.mutable_bytes().data(), operand.bytes().data(), result.bytes().size());
      return result;
    }
    case Opcode::kReverse: return Reverse(inst, ArrayOperand(inst, operands, 0));
    case Opcode::kSlice: return Slice(inst, ArrayOperand(inst, operands, 0));
    case Opcode::kTranspose: return Transpose(inst, ArrayOperand(inst, operands, 0));
    case Opcode::kTuple: {
      std::vector<Literal> elements;
      for (const Literal* operand : operands) elements.push_back(*operand);
      return Literal::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement: {
      const int64_t index = inst.attr<TupleIndexAttrs>().index;
      if (operands.empty() || !operands[0]->IsTuple() || index < 0 ||
          index >= static_cast<int64_t>(operands[0]->elements().size())) {
        Fail(inst, "tuple index out of range");
      }
      return operands[0]->elements()[index];
    }
    case Opcode::kOptimizationBarrier: return *operands[0];
    default: Fail(inst, "is not a data-movement op");
  }
}

}  // namespace hlo::eval

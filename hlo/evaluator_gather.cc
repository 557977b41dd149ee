// gather with XLA's full semantics, including operand_batching_dims.
//
// For every batch position G of start_indices (all its dimensions except index_vector_dim):
//   start[start_index_map[k]] = start_indices[G, k]     (index_vector_dim == rank: one index)
//   start[operand_batching_dims[i]] = G at start_indices_batching_dims[i]
//   start[d] is clamped to [0, operand_dim[d] - slice_sizes[d]]         (ir.h)
// and the window (operand dims that are neither collapsed nor batching, in order) is copied to
// the output dims offset_dims, at the output batch position G (output dims not in
// offset_dims, in order). Each window is one StridedCopy. Attributes are validated against the
// shapes first, so malformed modules are hlo::Errors.
#include <algorithm>
#include <string>
#include <vector>

#include "hlo/evaluator_family.h"

namespace hlo::eval {
namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

[[noreturn]] void Fail(const std::string& message) { throw Error("gather: " + message); }

}  // namespace

Literal EvaluateGather(const Instruction& inst, Operands operands) {
  if (operands.size() != 2 || !operands[0]->shape().IsArray() || !operands[1]->shape().IsArray()) {
    Fail("needs an operand array and a start_indices array");
  }
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const GatherAttrs& attrs = inst.attr<GatherAttrs>();
  const GatherDimensionNumbers& dn = attrs.dnums;
  const Shape& out_shape = inst.shape();
  const auto& operand_dims = operand.shape().dims;
  const auto& index_dims = indices.shape().dims;
  const int64_t rank = static_cast<int64_t>(operand_dims.size());
  const int64_t index_rank = static_cast<int64_t>(index_dims.size());
  if (!IsInteger(indices.shape().type)) Fail("start_indices must have an integer type");
  if (out_shape.type != operand.shape().type) Fail("result type differs from the operand's");
  if (static_cast<int64_t>(attrs.slice_sizes.size()) != rank) Fail("slice_sizes must have one entry per operand dimension");
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > index_rank) Fail("index_vector_dim out of range");
  const int64_t index_vector_size =
      dn.index_vector_dim == index_rank ? 1 : index_dims[dn.index_vector_dim];
  if (static_cast<int64_t>(dn.start_index_map.size()) != index_vector_size) {
    Fail("start_index_map must have one entry per index vector element");
  }
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    Fail("operand_batching_dims and start_indices_batching_dims differ in length");
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (attrs.slice_sizes[d] < 0 || attrs.slice_sizes[d] > operand_dims[d]) {
      Fail("slice size " + std::to_string(attrs.slice_sizes[d]) + " exceeds operand dimension " + std::to_string(d));
    }
  }
  auto check_dim = [&](int64_t d, int64_t bound, const char* what) {
    if (d < 0 || d >= bound) Fail(std::string(what) + " entry " + std::to_string(d) + " out of range");
  };
  for (int64_t d : dn.start_index_map) check_dim(d, rank, "start_index_map");
  for (int64_t d : dn.operand_batching_dims) check_dim(d, rank, "operand_batching_dims");
  for (int64_t d : dn.start_indices_batching_dims) check_dim(d, index_rank, "start_indices_batching_dims");
  for (int64_t d : dn.offset_dims) check_dim(d, out_shape.rank(), "offset_dims");

  // Index batch dims (all but index_vector_dim) pair with output dims not in offset_dims.
  std::vector<int64_t> index_batch_dims, output_batch_dims, window_dims;
  for (int64_t d = 0; d < index_rank; ++d) {
    if (d != dn.index_vector_dim) index_batch_dims.push_back(d);
  }
  for (int64_t d = 0; d < out_shape.rank(); ++d) {
    if (!Contains(dn.offset_dims, d)) output_batch_dims.push_back(d);
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d)) {
      window_dims.push_back(d);
    }
  }
  if (index_batch_dims.size() != output_batch_dims.size() ||
      window_dims.size() != dn.offset_dims.size()) {
    Fail("result rank does not match the dimension numbers");
  }
  std::vector<int64_t> batch_sizes;
  for (size_t j = 0; j < index_batch_dims.size(); ++j) {
    batch_sizes.push_back(index_dims[index_batch_dims[j]]);
    if (out_shape.dims[output_batch_dims[j]] != index_dims[index_batch_dims[j]]) {
      Fail("result batch dimension " + std::to_string(output_batch_dims[j]) + " has the wrong size");
    }
  }
  std::vector<int64_t> window_sizes;
  for (size_t k = 0; k < window_dims.size(); ++k) {
    window_sizes.push_back(attrs.slice_sizes[window_dims[k]]);
    if (out_shape.dims[dn.offset_dims[k]] != window_sizes.back()) {
      Fail("result offset dimension " + std::to_string(dn.offset_dims[k]) + " has the wrong size");
    }
  }
  // Position of each start_indices_batching_dim among the index batch dims.
  std::vector<size_t> batching_position;
  for (int64_t d : dn.start_indices_batching_dims) {
    auto it = std::find(index_batch_dims.begin(), index_batch_dims.end(), d);
    if (it == index_batch_dims.end()) Fail("start_indices_batching_dims contains index_vector_dim");
    batching_position.push_back(static_cast<size_t>(it - index_batch_dims.begin()));
  }

  Literal result = MakeResult(inst);
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand_dims);
  const std::vector<int64_t> out_strides = RowMajorStrides(out_shape.dims);
  const std::vector<int64_t> index_strides = RowMajorStrides(index_dims);
  std::vector<int64_t> src_window_strides, dst_window_strides;
  for (size_t k = 0; k < window_dims.size(); ++k) {
    src_window_strides.push_back(operand_strides[window_dims[k]]);
    dst_window_strides.push_back(out_strides[dn.offset_dims[k]]);
  }
  const int64_t element_size = ByteSize(out_shape.type);
  const int64_t index_vector_stride =
      dn.index_vector_dim == index_rank ? 0 : index_strides[dn.index_vector_dim];
  std::vector<int64_t> start(rank);
  ForEachIndex(batch_sizes, [&](std::span<const int64_t> batch) {
    int64_t index_offset = 0, dst_offset = 0;
    for (size_t j = 0; j < batch.size(); ++j) {
      index_offset += batch[j] * index_strides[index_batch_dims[j]];
      dst_offset += batch[j] * out_strides[output_batch_dims[j]];
    }
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
      start[dn.start_index_map[k]] =
          IndexAsInt64(indices, index_offset + static_cast<int64_t>(k) * index_vector_stride);
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
      start[dn.operand_batching_dims[i]] = batch[batching_position[i]];
    }
    int64_t src_offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      start[d] = std::clamp<int64_t>(start[d], 0, operand_dims[d] - attrs.slice_sizes[d]);
      src_offset += start[d] * operand_strides[d];
    }
    StridedCopy(result.mutable_bytes().data(), dst_offset, dst_window_strides,
                operand.bytes().data(), src_offset, src_window_strides, window_sizes,
                element_size);
  });
  return result;
}

}  // namespace hlo::eval

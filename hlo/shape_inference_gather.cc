// Shape inference for gather and (variadic) scatter, following the dimension-number rules of
// XLA's operation semantics:
//
//   gather:  output rank = |offset_dims| + (index rank - 1); offset_dims positions hold the slice
//            sizes of the operand dimensions that are neither collapsed nor batching (in order),
//            the other positions hold the index dimensions except index_vector_dim (in order).
//   scatter: N operands, indices, N updates; updates = scatter dims (the index dims except
//            index_vector_dim, in order) interleaved with update_window_dims; result = operands.
//
// index_vector_dim == index rank means an implicit trailing index-vector dimension of size 1.
#include <algorithm>
#include <string>

#include "hlo/shape_inference_internal.h"

namespace hlo::shape_inference {
namespace {

void ExpectSortedDistinct(const Instruction& inst, std::span<const int64_t> dims, int64_t rank,
                          std::string_view what) {
  ExpectDistinctDimensions(inst, dims, rank, what);
  if (!std::is_sorted(dims.begin(), dims.end())) {
    Fail(inst, std::string(what) + " " + DimsToString(dims) + " must be sorted");
  }
}

bool Contains(std::span<const int64_t> dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

// The index dims with an explicit index-vector dimension (appended when implicit).
std::vector<int64_t> ExpandedIndexDims(const Instruction& inst, const Shape& indices,
                                       int64_t index_vector_dim) {
  if (!IsInteger(indices.type)) {
    Fail(inst, "start indices " + indices.ToString(false) + " must have an integer type");
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    Fail(inst, "index_vector_dim " + std::to_string(index_vector_dim) +
                   " is out of range for indices of rank " + std::to_string(indices.rank()));
  }
  std::vector<int64_t> dims = indices.dims;
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

// The batch (scatter) dimension sizes: the expanded index dims except index_vector_dim.
std::vector<int64_t> IndexBatchDims(const std::vector<int64_t>& expanded, int64_t ivd) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < expanded.size(); ++i) {
    if (static_cast<int64_t>(i) != ivd) dims.push_back(expanded[i]);
  }
  return dims;
}

void CheckBatchingDims(const Instruction& inst, std::span<const int64_t> operand_batching,
                       std::span<const int64_t> index_batching, std::span<const int64_t> excluded,
                       int64_t operand_rank, int64_t index_rank, int64_t ivd) {
  ExpectSortedDistinct(inst, operand_batching, operand_rank, "operand batching dims");
  ExpectDistinctDimensions(inst, index_batching, index_rank, "index batching dims");
  if (operand_batching.size() != index_batching.size()) {
    Fail(inst, "operand and index batching dims differ in count");
  }
  for (int64_t d : operand_batching) {
    if (Contains(excluded, d)) {
      Fail(inst, "dimension " + std::to_string(d) + " is both collapsed/inserted and batching");
    }
  }
  if (Contains(index_batching, ivd)) Fail(inst, "index_vector_dim cannot be a batching dim");
}

}  // namespace

Shape InferGatherShape(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& indices = ExpectArrayOperand(inst, 1);
  const auto& attrs = AttrsOf<GatherAttrs>(inst, "gather");
  const GatherDimensionNumbers& dn = attrs.dnums;
  const int64_t ivd = dn.index_vector_dim;
  const std::vector<int64_t> expanded = ExpandedIndexDims(inst, indices, ivd);
  const int64_t rank = operand.rank();

  if (static_cast<int64_t>(attrs.slice_sizes.size()) != rank) {
    Fail(inst, "slice_sizes " + DimsToString(attrs.slice_sizes) + " does not match rank " +
                   std::to_string(rank));
  }
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = attrs.slice_sizes[static_cast<size_t>(d)];
    if (size < 0 || size > operand.dims[static_cast<size_t>(d)]) {
      Fail(inst, "slice size " + std::to_string(size) + " is out of range for dimension " +
                     std::to_string(d) + " of size " +
                     std::to_string(operand.dims[static_cast<size_t>(d)]));
    }
  }
  if (static_cast<int64_t>(dn.start_index_map.size()) != expanded[static_cast<size_t>(ivd)]) {
    Fail(inst, "start_index_map has " + std::to_string(dn.start_index_map.size()) +
                   " entries but the index vector has " +
                   std::to_string(expanded[static_cast<size_t>(ivd)]));
  }
  ExpectDistinctDimensions(inst, dn.start_index_map, rank, "start_index_map");
  ExpectSortedDistinct(inst, dn.collapsed_slice_dims, rank, "collapsed_slice_dims");
  CheckBatchingDims(inst, dn.operand_batching_dims, dn.start_indices_batching_dims,
                    dn.collapsed_slice_dims, rank, static_cast<int64_t>(expanded.size()), ivd);
  for (const auto* list : {&dn.collapsed_slice_dims, &dn.operand_batching_dims}) {
    for (int64_t d : *list) {
      if (attrs.slice_sizes[static_cast<size_t>(d)] > 1) {
        Fail(inst, "collapsed or batching dimension " + std::to_string(d) +
                       " must have slice size <= 1");
      }
    }
  }
  const std::vector<int64_t> batch = IndexBatchDims(expanded, ivd);
  const int64_t offset_count =
      rank - static_cast<int64_t>(dn.collapsed_slice_dims.size() + dn.operand_batching_dims.size());
  if (static_cast<int64_t>(dn.offset_dims.size()) != offset_count) {
    Fail(inst, "offset_dims " + DimsToString(dn.offset_dims) + " must have " +
                   std::to_string(offset_count) + " entries");
  }
  const int64_t output_rank = offset_count + static_cast<int64_t>(batch.size());
  ExpectSortedDistinct(inst, dn.offset_dims, output_rank, "offset_dims");

  std::vector<int64_t> offset_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d)) {
      offset_sizes.push_back(attrs.slice_sizes[static_cast<size_t>(d)]);
    }
  }
  std::vector<int64_t> dims;
  dims.reserve(static_cast<size_t>(output_rank));
  size_t next_offset = 0, next_batch = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    dims.push_back(Contains(dn.offset_dims, i) ? offset_sizes[next_offset++]
                                               : batch[next_batch++]);
  }
  return Shape::Array(operand.type, std::move(dims));
}

Shape InferScatterShape(const Instruction& inst) {
  if (inst.operand_count() < 3 || inst.operand_count() % 2 == 0) {
    Fail(inst, "expects N operands, indices and N updates (an odd count >= 3), got " +
                   std::to_string(inst.operand_count()));
  }
  const int64_t n = (inst.operand_count() - 1) / 2;
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const Shape& indices = ExpectArrayOperand(inst, n);
  const ScatterDimensionNumbers& dn = AttrsOf<ScatterAttrs>(inst, "scatter").dnums;
  const int64_t ivd = dn.index_vector_dim;
  const std::vector<int64_t> expanded = ExpandedIndexDims(inst, indices, ivd);
  const int64_t rank = operand.rank();
  const Shape& update = ExpectArrayOperand(inst, n + 1);
  const int64_t update_rank = update.rank();

  ExpectSortedDistinct(inst, dn.update_window_dims, update_rank, "update_window_dims");
  ExpectSortedDistinct(inst, dn.inserted_window_dims, rank, "inserted_window_dims");
  CheckBatchingDims(inst, dn.input_batching_dims, dn.scatter_indices_batching_dims,
                    dn.inserted_window_dims, rank, static_cast<int64_t>(expanded.size()), ivd);
  const size_t window_rank = dn.update_window_dims.size() + dn.inserted_window_dims.size() +
                             dn.input_batching_dims.size();
  if (static_cast<int64_t>(window_rank) != rank) {
    Fail(inst, "update_window_dims, inserted_window_dims and input_batching_dims cover " +
                   std::to_string(window_rank) + " dimensions but the operand has rank " +
                   std::to_string(rank));
  }
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) !=
      expanded[static_cast<size_t>(ivd)]) {
    Fail(inst, "scatter_dims_to_operand_dims has " +
                   std::to_string(dn.scatter_dims_to_operand_dims.size()) +
                   " entries but the index vector has " +
                   std::to_string(expanded[static_cast<size_t>(ivd)]));
  }
  ExpectDistinctDimensions(inst, dn.scatter_dims_to_operand_dims, rank,
                           "scatter_dims_to_operand_dims");

  // The update shape every `updates` operand must have (its dims are checked piecewise).
  const std::vector<int64_t> batch = IndexBatchDims(expanded, ivd);
  if (update_rank != static_cast<int64_t>(dn.update_window_dims.size() + batch.size())) {
    Fail(inst, "updates have rank " + std::to_string(update_rank) + " but " +
                   std::to_string(dn.update_window_dims.size() + batch.size()) +
                   " was expected");
  }
  std::vector<int64_t> window_bounds;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d)) {
      window_bounds.push_back(operand.dims[static_cast<size_t>(d)]);
    }
  }
  size_t next_window = 0, next_batch = 0;
  for (int64_t i = 0; i < update_rank; ++i) {
    const int64_t size = update.dims[static_cast<size_t>(i)];
    if (Contains(dn.update_window_dims, i)) {
      const int64_t bound = window_bounds[next_window++];
      if (size > bound) {
        Fail(inst, "update window dimension " + std::to_string(i) + " has size " +
                       std::to_string(size) + " but the operand allows at most " +
                       std::to_string(bound));
      }
    } else if (size != batch[next_batch++]) {
      Fail(inst, "update scatter dimension " + std::to_string(i) + " has size " +
                     std::to_string(size) + " but the indices give " +
                     std::to_string(batch[next_batch - 1]));
    }
  }

  std::vector<Shape> results, reducer_params, reducer_results;
  for (int64_t k = 0; k < n; ++k) {
    const Shape& input = ExpectArrayOperand(inst, k);
    const Shape& updates = ExpectArrayOperand(inst, n + 1 + k);
    if (input.dims != operand.dims) {
      Fail(inst, "operand " + std::to_string(k) + " has shape " + input.ToString(false) +
                     " but the dimensions of " + operand.ToString(false) + " were expected");
    }
    if (updates.dims != update.dims || updates.type != input.type) {
      Fail(inst, "operand " + std::to_string(n + 1 + k) + " has shape " +
                     updates.ToString(false) + " but " +
                     Shape::Array(input.type, update.dims).ToString(false) + " was expected");
    }
    results.push_back(Shape::Array(input.type, input.dims));
    reducer_results.push_back(Shape::Scalar(input.type));
  }
  reducer_params = reducer_results;
  reducer_params.insert(reducer_params.end(), reducer_results.begin(), reducer_results.end());
  ExpectSignature(inst, Callee(inst, 0, "to_apply", 1), "to_apply", reducer_params,
                  TupleOrSingle(reducer_results));
  return TupleOrSingle(std::move(results));
}

}  // namespace hlo::shape_inference

// PlanRowGather (gather_plan.h).
#include "targets/systolic/lowering/gather_plan.h"

#include <algorithm>

#include "targets/systolic/lowering/native_ops.h"

namespace systolic::lowering {

std::optional<RowGatherPlan> PlanRowGather(const hlo::Instruction& gather, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<RowGatherPlan> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const hlo::Shape& operand = gather.operand(0)->shape();
  const hlo::Shape& indices = gather.operand(1)->shape();
  const hlo::Shape& result = gather.shape();
  if (!operand.IsArray() || !indices.IsArray() || !result.IsArray() ||
      !operand.HasDefaultLayout() || !indices.HasDefaultLayout() || !result.HasDefaultLayout()) {
    return fail("a gather with a non-default layout");
  }
  if (std::optional<std::string> reason = DmaElementTypeReason(result.type)) return fail(*reason);
  const int64_t b = hlo::ByteSize(result.type);
  if (indices.type != hlo::PrimitiveType::kS32) {
    return fail("gather indices of type " + std::string(hlo::PrimitiveTypeName(indices.type)) +
                " (the index program computes in s32)");
  }
  const auto& attrs = gather.attr<hlo::GatherAttrs>();
  const hlo::GatherDimensionNumbers& dn = attrs.dnums;
  if (!dn.operand_batching_dims.empty() || !dn.start_indices_batching_dims.empty()) {
    return fail("a gather with batching dimensions");
  }
  const auto index_rank = static_cast<int64_t>(indices.dims.size());
  if (dn.index_vector_dim != index_rank && dn.index_vector_dim != index_rank - 1) {
    return fail("a gather whose index vectors are not in the last dimension");
  }
  const int64_t k = static_cast<int64_t>(dn.start_index_map.size());
  const bool explicit_vector = dn.index_vector_dim < index_rank;
  if (k == 0 || (explicit_vector ? indices.dims.back() != k : k != 1)) {
    return fail("a gather without one index per addressed dimension");
  }
  std::vector<int64_t> sorted = dn.start_index_map;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d = 0; d < k; ++d) {
    if (sorted[static_cast<size_t>(d)] != d) {
      return fail("a gather that addresses other than the operand's leading dimensions");
    }
  }
  const auto rank = static_cast<int64_t>(operand.dims.size());
  if (static_cast<int64_t>(attrs.slice_sizes.size()) != rank) return fail("malformed slice sizes");
  int64_t row_elements = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = attrs.slice_sizes[static_cast<size_t>(d)];
    if (d < k ? size != 1 : size != operand.dims[static_cast<size_t>(d)]) {
      return fail("a gather of other than whole rows");
    }
    if (d >= k) row_elements *= size;
  }
  for (int64_t d : dn.collapsed_slice_dims) {
    if (d >= k) return fail("a gather collapsing a dimension it does not address");
  }
  const int64_t batch_rank = index_rank - (explicit_vector ? 1 : 0);
  const auto result_rank = static_cast<int64_t>(result.dims.size());
  if (static_cast<int64_t>(dn.offset_dims.size()) != result_rank - batch_rank) {
    return fail("malformed offset dimensions");
  }
  for (size_t i = 0; i < dn.offset_dims.size(); ++i) {
    if (dn.offset_dims[i] != batch_rank + static_cast<int64_t>(i)) {
      return fail("a gather whose slice dimensions are not the result's last");
    }
  }
  RowGatherPlan plan;
  plan.element_bytes = b;
  plan.row_bytes = row_elements * b;
  plan.index_vectors = 1;
  for (int64_t d = 0; d < batch_rank; ++d) plan.index_vectors *= indices.dims[static_cast<size_t>(d)];
  plan.table_rows = 1;
  for (int64_t d = 0; d < k; ++d) plan.table_rows *= operand.dims[static_cast<size_t>(d)];
  if (plan.table_rows >= (int64_t{1} << 31) || plan.index_vectors == 0 || row_elements == 0) {
    return fail("an empty gather or one of more than 2^31 rows");
  }
  for (int64_t dim : dn.start_index_map) {
    int64_t scale = 1;
    for (int64_t d = dim + 1; d < k; ++d) scale *= operand.dims[static_cast<size_t>(d)];
    plan.components.push_back({operand.dims[static_cast<size_t>(dim)] - 1, scale});
  }
  return plan;
}

}  // namespace systolic::lowering

// PlanRowScatter (scatter_plan.h).
#include "targets/systolic/lowering/scatter_plan.h"

#include "targets/systolic/lowering/native_ops.h"

namespace systolic::lowering {

using hlo::Opcode;
using hlo::PrimitiveType;

bool IsParameter(const hlo::Instruction* inst, int64_t number) {
  return inst->opcode() == Opcode::kParameter &&
         inst->attr<hlo::ParameterAttrs>().number == number;
}

std::optional<RowScatterPlan> PlanRowScatter(const hlo::Instruction& scatter, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<RowScatterPlan> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (scatter.operand_count() != 3) return fail("a scatter of several operands");
  const hlo::Shape& operand = scatter.operand(0)->shape();
  const hlo::Shape& indices = scatter.operand(1)->shape();
  const hlo::Shape& updates = scatter.operand(2)->shape();
  if (!operand.IsArray() || !indices.IsArray() || !updates.IsArray() ||
      !operand.HasDefaultLayout() || !indices.HasDefaultLayout() || !updates.HasDefaultLayout() ||
      !scatter.shape().IsArray() || !scatter.shape().HasDefaultLayout()) {
    return fail("a scatter with a non-default layout");
  }
  const PrimitiveType type = operand.type;
  if (std::optional<std::string> reason = DmaElementTypeReason(type)) return fail(*reason);
  const int64_t b = hlo::ByteSize(type);
  if (indices.type != PrimitiveType::kS32) {
    return fail("scatter indices of type " + std::string(hlo::PrimitiveTypeName(indices.type)));
  }
  const hlo::ScatterDimensionNumbers& dn = scatter.attr<hlo::ScatterAttrs>().dnums;
  if (!dn.input_batching_dims.empty() || !dn.scatter_indices_batching_dims.empty()) {
    return fail("a scatter with batching dimensions");
  }
  const auto index_rank = static_cast<int64_t>(indices.dims.size());
  const bool explicit_vector = dn.index_vector_dim < index_rank;
  if (dn.index_vector_dim != index_rank && dn.index_vector_dim != index_rank - 1) {
    return fail("a scatter whose index vectors are not in the last dimension");
  }
  if (dn.scatter_dims_to_operand_dims != std::vector<int64_t>{0} ||
      (explicit_vector && indices.dims.back() != 1)) {
    return fail("a scatter that addresses other than the operand's leading dimension");
  }
  const bool inserted = dn.inserted_window_dims == std::vector<int64_t>{0};
  if (!inserted && !dn.inserted_window_dims.empty()) {
    return fail("a scatter inserting other than the leading dimension");
  }
  // The window: operand dimensions 1.. in full (and dimension 0 of size 1 unless inserted),
  // in the updates' trailing dimensions.
  const auto rank = static_cast<int64_t>(operand.dims.size());
  const int64_t window_rank = rank - (inserted ? 1 : 0);
  const auto update_rank = static_cast<int64_t>(updates.dims.size());
  if (static_cast<int64_t>(dn.update_window_dims.size()) != window_rank) {
    return fail("malformed update window dimensions");
  }
  const int64_t batch_rank = update_rank - window_rank;
  int64_t row_elements = 1;
  for (int64_t w = 0; w < window_rank; ++w) {
    if (dn.update_window_dims[static_cast<size_t>(w)] != batch_rank + w) {
      return fail("a scatter whose window dimensions are not the updates' last");
    }
    const int64_t d = w + (inserted ? 1 : 0);
    const int64_t size = updates.dims[static_cast<size_t>(batch_rank + w)];
    if (d == 0 ? size != 1 : size != operand.dims[static_cast<size_t>(d)]) {
      return fail("a scatter of other than whole rows");
    }
    if (d > 0) row_elements *= size;
  }
  RowScatterPlan plan;
  plan.type = type;
  plan.element_bytes = b;
  plan.row_bytes = row_elements * b;
  plan.table_rows = rank == 0 ? 1 : operand.dims[0];
  plan.updates = 1;
  for (int64_t d = 0; d < batch_rank; ++d) plan.updates *= updates.dims[static_cast<size_t>(d)];
  if (rank == 0 || plan.row_bytes == 0 || plan.updates == 0 ||
      plan.table_rows >= (int64_t{1} << 31)) {
    return fail("an empty scatter or one into more than 2^31 rows");
  }
  const hlo::Instruction* root = scatter.called_computations().at(0)->root();
  if (IsParameter(root, 1)) return plan;
  const bool adds = root->opcode() == Opcode::kAdd &&
                    ((IsParameter(root->operand(0), 0) && IsParameter(root->operand(1), 1)) ||
                     (IsParameter(root->operand(0), 1) && IsParameter(root->operand(1), 0)));
  if (!adds) return fail("a scatter whose combiner neither replaces nor adds");
  if (type != PrimitiveType::kS8 && type != PrimitiveType::kU8 && type != PrimitiveType::kS32 &&
      type != PrimitiveType::kBF16 && type != PrimitiveType::kF16 && type != PrimitiveType::kF32) {
    return fail("a scatter-add of " + std::string(hlo::PrimitiveTypeName(type)));
  }
  plan.add = true;
  return plan;
}

}  // namespace systolic::lowering

// gather as an element generator (see gather_emitter.h).
#include "targets/cpu/gather_emitter.h"

#include <algorithm>

#include "targets/llvm/elemental_util.h"

namespace cpu {

using llvm_codegen::ElementGenerator;
using llvm_codegen::IrIndex;

namespace {
bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}
}  // namespace

bool CanGenerateGather(const hlo::Instruction& gather) {
  if (gather.opcode() != hlo::Opcode::kGather || gather.operand_count() != 2) return false;
  if (!gather.shape().IsArray() || !hlo::IsInteger(gather.operand(1)->shape().type)) return false;
  const auto& attrs = gather.attr<hlo::GatherAttrs>();
  const auto& d = attrs.dnums;
  if (!d.operand_batching_dims.empty() || !d.start_indices_batching_dims.empty()) return false;
  const int64_t operand_rank = gather.operand(0)->shape().rank();
  if (static_cast<int64_t>(attrs.slice_sizes.size()) != operand_rank) return false;
  return static_cast<int64_t>(d.offset_dims.size() + d.collapsed_slice_dims.size()) ==
         operand_rank;
}

ElementGenerator MakeGatherGenerator(llvm_codegen::ElementalEmitter& emitter,
                                     const hlo::Instruction& gather, ElementGenerator operand,
                                     ElementGenerator indices) {
  return [&emitter, &gather, operand, indices](const IrIndex& out) -> llvm::Value* {
    llvm::IRBuilder<>& b = emitter.builder();
    const auto& attrs = gather.attr<hlo::GatherAttrs>();
    const auto& d = attrs.dnums;
    const hlo::Shape& operand_shape = gather.operand(0)->shape();
    const hlo::Shape& indices_shape = gather.operand(1)->shape();
    const int64_t out_rank = gather.shape().rank();

    // The batch part of the output index addresses start_indices around index_vector_dim.
    std::vector<llvm::Value*> batch;
    for (int64_t i = 0; i < out_rank; ++i)
      if (!Contains(d.offset_dims, i)) batch.push_back(out[static_cast<size_t>(i)]);
    IrIndex start(static_cast<size_t>(operand_shape.rank()), b.getInt64(0));
    for (size_t k = 0; k < d.start_index_map.size(); ++k) {
      IrIndex where;
      size_t next_batch = 0;
      for (int64_t dim = 0; dim < indices_shape.rank(); ++dim) {
        if (dim == d.index_vector_dim) {
          where.push_back(b.getInt64(static_cast<int64_t>(k)));
        } else {
          where.push_back(batch.at(next_batch++));
        }
      }
      llvm::Value* raw = indices(where);
      const auto dim = static_cast<size_t>(d.start_index_map[k]);
      start[dim] = llvm_codegen::detail::ClampStartIndex(
          b, raw, indices_shape.type, operand_shape.dims[dim] - attrs.slice_sizes[dim]);
    }
    IrIndex source = start;
    size_t next_offset = 0;
    for (int64_t dim = 0; dim < operand_shape.rank(); ++dim) {
      if (Contains(d.collapsed_slice_dims, dim)) continue;
      llvm::Value* offset = out[static_cast<size_t>(d.offset_dims.at(next_offset++))];
      source[static_cast<size_t>(dim)] = b.CreateAdd(start[static_cast<size_t>(dim)], offset);
    }
    return operand(source);
  };
}

}  // namespace cpu

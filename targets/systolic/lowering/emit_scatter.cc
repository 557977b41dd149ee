// EmitRowScatter (emit_scatter.h).
#include "targets/systolic/lowering/emit_scatter.h"

#include <algorithm>

#include "targets/systolic/lowering/emit_block_copy.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

bool EmitRowScatter(ProgramBuilder& builder, const RowScatterPlan& plan, const ArchConfig& config,
                    uint64_t operand, uint64_t indices, uint64_t updates, uint64_t result,
                    std::string* why) {
  const int64_t half = AlignedHalf(config.ub_bytes);
  int64_t rows = std::min(plan.updates, half / (plan.row_bytes + 4) + 1);
  while (rows > 0 && AlignedLocal(rows * plan.row_bytes) + AlignedLocal(rows * 4) > half) --rows;
  if (rows <= 0) {
    *why = "a scattered row of " + std::to_string(plan.row_bytes) + " bytes exceeds half the UB";
    return false;
  }
  std::optional<Dtype> add_dtype;
  if (plan.add && !(add_dtype = IsaDtype(plan.type))) {
    *why = "a scatter-add the DMA engine cannot add";
    return false;
  }
  // The operand, whole, into the result: one box of the block-copy plan.
  const int64_t elements = plan.table_rows * plan.row_bytes / plan.element_bytes;
  CopyBox whole;
  whole.operand = 0;
  whole.extents = {elements};
  whole.src_strides = whole.dst_strides = {plan.element_bytes};
  if (!EmitBlockCopies(builder, BlockCopyPlan{{whole}, plan.element_bytes, {}}, config, {operand},
                       result, why)) {
    return false;
  }
  const int64_t tiles = (plan.updates + rows - 1) / rows;
  // Each tile waits for the store engine to be done with its half: the copy's stores first.
  for (int64_t t = 0; t < std::min<int64_t>(tiles, 2); ++t) {
    builder.Signal(Unit::kStore, Unit::kLoad);
  }
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t first = t * rows;
    const int64_t count = std::min(rows, plan.updates - first);
    const auto base = static_cast<uint64_t>((t % 2) * half);
    const uint64_t index = base + static_cast<uint64_t>(AlignedLocal(rows * plan.row_bytes));
    builder.Wait(Unit::kStore, Unit::kLoad);
    builder.Load(indices + static_cast<uint64_t>(first * 4), count * 4, index, count * 4,
                 count * 4, 1);
    const int64_t bytes = count * plan.row_bytes;
    builder.Load(updates + static_cast<uint64_t>(first * plan.row_bytes), bytes, base, bytes,
                 bytes, 1);
    builder.Signal(Unit::kLoad, Unit::kStore);
    builder.Wait(Unit::kLoad, Unit::kStore);
    builder.SetRegister(ConfigRegister::kStoreIndexBound, plan.table_rows);
    builder.SetRegister(ConfigRegister::kStoreScatterAdd,
                        add_dtype ? static_cast<int64_t>(*add_dtype) + 1 : 0);
    builder.Scatter(base, plan.row_bytes, result, plan.row_bytes, index, plan.row_bytes, count);
    if (t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kLoad);
  }
  return true;
}

}  // namespace systolic::lowering

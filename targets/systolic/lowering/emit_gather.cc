// EmitRowGather (emit_gather.h).
#include "targets/systolic/lowering/emit_gather.h"

#include <algorithm>
#include <vector>

#include "targets/systolic/lowering/emit_dynamic_index.h"
#include "targets/systolic/lowering/emit_vector.h"

namespace systolic::lowering {
namespace {

// The bytes one tile of `rows` index vectors takes in its half.
int64_t TileBytes(const RowGatherPlan& plan, int64_t rows) {
  return AlignedLocal(rows * plan.row_bytes) + IndexProgramBytes(plan.components.size(), rows);
}

}  // namespace

bool EmitRowGather(ProgramBuilder& builder, const RowGatherPlan& plan, const ArchConfig& config,
                   uint64_t operand, uint64_t indices, uint64_t result, std::string* why) {
  const int64_t half = AlignedHalf(config.ub_bytes);
  const auto k = static_cast<int64_t>(plan.components.size());
  // The largest tile that fits: the footprint grows with the rows, so search downwards from
  // the estimate that ignores the slots' alignment.
  int64_t rows = std::min(plan.index_vectors,
                          half / (plan.row_bytes + 4 * (k + 4)) + 1);
  while (rows > 0 && TileBytes(plan, rows) > half) --rows;
  if (rows <= 0) {
    *why = "a gathered row of " + std::to_string(plan.row_bytes) +
           " bytes and its indices exceed half the UB";
    return false;
  }
  std::vector<IndexTerm> terms;
  for (const RowGatherComponent& c : plan.components) terms.push_back({0, 4 * k, c.max, c.scale});
  if (!IndexTermsFit(terms, 0, why)) return false;
  const int64_t tiles = (plan.index_vectors + rows - 1) / rows;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t first = t * rows;
    const int64_t count = std::min(rows, plan.index_vectors - first);
    const auto base = static_cast<uint64_t>((t % 2) * half);
    if (t >= 2) builder.Wait(Unit::kStore, Unit::kLoad);  // tile t-2 stored its rows
    for (int64_t j = 0; j < k; ++j) {
      terms[static_cast<size_t>(j)].dram = indices + static_cast<uint64_t>((first * k + j) * 4);
    }
    const IndexProgramLayout index = EmitIndexProgram(
        builder, terms, 0, count,
        base + static_cast<uint64_t>(AlignedLocal(rows * plan.row_bytes)));
    builder.Signal(Unit::kVector, Unit::kLoad);
    builder.Wait(Unit::kVector, Unit::kLoad);
    builder.SetRegister(ConfigRegister::kLoadIndexBound, plan.table_rows);
    builder.Gather(operand, plan.row_bytes, base, plan.row_bytes, index.result, plan.row_bytes,
                   count);
    builder.Signal(Unit::kLoad, Unit::kStore);
    builder.Wait(Unit::kLoad, Unit::kStore);
    const int64_t bytes = count * plan.row_bytes;
    builder.Store(base, bytes, result + static_cast<uint64_t>(first * plan.row_bytes), bytes,
                  bytes, 1);
    if (t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kLoad);
  }
  return true;
}

}  // namespace systolic::lowering

// Which gathers the accelerator runs: row gathers, the form of an embedding lookup. Each index
// vector selects whole rows of the operand's leading dimensions — slice size 1 on the first k
// dimensions (those the index vector addresses), the full extent on the others — and the
// result lists the selected rows in index order, so one dma.gather with the clamped row
// numbers moves them (emit_gather.h).
//
// Guarantees: PlanRowGather accepts exactly that form: s32 indices with the index vector in
// the last dimension (or implicit), start_index_map a permutation of 0..k-1, collapsed slice
// dimensions among them, offset_dims the result's trailing dimensions, no batching
// dimensions, default layouts, element types of whole bytes the accelerator holds. Anything
// else is nullopt with the reason, which the ownership report shows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"

namespace systolic::lowering {

struct RowGatherComponent {
  int64_t max = 0;    // the operand dimension's extent - 1 (HLO clamps the start there)
  int64_t scale = 0;  // rows per step of that dimension
};

struct RowGatherPlan {
  std::vector<RowGatherComponent> components;  // in index-vector order
  int64_t index_vectors = 0;  // rows gathered (the product of the batch dimensions)
  int64_t row_bytes = 0;      // bytes of one row of the operand
  int64_t table_rows = 0;     // rows of the operand (the product of the first k dimensions)
  int64_t element_bytes = 0;
};

std::optional<RowGatherPlan> PlanRowGather(const hlo::Instruction& gather, std::string* why);

}  // namespace systolic::lowering

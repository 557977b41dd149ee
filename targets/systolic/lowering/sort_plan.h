// Which sorts the accelerator runs: sorts along the last dimension of one key array (with at
// most one 4-byte payload array moved along) under a less-than or greater-than comparator, and
// top-k, on rows that a bitonic network over the next power of two can hold (emit_sort.h).
//
// Guarantees: PlanSort accepts a sort whose comparator is `compare(p0, p1)` LT (ascending) or
// GT (descending) of the keys, FLOAT or TOTALORDER, keys s8/u8/s32/bf16/f16/f32, a payload of
// s32/u32/f32 or none, the last dimension sorted, default layouts; and a topk of such keys.
// Keys order in their total order (the two agree but for NaNs and signed zeros); equal keys by
// the payload's s32 bits, smaller first (a top-k's payload is the index, so it is stable, as
// XLA's top-k is). Anything else is nullopt with the reason, which the ownership report shows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hlo/ir.h"

namespace systolic::lowering {

struct SortPlan {
  int64_t rows = 0;        // rows sorted (the product of the leading dimensions)
  int64_t length = 0;      // keys per row
  int64_t padded = 0;      // the network's length: the next power of two
  int64_t kept = 0;        // keys per row in the result (top-k: k)
  bool descending = false;
  bool top_k = false;      // results: the keys and their s32 indices
  bool payload = false;    // sort: a second operand moves with the keys
  hlo::PrimitiveType key_type = hlo::PrimitiveType::kF32;
};

std::optional<SortPlan> PlanSort(const hlo::Instruction& inst, std::string* why);

}  // namespace systolic::lowering

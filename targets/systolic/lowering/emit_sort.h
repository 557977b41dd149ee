// A sort or top-k (sort_plan.h) on the vector unit's sorting network: per row, the load engine
// brings the keys (and the payload) into the UB, the vector unit pads them to a power of two
// with a key that sorts last (the total order's far end), gives a top-k its indices (viota),
// runs the bitonic network's n(n+1)/2 vbitonic stages in place, and the store engine writes
// the first `kept` keys (and payload) of the row to the results.
//
// Guarantees: rows alternate between the halves of `config.ub_bytes`, the next row's load
// overlapping this row's network. False (the reason in `why`) when a padded row and its
// payload do not fit half the UB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/sort_plan.h"

namespace systolic::lowering {

// `operands`: the keys' (and the payload's) DRAM address; `results`: the sorted keys' (and the
// payload's, or a top-k's indices) DRAM address.
bool EmitSort(ProgramBuilder& builder, const SortPlan& plan, const ArchConfig& config,
              const std::vector<uint64_t>& operands, const std::vector<uint64_t>& results,
              std::string* why);

}  // namespace systolic::lowering

// A row scatter (scatter_plan.h) on the accelerator: the operand is copied to the result by
// strided DMA (emit_block_copy.h), then per tile of updates the load engine brings the indices
// and the update rows into the UB and one dma.scatter per column chunk of 64 KiB - 1 writes (or
// adds) each row at its index in the result. HLO drops an update whose index lies outside the
// operand; the scatter skips such rows (store.index_bound), so no index program is needed.
//
// Guarantees: the updates apply in their order after the whole copy (one store engine, in
// order); tiles alternate between the halves of `config.ub_bytes`. False (the reason in
// `why`) when one row and its index do not fit half the UB.
#pragma once

#include <cstdint>
#include <string>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/scatter_plan.h"

namespace systolic::lowering {

bool EmitRowScatter(ProgramBuilder& builder, const RowScatterPlan& plan, const ArchConfig& config,
                    uint64_t operand, uint64_t indices, uint64_t updates, uint64_t result,
                    std::string* why);

}  // namespace systolic::lowering

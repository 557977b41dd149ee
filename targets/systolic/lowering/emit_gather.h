// A row gather (gather_plan.h) on the accelerator: per tile of index vectors, the load engine
// brings the index components into the UB, the vector unit clamps them and turns them into
// row numbers (emit_dynamic_index.h), one dma.gather per column chunk of 64 KiB - 1 moves the
// rows into the UB, and the store engine writes them to the result contiguously.
//
// Guarantees: tiles alternate between the halves of `config.ub_bytes`, each half holding a
// tile's rows and its index program, so the next tile's indices load while this tile's rows
// are stored; every index reaching the DMA lies in [0, table_rows) (load.index_bound is set to
// it, so a lowering bug is a simulator error, not a silent wrong row). False (the reason in
// `why`) when one row and its index program do not fit half the UB.
#pragma once

#include <cstdint>
#include <string>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/gather_plan.h"
#include "targets/systolic/lowering/program_builder.h"

namespace systolic::lowering {

bool EmitRowGather(ProgramBuilder& builder, const RowGatherPlan& plan, const ArchConfig& config,
                   uint64_t operand, uint64_t indices, uint64_t result, std::string* why);

}  // namespace systolic::lowering

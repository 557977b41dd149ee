// Which scatters the accelerator runs: row scatters, the form of an embedding's gradient (a
// scatter-add of token rows into the table) and of a cache written at positions. Each update
// window is a whole row of the operand (its leading dimension addressed by a single s32 index,
// the other dimensions full), and the combiner either replaces the row or adds to it, so one
// dma.scatter per tile moves the rows (emit_scatter.h).
//
// Guarantees: PlanRowScatter accepts exactly that form: one operand, s32 indices with one
// component (the index vector dimension last or implicit), scatter_dims_to_operand_dims {0},
// the update window the operand's row (dimension 0 inserted, or of size 1) in the updates'
// trailing dimensions, no batching dimensions, default layouts, element types of whole bytes
// the accelerator holds; a combiner that returns its second parameter, or adds its two
// parameters on a type the DMA engine adds (s8, u8, s32, bf16, f16, f32). Anything else is
// nullopt with the reason, which the ownership report shows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hlo/ir.h"

namespace systolic::lowering {

struct RowScatterPlan {
  int64_t updates = 0;      // rows scattered (index values)
  int64_t row_bytes = 0;    // bytes of one row of the operand
  int64_t table_rows = 0;   // rows of the operand (its leading dimension)
  int64_t element_bytes = 0;
  bool add = false;         // the combiner adds (else it replaces)
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
};

std::optional<RowScatterPlan> PlanRowScatter(const hlo::Instruction& scatter, std::string* why);

// Whether `inst` is parameter `number` of its computation (a combiner's or comparator's
// operand; scatter_plan.h and sort_plan.h read called computations this way).
bool IsParameter(const hlo::Instruction* inst, int64_t number);

}  // namespace systolic::lowering

// gather as an element generator for the CPU backend's kernels (targets/llvm leaves gather to
// backends): embedding lookups become a generated copy loop instead of an evaluator fallback.
//
// Guarantees: XLA's gather semantics without operand batching dimensions. For output index O,
// the batch dimensions of O (those not in offset_dims, in order) select an index vector from
// start_indices (index_vector_dim holds its components; == rank means one implicit component);
// component k starts operand dimension start_index_map[k], clamped to
// [0, operand_dim - slice_size] (hlo/ir.h); the offset dimensions of O map, in order, to the
// operand dimensions not in collapsed_slice_dims. Signed index types are sign-extended, unsigned
// zero-extended, so every load stays inside the operand.
#pragma once

#include "hlo/ir.h"
#include "targets/llvm/elemental_emitter.h"

namespace cpu {

bool CanGenerateGather(const hlo::Instruction& gather);

llvm_codegen::ElementGenerator MakeGatherGenerator(llvm_codegen::ElementalEmitter& emitter,
                                                   const hlo::Instruction& gather,
                                                   llvm_codegen::ElementGenerator operand,
                                                   llvm_codegen::ElementGenerator indices);

}  // namespace cpu

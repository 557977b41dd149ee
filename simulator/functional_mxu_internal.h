// The matrix unit's data effects, one per instruction (functional_mxu.cc), for the dispatch in
// functional.cc. Internal to simulator/.
#pragma once

#include "simulator/functional.h"

namespace simulator::mxu_internal {

void ExecuteLoadWeights(const systolic::Instruction& inst, const systolic::ArchConfig& config,
                        const RegisterFile& registers, WeightBuffers& weights, Memories& memories);
void ExecuteMatmul(const systolic::Instruction& inst, const systolic::ArchConfig& config,
                   const RegisterFile& registers, WeightBuffers& weights, Memories& memories);
void ExecuteConv(const systolic::Instruction& inst, const systolic::ArchConfig& config,
                 const RegisterFile& registers, WeightBuffers& weights, Memories& memories);

}  // namespace simulator::mxu_internal

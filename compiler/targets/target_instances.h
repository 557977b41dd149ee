// Builders of the four TargetDescription instances, one per file in compiler/targets/.
// Internal to compiler/: everything else reaches them through target_description.h
// (InterpTarget(), CpuTarget(), ... which build each once and keep it for the process).
#pragma once

#include "compiler/target_description.h"

namespace compiler::targets_internal {

TargetDescription MakeInterpTarget();    // targets/interp.cc
TargetDescription MakeCpuTarget();       // targets/cpu.cc
TargetDescription MakeGpuTarget();       // targets/gpu.cc
TargetDescription MakeSystolicTarget();  // targets/systolic.cc

}  // namespace compiler::targets_internal

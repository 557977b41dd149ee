// Internal to thunk_builder*.cc: the lowering scope and small helpers shared by the
// instruction dispatcher (thunk_builder.cc) and the kernel / output-fusion emission
// (thunk_builder_kernels.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "targets/cpu/thunk_builder.h"

namespace cpu {

// The values of the computation being lowered, by instruction.
struct ThunkBuilder::Scope {
  ThunkSequence& sequence;
  std::map<const hlo::Instruction*, ValueLayout> values;
  const ValueLayout& operator[](const hlo::Instruction* inst) const { return values.at(inst); }
};

namespace builder_internal {

// "'name' (opcode)", the form every error and fallback reason uses.
inline std::string Describe(const hlo::Instruction& inst) {
  return "'" + inst.name() + "' (" + std::string(hlo::OpcodeName(inst.opcode())) + ")";
}

// Whether array shapes can share one loop nest: same dims and layout.
inline bool SameIteration(const std::vector<hlo::Shape>& shapes) {
  for (const hlo::Shape& s : shapes) {
    if (s.dims != shapes[0].dims ||
        s.EffectiveMinorToMajor() != shapes[0].EffectiveMinorToMajor())
      return false;
  }
  return true;
}

// The array leaves of a (possibly tuple) shape, depth first.
inline std::vector<hlo::Shape> ArrayLeaves(const hlo::Shape& shape) {
  std::vector<const hlo::Shape*> flat;
  hlo::FlattenShape(shape, flat);
  std::vector<hlo::Shape> leaves;
  for (const hlo::Shape* s : flat) leaves.push_back(*s);
  return leaves;
}

// The single dot/convolution of a kOutput fusion's computation, or nullptr.
inline const hlo::Instruction* FindContraction(const hlo::Computation& fused) {
  const hlo::Instruction* found = nullptr;
  for (const auto& inst : fused.instructions()) {
    if (inst->opcode() != hlo::Opcode::kDot && inst->opcode() != hlo::Opcode::kConvolution)
      continue;
    if (found != nullptr) return nullptr;
    found = inst.get();
  }
  return found;
}

}  // namespace builder_internal
}  // namespace cpu

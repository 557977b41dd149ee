// Internal to thunk_builder*.cc: the lowering scope and small helpers shared by the
// instruction dispatcher (thunk_builder.cc) and the kernel / output-fusion emission
// (thunk_builder_kernels.cc).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "targets/cpu/thunk_builder.h"

namespace cpu {

// The values of the computation being lowered, by instruction, and the buffer pool.
struct ThunkBuilder::Scope {
  ThunkSequence& sequence;
  std::map<const hlo::Instruction*, ValueLayout> values;
  const ValueLayout& operator[](const hlo::Instruction* inst) const { return values.at(inst); }
  // The shapes and buffers of `inst`'s operands, appended to `shapes` and `buffers`; false when
  // one is a tuple (no kernel takes those).
  bool AppendArrayOperands(const hlo::Instruction& inst, std::vector<hlo::Shape>& shapes,
                           std::vector<int64_t>& buffers) const {
    for (const hlo::Instruction* operand : inst.operands()) {
      const ValueLayout& value = values.at(operand);
      if (!value.shape.IsArray()) return false;
      shapes.push_back(value.shape);
      buffers.push_back(value.buffer);
    }
    return true;
  }

  // Owned buffers whose values are dead, by size: a later instruction's output or scratch
  // reuses one (thunks run in schedule order, so a buffer is free once its last reader ran).
  std::multimap<int64_t, int64_t> free_buffers;
  std::vector<int64_t> outputs_acquired;  // by the instruction being lowered, for its result
  std::vector<int64_t> scratch_acquired;  // by it, for its own use only

  int64_t Acquire(int64_t bytes, std::vector<int64_t>& record) {
    int64_t id = -1;
    // Best fit, but not a buffer much bigger than needed (it would stay tied up).
    auto it = free_buffers.lower_bound(bytes);
    if (it != free_buffers.end() && it->first <= 2 * bytes + 4096) {
      id = it->second;
      free_buffers.erase(it);
    } else {
      id = sequence.AddOwnedBuffer(bytes);
    }
    record.push_back(id);
    return id;
  }
  void Release(int64_t id) { free_buffers.emplace(sequence.owned_size(id), id); }

  // Buffers whose values die after the instruction being lowered (its operands' buffers when
  // it is their last reader; set by Build).
  std::vector<int64_t>* dying = nullptr;
  // Leaves of a while body's carry whose values die after it (Build's writable_carry): taken
  // over like `dying` buffers, never returned to the pool (they are the loop's state).
  std::vector<int64_t>* carry_dying = nullptr;
  // In-place results: when `operand` dies here, the instruction's output takes it over instead
  // of `acquired` (which goes back to the pool). The caller must read `operand` only as the
  // output's initial contents.
  bool TakeOver(int64_t operand, int64_t acquired) {
    if (dying == nullptr) return false;
    auto it = std::find(dying->begin(), dying->end(), operand);
    if (it != dying->end()) {
      dying->erase(it);
    } else if (carry_dying != nullptr &&
               (it = std::find(carry_dying->begin(), carry_dying->end(), operand)) !=
                   carry_dying->end()) {
      carry_dying->erase(it);
    } else {
      return false;
    }
    std::replace(outputs_acquired.begin(), outputs_acquired.end(), acquired, operand);
    Release(acquired);
    return true;
  }
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

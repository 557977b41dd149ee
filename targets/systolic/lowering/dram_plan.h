// DRAM planning for the entry computation's values: one buffer per array leaf, reused once the
// value is dead, plus one never-written region that reads as zeros (convolution padding).
//
// Guarantees:
//   - Parameters and constants (written before the first step) are allocated first and are all
//     disjoint; any other value's buffer is disjoint from every buffer live at its definition.
//   - A buffer is released after the last instruction (in entry order) that uses the value or
//     any value aliasing it (reshape, bitcast, copy, tuple, get-tuple-element share buffers);
//     the root's buffers are never released. Steps run in entry order, and inside a segment a
//     later op's stores follow its loads, which follow every earlier op's loads (lowering.cc,
//     AppendOp), so a released buffer is rewritten only after its last reader.
//   - The zero region is allocated before anything else and never released or written.
//   - Exceeding dram.bytes is an hlo::Error (scratchpad.h's DramLayout).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/scratchpad.h"

namespace systolic::lowering {

// One array in DRAM, row-major in logical order.
struct DramBuffer {
  uint64_t address = 0;
  hlo::Shape shape;
  int64_t bytes() const;
};

class DramPlan {
 public:
  DramPlan(const hlo::Computation& entry, const ArchConfig& config);

  // A fresh buffer per array leaf of `inst`, live until the last use of `inst`.
  std::vector<DramBuffer> Allocate(const hlo::Instruction& inst);
  // `inst` reads the same bytes as `leaves`: keep them live until its last use as well.
  void Alias(const hlo::Instruction& inst, const std::vector<DramBuffer>& leaves);
  // Releases every buffer whose last use is the instruction at `position` (entry order).
  void Retire(int64_t position);

  int64_t Position(const hlo::Instruction& inst) const { return position_.at(&inst); }
  uint64_t zeros() const { return zeros_; }
  int64_t peak() const { return dram_.used(); }

 private:
  DramLayout dram_;
  std::map<const hlo::Instruction*, int64_t> position_, last_use_;
  std::map<uint64_t, int64_t> live_;  // buffer address -> last use position
  uint64_t zeros_ = 0;
};

}  // namespace systolic::lowering

// Buffer assignment: where every value of the entry computation lives, and the module's peak
// memory.
//
// Model (docs/memory.md has the full page):
//   * Schedule. The entry computation runs in the order of ScheduleComputation (schedule.h);
//     position t is the t-th instruction.
//   * Logical buffers. Every array leaf of an instruction's result is one logical buffer,
//     except for aliasing ops (tuple, get-tuple-element, bitcast, opt-barrier: value_sizes.h),
//     whose results are the operands' buffers.
//   * Liveness. A buffer is live from its definition to its last read (a read is an operand
//     use by a non-aliasing instruction, through any chain of aliases). Buffers of the root's
//     value are live until the end (position n). Parameters are caller-owned and live
//     throughout; each has its own kParameter allocation. Constants are read-only and each
//     has its own kConstant allocation.
//   * In-place reuse. An elementwise op, or dynamic-update-slice for its operand 0, writes
//     into an operand's temporary buffer when that buffer has the same size and its last read
//     is this op; the two then share storage (LogicalBuffer::shares_with).
//   * Packing. Temporary storage is packed into one kTemp allocation by a best-fit heap over
//     live ranges (heap_packing.h), offsets aligned to TargetDescription::alignment_bytes.
//   * Peak. peak_bytes() = parameters + constants + max over positions t of
//     (temp heap top at t + nested(t)), where nested(t) is, for a while / conditional / call /
//     custom-call with called computations at t, the largest peak_bytes-style figure of a
//     callee computed the same way (temps + constants, its parameters are the caller's
//     operands). This is conservative: the call's result and the callee's root are both
//     counted. Fusion and reducer computations (reduce, sort, map, scatter, ...) are kernels
//     whose intermediates never reach memory: they add nothing.
//
// Deterministic; O(n log n) in the number of instructions.
// Does NOT: reuse a while/conditional operand's buffer for its result, share buffers between
// the entry and its callees, or assign offsets inside called computations (only their peaks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler {

enum class AllocationKind : uint8_t { kParameter, kConstant, kTemp };

struct Allocation {
  AllocationKind kind = AllocationKind::kTemp;
  std::string name;   // the parameter/constant instruction (with index), or "temp"
  int64_t size = 0;   // bytes
};

// One array leaf defined by an instruction of the entry computation.
struct LogicalBuffer {
  const hlo::Instruction* instruction = nullptr;
  std::vector<int64_t> index;       // shape index inside a tuple result; {} for an array result
  int64_t size = 0;                 // bytes (before alignment)
  int64_t live_start = 0;           // schedule positions, inclusive; n = "live-out"
  int64_t live_end = 0;
  int64_t allocation = -1;          // index into allocations()
  int64_t offset = 0;               // bytes from the start of the allocation
  int64_t shares_with = -1;         // buffer whose storage it reuses in place, or -1
};

class BufferAssignment {
 public:
  int64_t peak_bytes() const { return peak_bytes_; }
  int64_t parameter_bytes() const { return parameter_bytes_; }
  int64_t constant_bytes() const { return constant_bytes_; }
  int64_t temp_bytes() const { return temp_bytes_; }          // size of the kTemp allocation
  int64_t max_live_temp_bytes() const { return max_live_temp_bytes_; }  // lower bound on it
  int64_t nested_peak_bytes() const { return nested_peak_bytes_; }  // largest callee peak

  const std::vector<const hlo::Instruction*>& schedule() const { return schedule_; }
  const std::vector<LogicalBuffer>& buffers() const { return buffers_; }
  const std::vector<Allocation>& allocations() const { return allocations_; }

  // Allocations, then one line per buffer (name{index}: allocation, offset, size, live range,
  // in-place partner), then the totals.
  std::string ToString() const;

 private:
  friend class BufferAssigner;
  int64_t peak_bytes_ = 0;
  int64_t parameter_bytes_ = 0;
  int64_t constant_bytes_ = 0;
  int64_t temp_bytes_ = 0;
  int64_t max_live_temp_bytes_ = 0;
  int64_t nested_peak_bytes_ = 0;
  std::vector<const hlo::Instruction*> schedule_;
  std::vector<LogicalBuffer> buffers_;
  std::vector<Allocation> allocations_;
};

// Assigns the buffers of the module's entry computation (throws hlo::Error without one).
BufferAssignment AssignBuffers(const hlo::Module& module, const TargetDescription& target);
// The same for any computation as if it were an entry (a loop body or a branch a backend runs
// as a program of its own): its parameters get kParameter allocations the caller may ignore
// and bind to its own buffers instead.
BufferAssignment AssignBuffers(const hlo::Computation& computation,
                               const TargetDescription& target);

}  // namespace compiler

// SegmentBuilder: assembles the ops of one accelerator segment into a single program, placing
// each op in local memory and ordering it against the ops before it without full barriers.
//
// Local memory:
//   UB:           [op half 0][op half 1][resident 0][resident 1]
//   accumulators: [op half 0][op half 1]
// An op is planned on one half (HalfConfig) when its tiles fit there, alternating halves op
// by op, else on both (FullConfig). The two resident regions (ub.bytes / 8 each) hold a dot's
// result for the next dot (PlanLocal), as TPU v1 keeps activations in its unified buffer, or a
// convolution's result for the next convolution, in that one's padded input layout
// (PaddedActivation): before the first such op writes a region's interior, AppendOp zeroes its
// halo by DMA from the DRAM zero region, after every earlier op is done when an earlier op of
// the segment wrote the region (one may still read it); the halo stays zero while the region
// keeps that layout.
//
// Ordering (AppendOp), with op-done tokens (ProgramBuilder::SignalOpDone/WaitOpDone):
//   - the load unit of op k first waits for op k - 2, which used the same half (for op k - 1
//     too when either op is full-size);
//   - it waits for op k - 1 right before its first dma.load of DRAM bytes op k - 1 writes, so
//     the loads before it (the next layer's weights) overlap op k - 1;
//   - a resident result adds one vector -> mxu token: the next op's matrix unit starts after
//     the copy is complete; when that op read it, the producer's DRAM stores of it are removed.
// Everything else is ordered by the units' in-order queues: op k's stores follow its loads,
// which follow every earlier op's loads (so a DRAM buffer freed by an earlier reader is
// rewritten only after that read); its matmuls follow earlier matmuls, its stores earlier ones.
//
// Guarantees: Finish() returns a balanced program (every wait has its signal) ending in halt;
// local addresses of a half-size op are moved to its half, resident addresses never move.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/dram_plan.h"
#include "targets/systolic/lowering/emit_matmul.h"
#include "targets/systolic/lowering/lowering.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

class SegmentBuilder {
 public:
  explicit SegmentBuilder(const ArchConfig& config) : config_(config) {}

  // The share of local memory the next op may plan on: one half, or everything but the
  // resident regions.
  ArchConfig HalfConfig() const;
  ArchConfig FullConfig() const;
  // What AppendOp adds to a half-size next op's UB addresses (to pre-subtract from resident
  // addresses handed to its emitter).
  uint64_t NextHalfUbOffset() const;

  // Which operands of the next op stay on chip: a dot's lhs (a convolution's input) when the
  // previous op left it in a resident region, and a copy of the result when `value` (the op's
  // result, not the module's root) has exactly one user, a dot taking it as lhs (a dot's
  // result), or a convolution taking it as input that ResidentConvInput accepts (a
  // convolution's result with cout <= array.cols). Stash: a dot's result whose users are all
  // elementwise (row) computations is also copied row-major into the resident area
  // (result_rows), and a row computation reads such operands there (operand_rows); their
  // DRAM stores are erased once every user read the copy. While stashed values live, no
  // resident copy is planned, and none is stashed while a resident value lives.
  LocalOperands PlanLocal(const RowProgram& program, const ExternalIndex& external,
                          const std::vector<const hlo::Instruction*>& operands,
                          const hlo::Instruction& value, bool is_root) const;

  // Appends an emitted op (`half`: planned on HalfConfig). `writes` are its DRAM results;
  // `contractions` its dots or convolutions, if any (their useful MACs are counted).
  void AppendOp(const ProgramBuilder& op, const std::string& name, bool half,
                const std::vector<DramBuffer>& writes,
                const std::vector<const hlo::Instruction*>& contractions,
                const LocalOperands& local, const hlo::Instruction& value);

  // The DRAM region that reads as zeros (dram_plan.h), for the halos of padded layouts.
  void set_zero_region(uint64_t zeros) { zeros_ = zeros; }

  bool empty() const { return ops_.empty(); }
  bool IsStashed(const hlo::Instruction* value) const { return stash_.count(value) > 0; }
  // The segment as a step; the builder is left empty for the next segment.
  AcceleratorStep Finish();

 private:
  int64_t ResidentBytes() const;
  int64_t UsableUb() const;
  int64_t HalfUb() const;
  int64_t HalfAcc() const;
  void WaitOpsUpTo(int64_t op);
  void ReplayInto(const ProgramBuilder& op, uint64_t ub_offset, uint64_t acc_offset,
                  const std::function<void(uint64_t, uint64_t)>& before_load);

  struct Resident {  // the previous op's result, copied on chip
    const hlo::Instruction* value;
    uint64_t local;
    size_t begin, end;  // the producer's instructions in the segment
    DramBuffer dram;
    std::optional<PaddedActivation> padded;  // a convolution's input layout, else column blocks
  };
  void ZeroHalo(const PaddedActivation& layout, uint64_t region);

  const ArchConfig& config_;
  ProgramBuilder builder_;
  std::vector<std::string> ops_;
  int64_t useful_macs_ = 0;
  int64_t ops_done_waited_ = 0;
  bool previous_half_ = false;
  std::vector<DramBuffer> previous_writes_;
  std::optional<Resident> resident_;
  uint64_t zeros_ = 0;
  // Per resident region, the padded layout whose halo it holds zeroed (none: not known).
  std::optional<PaddedActivation> zero_halo_[2];
  // Per resident region, whether an op of this segment has written it (so a later op may
  // still be reading it).
  bool region_written_[2] = {false, false};
  // Stashed dot results: bump-allocated in the resident area, all freed when the last one's
  // users have all read it.
  struct Stashed {
    uint64_t local;
    int64_t users_left;  // distinct users that have not read it yet
    size_t begin, end;   // the producer's instructions in the segment
    DramBuffer dram;
  };
  std::map<const hlo::Instruction*, Stashed> stash_;
  int64_t stash_used_ = 0;
  std::optional<uint64_t> StashSlot(const hlo::Instruction& value) const;
};

}  // namespace systolic::lowering

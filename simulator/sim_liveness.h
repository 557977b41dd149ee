// SRAM occupancy: how many bytes of the unified buffer and of the accumulators hold live data
// while a program runs (the "ub_bytes_live" / "acc_bytes_live" trace counters and the peaks in
// SimStats).
//
// A program is straight-line, so liveness is known before it runs. PlanLiveness walks the
// program once in program order (up to the first `halt`), tracking the configuration registers
// and weight-tile shapes exactly as the units will see them, and computes for every byte range
// an instruction writes (a "definition") when it dies:
//   - at the completion of the LAST instruction that reads any byte of that definition before
//     the byte is overwritten (for results: their last dma.store);
//   - at the completion of the overwriting instruction, for bytes overwritten without ever being
//     read;
//   - never (they stay live to the end of the run), for bytes never read and never overwritten.
// A definition's bytes become live when its writer completes. Each instruction's net change
// (bytes it makes live minus bytes whose last reader it is) is applied at its completion; an
// instruction that reads and overwrites the same range in place (vadd dst=a, matmul acc=1) thus
// changes nothing. Data placed in a memory before the run (--inputs) is not counted: only bytes
// the program itself writes.
//
// Guarantees:
//   - Never throws on a bad instruction: what the units will reject (a dtype that is no dtype, an
//     unloaded weight buffer) contributes no range here; the run reports the error.
//   - Cost: O(ranges x log(ranges)) time plus one step per (read, overlapped range) pair, which
//     is at most the bytes the functional model copies anyway; memory O(instructions + live
//     ranges). A strided access of more than kMaxRunsPerAccess rows counts as its bounding span
//     (documented over-approximation); more than kMaxLiveRanges disjoint live ranges in one
//     memory stops the analysis (LivenessPlan::tracked = false: no counters, peaks -1).
//   - OccupancyCounters applies the deltas in completion-time order, whatever order the units
//     report completions in, so the counters and peaks are those of the timeline.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "simulator/simulator.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace simulator {

inline constexpr int64_t kMaxRunsPerAccess = 256;
inline constexpr size_t kMaxLiveRanges = size_t{1} << 20;

// Net change of the live bytes when one instruction completes.
struct OccupancyDelta {
  int64_t ub = 0;
  int64_t acc = 0;
};

struct LivenessPlan {
  bool tracked = true;
  std::vector<OccupancyDelta> at_completion;  // indexed by instruction
};

LivenessPlan PlanLiveness(const systolic::Program& program, const systolic::ArchConfig& config);

// The run-time half: collects completions (which units report when an instruction is issued,
// possibly before earlier-ending ones) and applies them in time order.
class OccupancyCounters {
 public:
  explicit OccupancyCounters(const LivenessPlan* plan = nullptr) : plan_(plan) {}
  // Instruction `index` completes at `end_cycle` (>= the current simulated cycle).
  void Completed(size_t index, int64_t end_cycle);
  // Applies every completion before `cycle` (none can be reported for those cycles any more),
  // sampling the counters into `trace` (may be null) when they change.
  void Advance(int64_t cycle, TraceSink* trace);
  // Applies everything (end of the run).
  void Finish(TraceSink* trace) { Advance(INT64_MAX, trace); }
  int64_t ub_peak() const { return tracked() ? ub_peak_ : -1; }
  int64_t acc_peak() const { return tracked() ? acc_peak_ : -1; }

 private:
  bool tracked() const { return plan_ != nullptr && plan_->tracked; }
  struct Pending {
    int64_t cycle;
    OccupancyDelta delta;
    bool operator>(const Pending& other) const { return cycle > other.cycle; }
  };
  const LivenessPlan* plan_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  int64_t ub_ = 0, acc_ = 0, ub_peak_ = 0, acc_peak_ = 0;
};

}  // namespace simulator

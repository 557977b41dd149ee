// The state that every process of the SystemC accelerator model shares (docs/simulator.md):
// the current run (program, config, memories, registers, statistics), the per-unit instruction
// queues, the semaphores, the busy-until timelines of the shared resources (DRAM channel, UB and
// accumulator ports), and the abort protocol that unwinds every process after an error.
//
// Guarantees:
//   - Time is counted in cycles from the start of the current run; one cycle is one SystemC
//     nanosecond (an abstract tick: clock.mhz only converts cycles to seconds), so the integer
//     cycle counts are exact whatever the clock.
//   - Every wait of a process goes through WaitUntil() (a timed wait, which always ends) or
//     WaitFor() (an event or the abort event); both throw AbortRun once the run was aborted, so
//     an error in one unit never leaves another one hanging.
//   - The first error of a run wins; it is reported with the instruction index and .sasm
//     location ("instruction #N (mnemonic): ...").
//   - The DRAM channel is a "busy until" value: a request is granted at max(now, busy until)
//     and moves the value on, so contention is first-come first-served and deterministic. The
//     UB and accumulator ports are bandwidth ledgers (port_ledger.h): requests share them cycle
//     by cycle up to their capacity, also first-come first-served.
#pragma once

#include <systemc>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/diagnostic.h"
#include "simulator/functional.h"
#include "simulator/memory.h"
#include "simulator/port_ledger.h"
#include "simulator/sim_liveness.h"
#include "simulator/simulator.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace simulator::sim {

// Counting semaphores: as many as isa.def's `sem` field addresses.
using systolic::kSemaphoreCount;
// Units with an instruction queue: every unit but the control unit, which is the front end.
static_assert(static_cast<size_t>(systolic::Unit::kControl) == systolic::kUnitCount - 1,
              "isa.def: the control unit is the last ISA_UNIT row");
inline constexpr size_t kQueuedUnitCount = systolic::kUnitCount - 1;

// Why a unit waited. One table: the names are the causes of TraceSink::Stall and of
// UnitStats::stall_cycles.
enum class StallCause : uint8_t { kSemaphore, kDram, kUbPort, kAccPort, kWeights, kQueueFull };
inline constexpr std::array<std::string_view, 6> kStallCauseNames = {
    "semaphore", "dram", "ub_port", "acc_port", "weights", "queue_full"};

// Thrown inside a process to unwind it to its top-level loop once the run has failed.
struct AbortRun {};

// A bounded FIFO of instruction indices (the queue between the front end and one unit). It holds
// queue.depth instructions (the architecture table) before the front end stalls, like VTA's
// command queues.
class InstructionQueue {
 public:
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == slots_.size(); }
  void Push(uint32_t index) {
    slots_[(head_ + size_) % slots_.size()] = index;
    ++size_;
  }
  uint32_t Pop() {
    const uint32_t index = slots_[head_];
    head_ = (head_ + 1) % slots_.size();
    --size_;
    return index;
  }
  void Clear() { head_ = size_ = 0; }
  void Reset(size_t capacity) {  // empty, holding `capacity` (>= 1) instructions
    slots_.assign(capacity, 0);
    Clear();
  }

  sc_core::sc_event pushed;  // notified by the front end after each push
  sc_core::sc_event popped;  // notified by the unit after each pop (frees a slot)
  // The same events or'ed with the abort event, built once (Shared::Shared): an or-list built
  // per wait costs a heap allocation in the kernel.
  sc_core::sc_event_or_list pushed_or_abort;
  sc_core::sc_event_or_list popped_or_abort;

 private:
  std::vector<uint32_t> slots_ = std::vector<uint32_t>(1);
  size_t head_ = 0, size_ = 0;
};

// Everything one Simulate call owns. Built fresh per call, so nothing leaks between runs.
struct Run {
  Run(const systolic::Program& program, const systolic::ArchConfig& config, Memories& memories,
      const SimOptions& options);

  const systolic::Program& program;
  const systolic::ArchConfig& config;
  Memories& memories;
  SimOptions options;
  std::vector<systolic::Unit> unit_of;  // executing unit of each instruction (validated)

  RegisterFile registers{};
  WeightBuffers weights;

  // Machine rates derived from the config once.
  int64_t dram_latency_cycles = 0;
  double dram_bytes_per_cycle = 0;
  int64_t ub_bytes_per_cycle = 0;
  int64_t acc_bytes_per_cycle = 0;

  // Shared resource timelines ("busy until", in cycles).
  int64_t dram_free = 0;
  PortLedger ub_port, acc_port;  // the local memories' bandwidth over time (port_ledger.h)
  std::array<int64_t, kSemaphoreCount> semaphores{};

  // Progress, for completion checks and error messages.
  bool fetch_done = false;
  size_t fetch_index = 0;                             // instruction the front end is on
  std::array<int64_t, kUnitCount> current{};          // index in progress per unit, -1 idle
  std::array<bool, kUnitCount> semaphore_blocked{};   // blocked in sem.wait
  int64_t loads_in_flight = 0;  // issued loads whose data has not landed (ctrl.test waits)
  std::optional<hlo::Error> error;                    // the first error of the run

  // Statistics.
  SimStats stats;
  std::array<std::array<int64_t, kStallCauseNames.size()>, kUnitCount> stall_cycles{};
  std::array<int64_t, kUnitCount> busy_until{};  // for the union of overlapping busy intervals
  std::array<int64_t, 3> macs_by_dtype{};        // int8, bf16, f32 (energy.mac_*_pj)
  int64_t end_cycle = 0;                         // latest completion seen
  // SRAM occupancy (sim_liveness.h): planned before the run, applied at each completion.
  LivenessPlan liveness;
  OccupancyCounters occupancy{&liveness};
};

// The shared state and helpers of the model's processes. Owned by the top module.
class Shared {
 public:
  Shared();

  // Starts a run: resets queues, semaphores and the abort state.
  void BeginRun(Run& run, uint64_t start_ticks);
  void EndRun() { run_ = nullptr; }
  Run& run() { return *run_; }

  InstructionQueue& queue(systolic::Unit unit) { return queues_[static_cast<size_t>(unit)]; }
  sc_core::sc_event& semaphore_event(size_t sem) { return semaphore_events_[sem]; }
  const sc_core::sc_event_or_list& semaphore_or_abort(size_t sem) const {
    return semaphore_or_abort_[sem];
  }
  sc_core::sc_event& run_started() { return run_started_; }
  // Notified by a unit each time it finishes an instruction (ctrl.test waits for the drain).
  sc_core::sc_event& unit_finished() { return unit_finished_; }
  const sc_core::sc_event_or_list& unit_finished_or_abort() const {
    return unit_finished_or_abort_;
  }

  // Cycles since the start of the run.
  int64_t Now() const;
  // Waits (in a process) until `cycle`, or throws AbortRun. Checks SimOptions::max_cycles.
  void WaitUntil(int64_t cycle);
  // Sets `list` to `event` or the abort event, for WaitFor (build it once, not per wait).
  void MakeAbortable(const sc_core::sc_event& event, sc_core::sc_event_or_list& list) const {
    list |= event;
    list |= abort_;
  }
  // Waits for an event of `event_or_abort` (one of the lists above, which include the abort
  // event), then throws AbortRun if the run was aborted.
  void WaitFor(const sc_core::sc_event_or_list& event_or_abort);
  void ThrowIfAborted() const {
    if (aborting_) throw AbortRun{};
  }

  // Records the first error (prefixed with the instruction and its location), aborts every
  // process and throws AbortRun in the caller.
  [[noreturn]] void Fail(size_t index, std::string_view message);
  [[noreturn]] void FailRun(hlo::Error error);
  // Aborts from outside the simulation (after a deadlock): the processes unwind at the next
  // sc_start().
  void AbortFromOutside();

  // Fails the run with the cycle-limit error if `cycle` is beyond SimOptions::max_cycles.
  void CheckCycleLimit(int64_t cycle);

  // An instruction of `unit` executed during [start, end); `internal_stall` cycles of it were
  // stalls already reported with Stall(). Feeds statistics and the trace.
  void Busy(systolic::Unit unit, int64_t start, int64_t end, size_t index,
            int64_t internal_stall = 0);
  void Stall(systolic::Unit unit, int64_t start, int64_t end, StallCause cause);
  void Counter(std::string_view name, int64_t cycle, double value);

  // Grants [start, start + cycles) on a timeline at the earliest start >= `earliest`.
  static int64_t Reserve(int64_t& busy_until, int64_t earliest, int64_t cycles);

  // "#12 (sem.wait sem=3 count=1, line 14:3)": for error messages.
  std::string DescribeInstruction(size_t index) const;

 private:
  Run* run_ = nullptr;
  uint64_t start_ticks_ = 0;  // sc_time value at the start of the run
  uint64_t ticks_per_cycle_ = 0;
  uint64_t cycles_left_ = 0;  // before SystemC's time runs out
  bool aborting_ = false;
  sc_core::sc_event abort_;
  sc_core::sc_event run_started_;
  sc_core::sc_event unit_finished_;
  sc_core::sc_event_or_list unit_finished_or_abort_;
  std::array<InstructionQueue, kQueuedUnitCount> queues_;
  std::array<sc_core::sc_event, kSemaphoreCount> semaphore_events_;
  std::array<sc_core::sc_event_or_list, kSemaphoreCount> semaphore_or_abort_;
};

// "instruction #N (mnemonic): message" at the instruction's .sasm location when known.
hlo::Error InstructionError(const systolic::Program& program, size_t index,
                            std::string_view message);

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace simulator::sim

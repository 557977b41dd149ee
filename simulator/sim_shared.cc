// The shared state of the model's processes (sim_shared.h): run setup, time, waits with abort,
// error reporting, statistics and trace forwarding.
#include "simulator/sim_shared.h"

#include <algorithm>
#include <cmath>

namespace simulator::sim {
namespace {

// Bytes per cycle the unified buffer moves: every bank's every port, each bank_width wide.
int64_t UbBytesPerCycle(const systolic::ArchConfig& c) {
  return c.ub_banks * c.ub_ports * c.ub_bank_width_bytes;
}
// The accumulators have no width key: each bank reads or writes one row of C 32-bit partial
// sums per cycle, the rate at which the array's bottom edge produces them.
int64_t AccBytesPerCycle(const systolic::ArchConfig& c) {
  return c.acc_banks * c.array_cols * 4;
}

}  // namespace

Run::Run(const systolic::Program& program_in, const systolic::ArchConfig& config_in,
         Memories& memories_in, const SimOptions& options_in)
    : program(program_in), config(config_in), memories(memories_in), options(options_in) {
  // dram.latency_ns at clock.mhz, rounded up to whole cycles.
  // (The relative epsilon keeps an exact product from rounding up through floating-point noise.)
  dram_latency_cycles = static_cast<int64_t>(
      std::ceil(config.dram_latency_ns * config.clock_mhz / 1000 * (1 - 1e-12)));
  // dram.bandwidth_gbps is 10^9 bytes per second; a cycle lasts 1 / (clock.mhz * 10^6) s.
  dram_bytes_per_cycle = config.dram_bandwidth_gbps * 1000 / config.clock_mhz;
  ub_bytes_per_cycle = UbBytesPerCycle(config);
  acc_bytes_per_cycle = AccBytesPerCycle(config);
  ub_port = PortLedger(ub_bytes_per_cycle);
  acc_port = PortLedger(acc_bytes_per_cycle);
  liveness = PlanLiveness(program, config);
  current.fill(-1);
  stats.clock_mhz = config.clock_mhz;
}

Shared::Shared() : ticks_per_cycle_(sc_core::sc_time(1, sc_core::SC_NS).value()) {
  for (InstructionQueue& queue : queues_) {
    MakeAbortable(queue.pushed, queue.pushed_or_abort);
    MakeAbortable(queue.popped, queue.popped_or_abort);
  }
  for (size_t sem = 0; sem < kSemaphoreCount; ++sem) {
    MakeAbortable(semaphore_events_[sem], semaphore_or_abort_[sem]);
  }
  {
    MakeAbortable(unit_finished_, unit_finished_or_abort_);
  }
}

void Shared::BeginRun(Run& run, uint64_t start_ticks) {
  run_ = &run;
  start_ticks_ = start_ticks;
  cycles_left_ = (sc_core::sc_max_time().value() - start_ticks) / ticks_per_cycle_;
  aborting_ = false;
  for (InstructionQueue& queue : queues_) queue.Reset(static_cast<size_t>(run.config.queue_depth));
}

int64_t Shared::Now() const {
  return static_cast<int64_t>((sc_core::sc_time_stamp().value() - start_ticks_) /
                              ticks_per_cycle_);
}

void Shared::WaitUntil(int64_t cycle) {
  ThrowIfAborted();
  const int64_t now = Now();
  if (cycle <= now) return;
  CheckCycleLimit(cycle);
  // A plain timed wait (no abort event): it always ends, and is much cheaper in the kernel
  // than a wait on time-or-event. A process aborted meanwhile throws when it wakes.
  sc_core::wait(sc_core::sc_time::from_value(static_cast<uint64_t>(cycle - now) *
                                             ticks_per_cycle_));
  ThrowIfAborted();
}

void Shared::WaitFor(const sc_core::sc_event_or_list& event_or_abort) {
  ThrowIfAborted();
  sc_core::wait(event_or_abort);
  ThrowIfAborted();
}

hlo::Error InstructionError(const systolic::Program& program, size_t index,
                            std::string_view message) {
  std::string text = "instruction #" + std::to_string(index);
  if (index < program.instructions.size()) {
    // FindInstruction, not GetInstrInfo: this also reports opcodes that are not in the table.
    const auto opcode = static_cast<uint8_t>(program.instructions[index].opcode);
    const systolic::InstrInfo* info = systolic::FindInstruction(opcode);
    text += " (";
    text += info != nullptr ? std::string(info->mnemonic) : "opcode " + std::to_string(opcode);
    text += ")";
  }
  text += ": ";
  text += message;
  hlo::SourceLocation location;
  if (index < program.locations.size()) location = program.locations[index];
  return hlo::Error(location, text);
}

void Shared::Fail(size_t index, std::string_view message) {
  FailRun(InstructionError(run_->program, index, message));
}

void Shared::FailRun(hlo::Error error) {
  if (!run_->error) run_->error = std::move(error);
  if (!aborting_) {
    aborting_ = true;
    for (InstructionQueue& queue : queues_) queue.Clear();
    abort_.notify();  // immediate: every waiting process wakes in this evaluation phase
  }
  throw AbortRun{};
}

void Shared::AbortFromOutside() {
  aborting_ = true;
  for (InstructionQueue& queue : queues_) queue.Clear();
  abort_.notify(sc_core::SC_ZERO_TIME);
}

void Shared::CheckCycleLimit(int64_t cycle) {
  // SystemC time is finite (2^64 resolution ticks per process, across all runs).
  if (cycle >= 0 && static_cast<uint64_t>(cycle) >= cycles_left_) {
    FailRun(hlo::Error("simulated time exhausted: this process cannot simulate " +
                       std::to_string(cycle) + " more cycles"));
  }
  const int64_t limit = run_->options.max_cycles;
  if (cycle <= limit) return;
  std::string text = "cycle limit of " + std::to_string(limit) + " cycles exceeded (";
  for (size_t u = 0; u < kQueuedUnitCount; ++u) {
    if (u != 0) text += ", ";
    text += systolic::UnitName(static_cast<systolic::Unit>(u));
    text += " unit ";
    const int64_t index = run_->current[u];
    text += index < 0 ? std::string("idle")
                      : "at instruction " + DescribeInstruction(static_cast<size_t>(index));
  }
  text += run_->fetch_done ? ", front end done"
                           : ", front end at instruction " + DescribeInstruction(run_->fetch_index);
  text += ")";
  FailRun(hlo::Error(text));
}

void Shared::Busy(systolic::Unit unit, int64_t start, int64_t end, size_t index,
                  int64_t internal_stall) {
  CheckCycleLimit(end);
  Run& run = *run_;
  const size_t u = static_cast<size_t>(unit);
  UnitStats& stats = run.stats.units[u];
  ++stats.instructions;
  // Count each cycle once when a unit's intervals overlap (the matrix unit loads weights while
  // the array computes).
  const int64_t counted_from = std::max(start, run.busy_until[u]);
  if (end > counted_from) stats.busy_cycles += std::max<int64_t>(0, end - counted_from - internal_stall);
  run.busy_until[u] = std::max(run.busy_until[u], end);
  run.end_cycle = std::max(run.end_cycle, end);
  run.occupancy.Completed(index, end);
  run.occupancy.Advance(Now(), run.options.trace);
  if (run.options.trace != nullptr) {
    run.options.trace->Busy(unit, start, end, index,
                            systolic::GetInstrInfo(run.program.instructions[index].opcode).mnemonic);
  }
}

void Shared::Stall(systolic::Unit unit, int64_t start, int64_t end, StallCause cause) {
  if (end <= start) return;
  Run& run = *run_;
  run.stall_cycles[static_cast<size_t>(unit)][static_cast<size_t>(cause)] += end - start;
  if (run.options.trace != nullptr) {
    run.options.trace->Stall(unit, start, end, kStallCauseNames[static_cast<size_t>(cause)]);
  }
}

void Shared::Counter(std::string_view name, int64_t cycle, double value) {
  if (run_->options.trace != nullptr) run_->options.trace->Counter(name, cycle, value);
}

int64_t Shared::Reserve(int64_t& busy_until, int64_t earliest, int64_t cycles) {
  const int64_t start = std::max(earliest, busy_until);
  busy_until = start + cycles;
  return start;
}

std::string Shared::DescribeInstruction(size_t index) const {
  const systolic::Program& program = run_->program;
  std::string text = "#";  // appended piecewise: GCC 12 warns falsely on "#" + to_string()
  text += std::to_string(index);
  if (index >= program.instructions.size()) return text + " (end of program)";
  const systolic::Instruction& inst = program.instructions[index];
  text += " (";
  text += systolic::GetInstrInfo(inst.opcode).mnemonic;
  if (inst.opcode == systolic::Opcode::kSemWait) {
    text += " sem=" + std::to_string(inst.get(systolic::SemWaitField::sem)) +
            " count=" + std::to_string(inst.get(systolic::SemWaitField::count));
  }
  if (index < program.locations.size() && program.locations[index].line != 0) {
    text += ", line " + std::to_string(program.locations[index].line) + ":" +
            std::to_string(program.locations[index].column);
  }
  return text + ")";
}

}  // namespace simulator::sim

// The accelerator simulator: runs a systolic::Program on a SystemC model of the machine described
// by a systolic::ArchConfig, computing the real results in Memories and counting time.
//
// Structure (docs/simulator.md): an in-order front end fetches instructions and dispatches each
// to its unit's queue (load DMA, store DMA, matrix unit, vector unit; cfg.set goes to the
// register's owner, sem.* to the named unit). Each unit is an SC_THREAD that takes one
// instruction at a time, waits for its operands' resources (semaphores, DRAM channel, UB/
// accumulator ports), performs the data effect (functional.h) and waits the latency computed at
// transaction level (unit_timing.h) -- never a process per processing element.
//
// Guarantees:
//   - Results are bit-identical to functional.h's reference semantics regardless of timing.
//   - Deterministic: the same program, config and memories give the same cycles and stats.
//   - A program ends when `halt` was fetched and every queue drained. A deadlock (every unit
//     blocked on a semaphore, nothing in flight) and a run past SimOptions::max_cycles are
//     hlo::Errors naming each unit's blocked instruction (index and source location).
//   - Bad instructions (illegal fields, addresses outside a memory, an accumulator read before
//     it was written) are hlo::Errors naming the instruction index; nothing aborts or hangs.
//   - Simulate may be called any number of times in one process (SystemC elaborates once; each
//     call runs the kernel until that program completes) — tests and sweeps rely on it. Not
//     thread-safe: one Simulate at a time per process.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "simulator/memory.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace simulator {

using systolic::kUnitCount;  // systolic::Unit values (isa.def's ISA_UNIT rows)

// Receives the timeline as the simulation runs; trace.h has the Chrome/Perfetto JSON and VCD
// writers. Cycles are absolute within one Simulate call (start at 0).
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // `unit` executed instruction `index` (mnemonic given) during [start, end).
  virtual void Busy(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle, size_t index,
                    std::string_view mnemonic) = 0;
  // `unit` waited during [start, end) for `cause` ("semaphore", "dram", "ub_port", "acc_port",
  // "weights"; "queue_full" on the control unit when the front end waits for a full queue;
  // "queue_empty" is not reported).
  virtual void Stall(systolic::Unit unit, int64_t start_cycle, int64_t end_cycle,
                     std::string_view cause) = 0;
  // A counter sample: "ub_bytes_live", "acc_bytes_live", "dram_gbps".
  virtual void Counter(std::string_view name, int64_t cycle, double value) = 0;
  // Called once at the end.
  virtual void Finish(int64_t total_cycles) = 0;
};

struct SimOptions {
  int64_t max_cycles = int64_t{1} << 40;  // error beyond this many cycles
  TraceSink* trace = nullptr;             // optional
};

struct UnitStats {
  int64_t instructions = 0;
  int64_t busy_cycles = 0;
  std::map<std::string, int64_t> stall_cycles;  // by cause, as in TraceSink::Stall
};

struct SimStats {
  int64_t cycles = 0;
  double clock_mhz = 0;
  double seconds = 0;                          // cycles / clock
  std::array<UnitStats, kUnitCount> units{};   // indexed by systolic::Unit
  int64_t macs = 0;                            // multiply-accumulates performed
  double mac_utilization = 0;                  // macs / (cycles * rows * cols)
  int64_t vector_element_ops = 0;
  // Bytes moved per level.
  int64_t dram_bytes_read = 0, dram_bytes_written = 0;
  int64_t ub_bytes_read = 0, ub_bytes_written = 0;
  int64_t acc_bytes_read = 0, acc_bytes_written = 0;
  // Peak bytes holding live data (sim_liveness.h: written by the program and still to be read);
  // -1 when the program has too many disjoint live ranges to track.
  int64_t ub_peak_bytes_live = 0, acc_peak_bytes_live = 0;
  // The branch flag the program's last ctrl.test read (the loop sequencer's decision), the
  // branch index its last ctrl.index read (the branch sequencer's); empty when it has none.
  std::optional<bool> test_flag;
  std::optional<int64_t> branch_index;
  int64_t test_cycles = 0;  // the control unit's cycles in the last of them
  // Energy by component in picojoules: "mac", "vector", "ub", "acc", "dram".
  std::map<std::string, double> energy_pj;
  double total_energy_pj() const;
};

// The data effect of ctrl.test / ctrl.index: reads the predicate or the index from DRAM into
// `stats` (test_flag / branch_index, XLA's out-of-range rule).
void ReadBranchCondition(const systolic::Instruction& inst, const Memories& memories,
                         SimStats& stats);

// Runs `program` to completion on `memories` (which hold the inputs before and the results
// after). Throws hlo::Error as described above.
SimStats Simulate(const systolic::Program& program, const systolic::ArchConfig& config,
                  Memories& memories, const SimOptions& options = {});

}  // namespace simulator

// simulator::Simulate (simulator.h): validates the program, elaborates the SystemC model once per
// process, runs the kernel until the program completes, and turns what stopped it (completion,
// an error, a deadlock) into SimStats or an hlo::Error.
//
// The module hierarchy (docs/simulator.md):
//   accelerator
//     front_end   in-order fetch, 1 dispatch per cycle, nop/halt          (sim_unit.h)
//     load, store DMA engines on one shared DRAM channel                   (sim_dma.h)
//     mxu         weight loader + array timelines, double-buffered weights (sim_mxu.h)
//     vector      one v* instruction at a time                             (sim_vector.h)
//   joined by 16-deep instruction queues, 32 semaphores and the busy-until timelines of the DRAM
//   channel and the UB / accumulator ports (sim_shared.h).
//
// Why runs end by starvation: the model has no free-running clock; every process waits either
// for a computed latency or for an event. When the program has completed -- or when every unit
// left waits on a semaphore nobody can signal -- no event remains and sc_start() returns by
// itself. Simulate then tells the two apart, so a deadlock is found without a watchdog and
// without ever calling sc_stop() (which could not be undone for the next run).
//
// Why the kernel has a thread of its own: SystemC runs its processes as coroutines, switching
// stacks under the thread that calls sc_start() without telling AddressSanitizer, which then
// loses that thread's stack bounds and later misreads ordinary frames as overflows. Every SystemC
// call therefore happens on one thread the simulator owns (KernelThread), and the caller's stack
// is never switched.
#include "simulator/simulator.h"

#include <pthread.h>

#include <systemc>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <thread>

#include "simulator/sim_dma.h"
#include "simulator/sim_mxu.h"
#include "simulator/sim_shared.h"
#include "simulator/sim_stats.h"
#include "simulator/sim_unit.h"
#include "simulator/sim_vector.h"

namespace simulator {
namespace {

using systolic::Opcode;
using systolic::Unit;

class Machine : public sc_core::sc_module {
 public:
  explicit Machine(sc_core::sc_module_name name)
      : sc_core::sc_module(name),
        front_end_("front_end", shared_),
        load_("load", shared_, Unit::kLoad),
        store_("store", shared_, Unit::kStore),
        mxu_("mxu", shared_),
        vector_("vector", shared_) {}

  sim::Shared& shared() { return shared_; }

  void BeginRun(sim::Run& run) {
    shared_.BeginRun(run, sc_core::sc_time_stamp().value());
    for (sim::UnitProcess* unit : units()) unit->Reset();
    shared_.run_started().notify(sc_core::SC_ZERO_TIME);
  }

 private:
  std::array<sim::UnitProcess*, sim::kQueuedUnitCount> units() {
    return {&load_, &store_, &mxu_, &vector_};
  }

  sim::Shared shared_;  // first: the processes below hold a reference to it
  sim::FrontEnd front_end_;
  sim::DmaUnit load_;
  sim::DmaUnit store_;
  sim::MxuUnit mxu_;
  sim::VectorUnit vector_;
};

// SystemC reports: nothing on stdout (the CLI prints results there), errors as exceptions.
void ConfigureSystemCReports() {
  using sc_core::sc_report_handler;
  sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
  sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
}

// Set once a SystemC error escaped the kernel: its state is unknown, so later runs refuse.
bool kernel_broken = false;

// Runs the kernel for `duration`, or until no event remains when `duration` is null, converting
// SystemC errors into hlo::Error.
void RunKernel(const sc_core::sc_time* duration = nullptr) {
  try {
    if (duration == nullptr) {
      sc_core::sc_start();  // returns on starvation: see the file comment
    } else {
      sc_core::sc_start(*duration);
    }
  } catch (const sc_core::sc_report& report) {
    kernel_broken = true;
    throw hlo::Error(std::string("SystemC kernel error: ") + report.what());
  }
}

// The model is elaborated on first use and lives until the process exits (SystemC cannot
// elaborate twice or delete modules after elaboration).
Machine& GetMachine() {
  static Machine* machine = [] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", /*overwrite=*/0);
    ConfigureSystemCReports();
    Machine* created = nullptr;
    try {
      created = new Machine("accelerator");
    } catch (const sc_core::sc_report& report) {
      kernel_broken = true;
      throw hlo::Error(std::string("SystemC elaboration failed: ") + report.what());
    }
    // Elaborate and run every process to its first wait.
    RunKernel(&sc_core::SC_ZERO_TIME);
    return created;
  }();
  return *machine;
}

// The executing unit of every instruction, rejecting what no unit can execute.
std::vector<Unit> ValidateProgram(const systolic::Program& program) {
  if (program.instructions.size() > std::numeric_limits<uint32_t>::max()) {
    throw hlo::Error("program has " + std::to_string(program.instructions.size()) +
                     " instructions; at most 2^32 - 1 are supported");
  }
  std::vector<Unit> unit_of(program.instructions.size());
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const systolic::Instruction& inst = program.instructions[i];
    Unit unit;
    try {
      unit = systolic::ExecutingUnit(inst);
    } catch (const hlo::Error& e) {
      throw sim::InstructionError(program, i, e.message());
    }
    if (static_cast<size_t>(unit) >= kUnitCount) {
      throw sim::InstructionError(program, i,
                                  "unit field " + std::to_string(static_cast<int>(unit)) +
                                      " is not a unit (0..4)");
    }
    const bool semaphore_op = inst.opcode == Opcode::kSemSignal || inst.opcode == Opcode::kSemWait;
    if (semaphore_op && unit == Unit::kControl) {
      throw sim::InstructionError(
          program, i, "the control unit has no queue to synchronize; name load, store, mxu or vector");
    }
    unit_of[i] = unit;
  }
  return unit_of;
}

bool Completed(const sim::Run& run) {
  if (!run.fetch_done) return false;
  for (size_t u = 0; u < sim::kQueuedUnitCount; ++u) {
    if (run.current[u] >= 0) return false;
  }
  return true;
}

// Names every unit that waits forever and, if fetch is stuck too, the front end.
std::string DescribeDeadlock(sim::Shared& shared) {
  sim::Run& run = shared.run();
  std::string text = "deadlock:";
  bool first = true;
  auto add = [&](const std::string& part) {
    text += first ? " " : ", ";
    text += part;
    first = false;
  };
  for (size_t u = 0; u < sim::kQueuedUnitCount; ++u) {
    if (run.current[u] < 0) continue;
    // Only a semaphore can hold a unit when no event is left; "stuck" would reveal a model bug.
    add(std::string(systolic::UnitName(static_cast<Unit>(u))) +
        (run.semaphore_blocked[u] ? " unit blocked at instruction " : " unit stuck at instruction ") +
        shared.DescribeInstruction(static_cast<size_t>(run.current[u])));
  }
  if (!run.fetch_done) {
    const size_t index = run.fetch_index;
    std::string part = "front end stalled at instruction " + shared.DescribeInstruction(index);
    if (index < run.unit_of.size() && run.unit_of[index] == Unit::kControl) {
      part += " (waiting for every unit to drain)";  // ctrl.test / ctrl.index
    } else if (index < run.unit_of.size()) {
      part += " (the " + std::string(systolic::UnitName(run.unit_of[index])) + " queue is full)";
    }
    add(part);
  }
  return text;
}

// The thread every SystemC call runs on, started on first use. It is never joined: it waits for
// work until the process exits, and is deliberately leaked so that no destructor at exit races it.
class KernelThread {
 public:
  static KernelThread& Get() {
    static KernelThread* kernel = new KernelThread;
    // A child forked after the thread started has no kernel thread (fork copies only the caller)
    // and a copy of SystemC's state mid-use: refuse instead of waiting forever for the thread.
    if (forked_child) {
      throw hlo::Error(
          "the simulator cannot run in a process forked after it had started (SystemC's kernel "
          "thread does not survive fork): simulate in a freshly started process");
    }
    return *kernel;
  }

  // Runs `work` on the kernel thread and returns its result; an exception it throws is rethrown
  // here with its type intact.
  template <typename Result>
  Result Run(std::function<Result()> work) {
    // Shared with the kernel thread, which may still be leaving the task when the result wakes
    // this caller.
    auto task = std::make_shared<std::packaged_task<Result()>>(std::move(work));
    std::future<Result> result = task->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ = [task] { (*task)(); };
    }
    wake_.notify_one();
    return result.get();
  }

 private:
  KernelThread() {
    pthread_atfork(nullptr, nullptr, [] { forked_child = true; });
    std::thread([this] { Serve(); }).detach();
  }

  static inline std::atomic<bool> forked_child{false};

  [[noreturn]] void Serve() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return static_cast<bool>(pending_); });
        work = std::move(pending_);
        pending_ = nullptr;
      }
      work();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::function<void()> pending_;  // one at a time: Simulate admits one caller
};

// One Simulate at a time per process: SystemC's kernel is global. Atomic so that a caller that
// runs simulations on several threads (a parallel sweep) gets an error instead of corruption.
std::atomic<bool> simulating{false};

}  // namespace

void ReadBranchCondition(const systolic::Instruction& inst, const Memories& memories,
                         SimStats& stats) {
  if (inst.opcode == Opcode::kCtrlTest) {
    uint8_t flag = 0;
    memories.dram.Read(inst.get(systolic::CtrlTestField::src), std::span<uint8_t>(&flag, 1));
    stats.test_flag = flag != 0;
    return;
  }
  const auto count = static_cast<int64_t>(inst.get(systolic::CtrlIndexField::count));
  if (count < 1) throw hlo::Error("ctrl.index with count 0 (no branch to choose)");
  uint8_t bytes[4] = {};
  memories.dram.Read(inst.get(systolic::CtrlIndexField::src), std::span<uint8_t>(bytes, 4));
  int32_t value = 0;
  std::memcpy(&value, bytes, 4);
  stats.branch_index = value >= 0 && value < count ? value : count - 1;
}

SimStats Simulate(const systolic::Program& program, const systolic::ArchConfig& config,
                  Memories& memories, const SimOptions& options) {
  if (simulating.exchange(true)) {
    throw hlo::Error(
        "Simulate called while a simulation is running (one at a time per process: run parallel "
        "simulations in separate processes)");
  }
  struct Guard {
    sim::Shared* shared = nullptr;
    ~Guard() {
      if (shared != nullptr) shared->EndRun();
      simulating = false;
    }
  } guard;
  if (kernel_broken) throw hlo::Error("the simulator is unusable after an earlier SystemC error");
  std::vector<Unit> unit_of = ValidateProgram(program);
  return KernelThread::Get().Run<SimStats>([&]() -> SimStats {
    Machine& machine = GetMachine();
    sim::Shared& shared = machine.shared();
    sim::Run run(program, config, memories, options);
    run.unit_of = std::move(unit_of);

    guard.shared = &shared;
    machine.BeginRun(run);
    RunKernel();
    if (run.error) throw *run.error;  // every process has unwound already
    if (!Completed(run)) {
      const std::string message = DescribeDeadlock(shared);
      shared.AbortFromOutside();
      RunKernel();  // lets the blocked processes unwind
      throw hlo::Error(message);
    }
    SimStats stats = sim::FinishStats(run);
    if (options.trace != nullptr) options.trace->Finish(stats.cycles);
    return stats;
  });
}

}  // namespace simulator

// The queued units' common loop and the front end (sim_unit.h).
#include "simulator/sim_unit.h"

#include <algorithm>
#include <new>
#include <span>
#include <string>

namespace simulator::sim {

using systolic::Opcode;
using systolic::Unit;

// ---------------------------------------------------------------------------------------------
// UnitProcess

UnitProcess::UnitProcess(sc_core::sc_module_name name, Shared& shared, Unit unit)
    : sc_core::sc_module(name), shared_(shared), unit_(unit) {
  SC_HAS_PROCESS(UnitProcess);
  SC_THREAD(Thread);
  set_stack_size(kThreadStackBytes);
  SC_THREAD(PostDeferredSignals);
  shared_.MakeAbortable(deferred_pushed_, deferred_pushed_or_abort_);
}

void UnitProcess::PostDeferredSignals() {
  for (;;) {
    try {
      for (;;) {
        while (deferred_.empty()) shared_.WaitFor(deferred_pushed_or_abort_);
        const DeferredSignal signal = deferred_.front();
        shared_.WaitUntil(signal.cycle);
        deferred_.pop_front();
        AddToSemaphore(signal.sem, signal.count);
      }
    } catch (const AbortRun&) {
      deferred_.clear();
      sc_core::wait(shared_.run_started());
    }
  }
}

void UnitProcess::AddToSemaphore(size_t sem, int64_t count) {
  shared_.run().semaphores[sem] += count;
  shared_.semaphore_event(sem).notify();
}

void UnitProcess::Thread() {
  const size_t u = static_cast<size_t>(unit_);
  for (;;) {
    try {
      // Runs across Simulate calls: between runs the thread waits here for the next push.
      for (;;) {
        InstructionQueue& queue = shared_.queue(unit_);
        while (queue.empty()) shared_.WaitFor(queue.pushed_or_abort);
        const uint32_t index = queue.Pop();
        queue.popped.notify();  // a slot is free: wakes a front end stalled on this queue
        Run& run = shared_.run();
        run.current[u] = index;
        const systolic::Instruction& inst = run.program.instructions[index];
        try {
          Dispatch(index, inst);
        } catch (const hlo::Error& e) {
          shared_.Fail(index, e.message());
        } catch (const std::bad_alloc&) {
          shared_.Fail(index, "out of host memory");
        } catch (const std::exception& e) {
          shared_.Fail(index, e.what());
        }
        run.current[u] = -1;
        shared_.unit_finished().notify();
      }
    } catch (const AbortRun&) {
      // The run failed; the queues were cleared. Resume with the next run.
      sc_core::wait(shared_.run_started());
    }
  }
}

void UnitProcess::Dispatch(size_t index, const systolic::Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kCfgSet:
      ExecuteCfgSet(index, inst);
      return;
    case Opcode::kCfgLoad:
      ExecuteCfgLoad(index, inst);
      return;
    case Opcode::kSemSignal:
      ExecuteSemSignal(index, inst);
      return;
    case Opcode::kSemWait:
      ExecuteSemWait(index, inst);
      return;
    default:
      Execute(index, inst);  // the unit's own instructions; each unit switches exhaustively
      return;
  }
}

// Registers are read when an instruction starts; queuing cfg.set on the register's owner makes
// it take effect between that unit's earlier and later instructions. 1 cycle.
void UnitProcess::ExecuteCfgSet(size_t index, const systolic::Instruction& inst) {
  const int64_t start = shared_.Now();
  Run& run = shared_.run();
  ExecuteConfigWrite(inst, run.registers, run.memories);
  shared_.Busy(unit_, start, start + 1, index);
  shared_.WaitUntil(start + 1);
}

// As cfg.set, with the value read from local memory when the instruction executes (the unit's
// earlier instructions are done; a value another unit writes is ordered by a semaphore).
void UnitProcess::ExecuteCfgLoad(size_t index, const systolic::Instruction& inst) {
  const int64_t start = shared_.Now();
  Run& run = shared_.run();
  const int64_t bytes = ExecuteConfigWrite(inst, run.registers, run.memories);
  const bool from_acc = (inst.get(systolic::CfgLoadField::src) & systolic::kAccumulatorBit) != 0;
  (from_acc ? run.stats.acc_bytes_read : run.stats.ub_bytes_read) += bytes;
  shared_.Busy(unit_, start, start + 1, index);
  shared_.WaitUntil(start + 1);
}

// 1 cycle. A unit whose earlier work completes at a known cycle goes on issuing, and the count
// becomes visible 1 cycle after that work completes (as if the signal had waited for it);
// otherwise the unit waits for its earlier work (not a stall: the unit is busy) and the count
// becomes visible when the signal completes.
void UnitProcess::ExecuteSemSignal(size_t index, const systolic::Instruction& inst) {
  const std::optional<int64_t> drain = KnownDrainCycle();
  if (!drain) WaitUntilDrained();
  const int64_t start = shared_.Now();
  shared_.Busy(unit_, start, start + 1, index);
  shared_.WaitUntil(start + 1);
  const size_t sem = inst.get(systolic::SemSignalField::sem);
  const auto count = static_cast<int64_t>(inst.get(systolic::SemSignalField::count));
  const int64_t visible = std::max(start, drain.value_or(start)) + 1;
  if (visible <= shared_.Now() && deferred_.empty()) {
    AddToSemaphore(sem, count);
    return;
  }
  shared_.CheckCycleLimit(visible);
  deferred_.push_back({visible, sem, count});
  deferred_pushed_.notify();
}

// Blocks until the semaphore holds `count` (a "semaphore" stall), takes it, then 1 cycle.
void UnitProcess::ExecuteSemWait(size_t index, const systolic::Instruction& inst) {
  Run& run = shared_.run();
  const size_t u = static_cast<size_t>(unit_);
  const size_t sem = inst.get(systolic::SemWaitField::sem);
  const auto count = static_cast<int64_t>(inst.get(systolic::SemWaitField::count));
  const int64_t requested = shared_.Now();
  run.semaphore_blocked[u] = true;
  while (run.semaphores[sem] < count) shared_.WaitFor(shared_.semaphore_or_abort(sem));
  run.semaphore_blocked[u] = false;
  const int64_t start = shared_.Now();
  shared_.Stall(unit_, requested, start, StallCause::kSemaphore);
  run.semaphores[sem] -= count;
  shared_.Busy(unit_, start, start + 1, index);
  shared_.WaitUntil(start + 1);
}

UnitProcess::PortGrant UnitProcess::AcquirePorts(int64_t ub_bytes, int64_t acc_bytes,
                                                 int64_t cycles) {
  Run& run = shared_.run();
  const int64_t now = shared_.Now();
  cycles = std::max<int64_t>(cycles, 1);
  run.ub_port.Forget(now);
  run.acc_port.Forget(now);
  const int64_t ub_end = run.ub_port.Reserve(now, ub_bytes, CeilDiv(ub_bytes, cycles));
  const int64_t acc_end = run.acc_port.Reserve(now, acc_bytes, CeilDiv(acc_bytes, cycles));
  const int64_t end = std::max(ub_end, acc_end);
  // Beyond what the transfer takes alone (its own pace, or the port's width when that is
  // slower) the other units' streams held it up: the port that finished last.
  const int64_t alone = std::max({cycles, CeilDiv(ub_bytes, run.ub_bytes_per_cycle),
                                  CeilDiv(acc_bytes, run.acc_bytes_per_cycle)});
  const int64_t stall = std::max<int64_t>(0, end - now - alone);
  shared_.Stall(unit_, end - stall, end, ub_end >= acc_end ? StallCause::kUbPort
                                                          : StallCause::kAccPort);
  return {now, end - now, stall};
}

// ---------------------------------------------------------------------------------------------
// FrontEnd

FrontEnd::FrontEnd(sc_core::sc_module_name name, Shared& shared)
    : sc_core::sc_module(name), shared_(shared) {
  SC_HAS_PROCESS(FrontEnd);
  SC_THREAD(Thread);
  set_stack_size(kThreadStackBytes);
}

void FrontEnd::Thread() {
  for (;;) {
    sc_core::wait(shared_.run_started());
    try {
      try {
        FetchAll();
      } catch (const hlo::Error& e) {  // e.g. from a trace sink: the run's error
        shared_.FailRun(e);
      } catch (const std::exception& e) {
        shared_.FailRun(hlo::Error(std::string("front end: ") + e.what()));
      }
    } catch (const AbortRun&) {
      // The run failed; Simulate reports why.
    }
  }
}

void FrontEnd::FetchAll() {
  Run& run = shared_.run();
  const std::vector<systolic::Instruction>& instructions = run.program.instructions;
  for (size_t i = 0; i < instructions.size(); ++i) {
    run.fetch_index = i;
    const int64_t now = shared_.Now();
    const Unit unit = run.unit_of[i];
    const Opcode opcode = instructions[i].opcode;
    if (opcode == Opcode::kCtrlTest || opcode == Opcode::kCtrlIndex) {
      TestPredicate(i, instructions[i]);
      continue;
    }
    if (unit == Unit::kControl) {  // nop or halt: one cycle here
      shared_.Busy(Unit::kControl, now, now + 1, i);
      shared_.WaitUntil(now + 1);
      if (instructions[i].opcode == Opcode::kHalt) break;
      continue;
    }
    InstructionQueue& queue = shared_.queue(unit);
    if (queue.full()) {
      while (queue.full()) shared_.WaitFor(queue.popped_or_abort);
      shared_.Stall(Unit::kControl, now, shared_.Now(), StallCause::kQueueFull);
    }
    queue.Push(static_cast<uint32_t>(i));
    queue.pushed.notify();  // immediate: an idle unit starts it in this very cycle
    shared_.WaitUntil(shared_.Now() + 1);
  }
  run.fetch_index = instructions.size();
  run.fetch_done = true;
  run.end_cycle = std::max(run.end_cycle, shared_.Now());
}

// ctrl.test / ctrl.index: every queue empty and every unit idle, then one DRAM access (its
// latency) for the predicate or the branch index.
void FrontEnd::TestPredicate(size_t index, const systolic::Instruction& inst) {
  Run& run = shared_.run();
  auto drained = [&run, this] {
    if (run.loads_in_flight > 0) return false;
    for (size_t u = 0; u < kQueuedUnitCount; ++u) {
      if (run.current[u] >= 0 || !shared_.queue(static_cast<Unit>(u)).empty()) return false;
    }
    return true;
  };
  while (!drained()) shared_.WaitFor(shared_.unit_finished_or_abort());
  const int64_t start = std::max(shared_.Now(), run.end_cycle);
  const int64_t end = start + run.dram_latency_cycles + 1;
  try {
    ReadBranchCondition(inst, run.memories, run.stats);
  } catch (const hlo::Error& e) {
    shared_.Fail(index, e.message());
  }
  shared_.WaitUntil(end);
  shared_.Busy(Unit::kControl, start, end, index);
  run.stats.test_cycles = end - start;
  run.stats.dram_bytes_read += inst.opcode == Opcode::kCtrlTest ? 1 : 4;
  run.end_cycle = std::max(run.end_cycle, end);
}

}  // namespace simulator::sim

// The processes of the accelerator model that are not tied to one unit's datapath:
//   - UnitProcess, the base of the four queued units (load, store, mxu, vector): an SC_THREAD
//     that takes one instruction at a time from its queue and executes the instructions every
//     unit shares -- cfg.set and cfg.load (ordered with the unit's own work), sem.signal,
//     sem.wait -- before handing the rest to the derived unit.
//   - FrontEnd, the control unit: in-order fetch, one dispatch per cycle, stalling while the
//     target queue is full; nop and halt execute here.
//
// Guarantees: instructions of one unit start in program order, each after its dispatch;
// sem.signal adds to its semaphore only once every earlier instruction of its unit completed:
// a unit that knows when its issued work completes (KnownDrainCycle(): the matrix unit) goes
// on issuing and the count is added one cycle after that completion by a second thread
// (retirement tokens, in signal order); the others wait (WaitUntilDrained()) and add it when
// the signal's cycle ends; a process never waits without also waking on the abort event; any
// hlo::Error or std::exception raised while executing becomes the run's error, prefixed with the
// instruction index.
#pragma once

#include <systemc>

#include <deque>
#include <optional>

#include "simulator/sim_shared.h"

namespace simulator::sim {

// Stack of each SC_THREAD. The functional models run on it (SystemC's default is a few hundred
// KiB); pages are only committed when touched, so a generous size costs nothing.
inline constexpr size_t kThreadStackBytes = size_t{8} << 20;

class UnitProcess : public sc_core::sc_module {
 public:
  UnitProcess(sc_core::sc_module_name name, Shared& shared, systolic::Unit unit);
  systolic::Unit unit() const { return unit_; }
  // Clears per-run state (timelines of derived units).
  virtual void Reset() {}

 protected:
  // Executes one of the unit's own instructions (not cfg.set / sem.*), starting now.
  virtual void Execute(size_t index, const systolic::Instruction& inst) = 0;
  // Waits until every instruction issued so far has completed. Units that finish work in the
  // background (the matrix unit, the DMA engines) override it.
  virtual void WaitUntilDrained() {}
  // The cycle by which every instruction issued so far will have completed, when the unit
  // knows it without waiting (its timing is fixed at issue); nullopt: sem.signal waits.
  virtual std::optional<int64_t> KnownDrainCycle() const { return std::nullopt; }

  // Streams `ub_bytes` / `acc_bytes` through the UB and/or accumulator ports from the current
  // cycle at the instruction's own pace (all of them in `cycles` cycles), taking what the
  // other units' earlier streams leave (port_ledger.h). Returns the start (now), how many
  // cycles the transfer takes (more than `cycles` when the ports are busy or slower than the
  // instruction) and the excess, which is reported as a ub_port / acc_port stall.
  struct PortGrant {
    int64_t start = 0;
    int64_t cycles = 0;
    int64_t stall = 0;
  };
  PortGrant AcquirePorts(int64_t ub_bytes, int64_t acc_bytes, int64_t cycles);

  Shared& shared_;
  const systolic::Unit unit_;

 private:
  void Thread();
  void Dispatch(size_t index, const systolic::Instruction& inst);
  void ExecuteCfgSet(size_t index, const systolic::Instruction& inst);
  void ExecuteCfgLoad(size_t index, const systolic::Instruction& inst);
  void ExecuteSemSignal(size_t index, const systolic::Instruction& inst);
  void ExecuteSemWait(size_t index, const systolic::Instruction& inst);
  void PostDeferredSignals();  // the second thread: adds deferred counts at their cycles
  void AddToSemaphore(size_t sem, int64_t count);

  struct DeferredSignal {
    int64_t cycle;
    size_t sem;
    int64_t count;
  };
  std::deque<DeferredSignal> deferred_;  // in signal order; cycles never decrease
  sc_core::sc_event deferred_pushed_;
  sc_core::sc_event_or_list deferred_pushed_or_abort_;
};

class FrontEnd : public sc_core::sc_module {
 public:
  FrontEnd(sc_core::sc_module_name name, Shared& shared);

 private:
  void Thread();
  void FetchAll();
  void TestPredicate(size_t index, const systolic::Instruction& inst);  // ctrl.test, ctrl.index
  Shared& shared_;
};

}  // namespace simulator::sim

// The processes of the accelerator model that are not tied to one unit's datapath:
//   - UnitProcess, the base of the four queued units (load, store, mxu, vector): an SC_THREAD
//     that takes one instruction at a time from its queue and executes the instructions every
//     unit shares -- cfg.set (ordered with the unit's own work), sem.signal, sem.wait -- before
//     handing the rest to the derived unit.
//   - FrontEnd, the control unit: in-order fetch, one dispatch per cycle, stalling while the
//     target queue is full; nop and halt execute here.
//
// Guarantees: instructions of one unit start in program order, each after its dispatch;
// sem.signal adds to its semaphore only once every earlier instruction of its unit completed
// (WaitUntilDrained()); a process never waits without also waking on the abort event; any
// hlo::Error or std::exception raised while executing becomes the run's error, prefixed with the
// instruction index.
#pragma once

#include <systemc>

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

  // Requests the UB and/or accumulator ports for `ub_bytes` / `acc_bytes` at the current cycle;
  // waits while another unit holds them (a ub_port / acc_port stall) and returns the granted
  // start cycle and how many cycles the transfer occupies the ports.
  struct PortGrant {
    int64_t start = 0;
    int64_t cycles = 0;
  };
  PortGrant AcquirePorts(int64_t ub_bytes, int64_t acc_bytes);

  Shared& shared_;
  const systolic::Unit unit_;

 private:
  void Thread();
  void Dispatch(size_t index, const systolic::Instruction& inst);
  void ExecuteCfgSet(size_t index, const systolic::Instruction& inst);
  void ExecuteSemSignal(size_t index, const systolic::Instruction& inst);
  void ExecuteSemWait(size_t index, const systolic::Instruction& inst);
};

class FrontEnd : public sc_core::sc_module {
 public:
  FrontEnd(sc_core::sc_module_name name, Shared& shared);

 private:
  void Thread();
  void FetchAll();
  Shared& shared_;
};

}  // namespace simulator::sim

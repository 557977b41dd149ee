// The systolic accelerator as a targets::Backend: compiles a module with the systolic pipeline,
// lowers it to accelerator programs plus host-fallback steps (lowering/lowering.h) and runs
// them on the SystemC simulator, executing host steps on the `host` backend (the interpreter or
// the CPU backend, wired in tools/; this target never includes another target).
//
// Guarantees:
//   - Run() returns the module's results, computed by the simulator's real arithmetic for
//     accelerator ops and by the host backend for fallbacks; errors are hlo::Errors.
//   - profile().counters holds the figures of the last Run: cycles (accelerator + host
//     fallback, at clock_mhz), clock_mhz, seconds, achieved_tops, mac_utilization, macs, bytes per
//     level (dram/ub/acc read/written), energy_pj, host_fallback_cycles/share/bytes, the
//     numbers of segments, native and host instructions, and for loops and conditionals their
//     trips and control overhead (loops, device_loops: those the control unit runs;
//     branches_on_device; replayed_segments: segment runs replayed; loop_iterations,
//     loop_iterations_on_device; loop_control_cycles[_per_trip]: reading the predicate — the
//     condition's ctrl.test on the device, the host's batch otherwise — plus the loop state's
//     DMA, per trip).
//   - artifacts() has "program.sasm": every segment's assembly with a comment naming its ops,
//     one comment line per host step with the reason it fell back, and every loop's condition
//     and body programs and every conditional's branches under a comment that says who runs
//     them (and why the host, if so).
//   - `host` may be nullptr only for modules without fallbacks (Run throws otherwise).
//   - `trace`, when given, receives the first Run's timeline: every segment's events shifted
//     to the run's clock, each host step as a busy interval of the control unit named
//     "host:<instruction>", then Finish(total cycles). Later Runs are not traced.
#pragma once

#include <memory>

#include "simulator/simulator.h"
#include "targets/backend.h"
#include "simulator/isa/arch_config.h"

namespace targets {

std::unique_ptr<Backend> MakeSystolicBackend(systolic::ArchConfig config, Backend* host,
                                             simulator::TraceSink* trace = nullptr);

}  // namespace targets

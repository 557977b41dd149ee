// Replaying a program: its data effects in program order, its time taken from an earlier run.
//
// The SystemC model (simulator.h) is deterministic, and a program's time depends on the data it
// moves in two ways only: a dma.scatter skips the rows whose index is out of bounds (fewer
// bytes), and a cfg.load writes a register whose value is known only at run time. The DRAM
// offset registers (load./store.dram_offset) move addresses, which no unit's time depends on:
// the DRAM channel, the local ports and the units are not address-sensitive. A program without
// scatters whose cfg.loads write only those registers takes the same cycles, the same bytes and
// the same energy on every run: TimingIsDataIndependent. A caller that simulated such a program
// once may keep its SimStats and replay it on later runs. The systolic backend does this for a
// loop's condition and body, so that a million trips of a small body take seconds, not the
// minutes of a million SystemC runs.
//
// Guarantees:
//   - Replay leaves the memories as Simulate does for every program whose units exchange data
//     only in the order its semaphores (and the DMA engines' in-order completion) impose, as
//     every program the lowering emits does: Simulate runs each unit's instructions in order
//     and each dependency between units in order, so program order is one of its executions.
//     Registers start at 0 and the weight buffers empty, as in a simulated run.
//   - It sets `stats.test_flag` / `stats.branch_index` to what the program's last ctrl.test /
//     ctrl.index reads on this run (empty without one), as Simulate does; nothing else of
//     `stats` changes (the caller's counts from the run it replays).
//   - Errors (a bad field, an address outside a memory, a gather index out of bounds) are
//     hlo::Errors naming the instruction as Simulate's do; nothing aborts.
#pragma once

#include "simulator/memory.h"
#include "simulator/simulator.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace simulator {

bool TimingIsDataIndependent(const systolic::Program& program);

void Replay(const systolic::Program& program, const systolic::ArchConfig& config,
            Memories& memories, SimStats& stats);

}  // namespace simulator

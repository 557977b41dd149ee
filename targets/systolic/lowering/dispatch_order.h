// The program order of a segment, for the accelerator's in-order front end.
//
// The front end dispatches instructions in program order into one queue per unit (queue.depth
// deep, 16 on every preset) and
// stops when the next instruction's queue is full (docs/simulator.md). Emitters write an op's
// tile as loads, matmuls, vector work, store, so while the matrix unit works through a long
// tile the front end waits on its full queue and the DMA loads behind it (the next tile's
// operands, the next layer's weights) are not dispatched yet: the DRAM channel idles.
// HoistLoads moves every load-unit instruction as early as it may go:
//
//   - the load unit's own order is kept (its DMA, cfg.set and sem.wait sequence is unchanged,
//     and so are the other units' sequences): the program computes the same thing;
//   - a load-unit sem.wait is placed after enough signals of its semaphore precede it (the
//     k-th wait after the k-th signal), which keeps the property every emitter guarantees: each
//     wait's signal comes before it in program order, so no unit waits on an undispatched signal;
//   - at most queue.depth - 1 load-unit instructions (15 on every preset) move ahead of any
//     other instruction: one more would fill the load queue, and the front end would stop there
//     (DRAM-paced) instead of dispatching that instruction.
//
// Guarantees: the result is a permutation of `program` with the same per-unit order; a halt
// stays last.
#pragma once

#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"

namespace systolic::lowering {

void HoistLoads(Program& program, const ArchConfig& config);

}  // namespace systolic::lowering

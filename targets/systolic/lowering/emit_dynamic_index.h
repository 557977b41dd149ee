// Indices computed on the accelerator: the clamped start of a dynamic-slice or
// dynamic-update-slice, the row numbers of a gather. HLO clamps every start index so that the
// slice fits the operand; the vector unit does the same (vmax with 0, vmin with the largest
// start), scales each index by its dimension's stride and sums them, so the DMA engines can
// move the data without the host: cfg.load puts one such value in a *.dram_offset register,
// dma.gather reads a whole array of them.
//
// Guarantees: EmitIndexProgram loads each term's `count` s32 or u32 values from DRAM (strided, so
// one component of interleaved index vectors is picked out), and leaves at `layout.result`
// sum_j clamp(x_j, 0, max_j) * scale_j + constant, exactly, as long as PlanIndexTerms checked
// that no partial sum leaves the s32 range. The load unit's part comes first (it waits for the
// segment's op order like any op's loads); the vector unit waits for it. The caller orders the
// result's readers after the vector unit (a semaphore to the load or store unit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "targets/systolic/lowering/program_builder.h"

namespace systolic::lowering {

struct IndexTerm {
  uint64_t dram = 0;          // the first value (s32)
  int64_t dram_stride = 4;    // bytes between consecutive values
  int64_t max = 0;            // clamp to [0, max]
  int64_t scale = 1;          // multiplier after the clamp
  bool is_unsigned = false;   // u32: a value of 2^31 or more is large (clamps to max), not < 0
};

struct IndexProgramLayout {
  uint64_t result = 0;  // `count` s32 results
  int64_t bytes = 0;    // local bytes the program uses from its base
};

// The local bytes EmitIndexProgram uses for `terms` terms of `count` values.
int64_t IndexProgramBytes(size_t terms, int64_t count);

// False (with the reason) when a value could leave the s32 range: the sum of max_j * scale_j
// plus the constant must stay below 2^31.
bool IndexTermsFit(const std::vector<IndexTerm>& terms, int64_t constant, std::string* why);

// Emits the program at local address `base` (UB); returns where the result lies.
IndexProgramLayout EmitIndexProgram(ProgramBuilder& builder, const std::vector<IndexTerm>& terms,
                                    int64_t constant, int64_t count, uint64_t base);

}  // namespace systolic::lowering

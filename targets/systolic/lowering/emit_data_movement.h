// Data movement by DMA patterns: a transpose (possibly wrapped in reshapes, bitcasts and copies,
// as loop fusions of the systolic pipeline are) is a strided gather from DRAM into the unified
// buffer in output order, then a contiguous store — no vector-unit work. When the output's rows
// are too long for one DMA block and are columns of the operand (a gather would move one
// element per DRAM burst), tiles of the operand's rows are loaded whole, turned by the vector
// unit's vtrans, and stored as blocks of the output's rows.
//
// Guarantees: AnalyzeTranspose accepts exactly one transpose between reshape-like ops on one
// external operand with default layouts, else nullopt with the reason. EmitTranspose covers
// every output element once with double-buffered tiles of at most half the unified buffer;
// it returns false (the reason in `why`) when neither a DMA block nor a vtrans tile of 1-,
// 2- or 4-byte elements fits the ISA's 16-bit fields and half the buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

struct TransposePlan {
  std::vector<int64_t> dims;         // the transpose's operand dimensions
  std::vector<int64_t> permutation;  // output dimension k is operand dimension permutation[k]
  int64_t element_bytes = 0;
  int64_t operand = 0;               // external index of the data
};

std::optional<TransposePlan> AnalyzeTranspose(const hlo::Instruction& root,
                                              const ExternalIndex& external, std::string* why);

bool EmitTranspose(ProgramBuilder& builder, const TransposePlan& plan, const ArchConfig& config,
                   uint64_t source, uint64_t result, std::string* why);

}  // namespace systolic::lowering

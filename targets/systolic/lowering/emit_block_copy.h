// Data movement by strided DMA through the unified buffer: slice, concatenate and pad, as
// models use them, are lists of boxes — copies from an operand's DRAM bytes and fills with a
// constant — each staged through the unified buffer: a strided load gathers a block of the
// source, a strided store scatters it into the result (a fill: one vfill, then stores only).
// The bytes move unchanged, so every element type of one or more bytes moves exactly.
//
// Guarantees: PlanBlockCopies accepts slice (any strides), concatenate, and pad with
// non-negative edge padding, any interior padding and a constant pad value, on arrays of whole
// bytes with default layouts; else nullopt with the reason. In a plan every result element is
// written by exactly one copy box, or by the fill and at most one copy after it (pad).
// EmitBlockCopies keeps its tiles within `config.ub_bytes` (double-buffered halves), orders
// the boxes (each box's loads wait for the previous box's stores), and returns false
// (emitting nothing usable) when one DMA row does not fit half the buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/program_builder.h"

namespace systolic::lowering {

struct CopyBox {
  std::vector<int64_t> extents;      // elements per dimension
  std::vector<int64_t> src_strides;  // bytes per step of each dimension in the operand
  std::vector<int64_t> dst_strides;  // bytes per step of each dimension in the result
  int64_t operand = -1;              // the operand read; -1: a fill with `fill_bits`
  int64_t src_offset = 0, dst_offset = 0;  // bytes
  uint64_t fill_bits = 0;            // the element's bytes, little-endian
};

struct BlockCopyPlan {
  std::vector<CopyBox> boxes;
  int64_t element_bytes = 0;
};

std::optional<BlockCopyPlan> PlanBlockCopies(const hlo::Instruction& inst, std::string* why);

bool EmitBlockCopies(ProgramBuilder& builder, const BlockCopyPlan& plan, const ArchConfig& config,
                     const std::vector<uint64_t>& operands, uint64_t result, std::string* why);

// An iota: `viota` tiles of half the unified buffer (its row-major index in the register
// pair iota.inner / iota.modulus), each stored contiguously, the halves alternating. False
// (the reason in `why`) for pred, a type the vector unit does not hold, or more than 2^32
// elements.
bool EmitIota(ProgramBuilder& builder, const hlo::Instruction& iota, const ArchConfig& config,
              uint64_t result, std::string* why);

}  // namespace systolic::lowering

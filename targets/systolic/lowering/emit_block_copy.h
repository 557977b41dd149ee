// Data movement by strided DMA through the unified buffer: slice, concatenate, pad and
// reverse, as models use them, are lists of boxes — copies from an operand's DRAM bytes and
// fills with a constant — each staged through the unified buffer: a strided load gathers a
// block of the source, a strided store scatters it into the result (a fill: one vfill, then
// stores only).
// The bytes move unchanged, so every element type of one or more bytes moves exactly.
//
// Dynamic-slice and dynamic-update-slice are the same boxes moved by a start computed on the
// accelerator: the vector unit clamps each s32/u32 start index as HLO does and sums them
// (emit_dynamic_index.h), and cfg.load puts the sum in the load engine's (dynamic-slice) or
// the store engine's (dynamic-update-slice: the operand copied whole first, then the update
// stored at the start) dram_offset register.
//
// Guarantees: PlanBlockCopies accepts slice (any strides), concatenate, and pad with
// non-negative edge padding, any interior padding and a constant pad value, dynamic-slice and
// dynamic-update-slice with s32 or u32 start indices (constant ones folded), reverse of at
// most kMaxReverseBoxes indices of its reversed dimensions (one box each), on arrays of whole
// bytes with default layouts; else nullopt with the reason. In a plan every result element is
// written by exactly one copy box (a dynamic-update-slice: the whole copy, then the update), or
// by the fill and at most one copy after it (pad).
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
  // The plan's dynamic start (in elements) moves the box's source (dynamic-slice) or its
  // destination (dynamic-update-slice).
  bool dynamic_src = false, dynamic_dst = false;
};

// One dynamic start index: scalar operand `operand` (s32 or u32), clamped to [0, max], times
// `stride` elements.
struct DynamicStart {
  int64_t operand = 0;
  int64_t max = 0;
  int64_t stride = 0;
  bool is_unsigned = false;
};

struct BlockCopyPlan {
  std::vector<CopyBox> boxes;
  int64_t element_bytes = 0;
  // The dynamic part of the boxes' offsets: sum over the terms, computed on the vector unit
  // (emit_dynamic_index.h); constant start indices are folded into the boxes' offsets.
  std::vector<DynamicStart> dynamic;
};

std::optional<BlockCopyPlan> PlanBlockCopies(const hlo::Instruction& inst, std::string* why);

bool EmitBlockCopies(ProgramBuilder& builder, const BlockCopyPlan& plan, const ArchConfig& config,
                     const std::vector<uint64_t>& operands, uint64_t result, std::string* why);

// Loads one copy box from DRAM (`box.src_strides` from `source + box.src_offset`) into local
// memory (`box.dst_strides` as local byte strides from `local + box.dst_offset`) by strided
// DMA: one dma.load per index of the dimensions beyond the three a DMA block has (split by
// the builder). No tokens: the caller orders it.
void EmitBoxLoad(ProgramBuilder& builder, const CopyBox& box, int64_t element_bytes,
                 uint64_t source, uint64_t local);

// An iota: `viota` tiles of half the unified buffer (its row-major index in the register
// pair iota.inner / iota.modulus), each stored contiguously, the halves alternating. False
// (the reason in `why`) for pred, a type the vector unit does not hold, or more than 2^32
// elements.
bool EmitIota(ProgramBuilder& builder, const hlo::Instruction& iota, const ArchConfig& config,
              uint64_t result, std::string* why);

}  // namespace systolic::lowering

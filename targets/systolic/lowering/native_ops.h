// What the systolic lowering runs as accelerator instructions, answered without lowering:
//   * per opcode, the element types it runs on (keyed as compiler/ownership.cc keys an OpRule:
//     the operand's type for convert, compare, reduce and dot) or why the host runs it;
//   * per instruction, the conditions one element type cannot decide: a convert vcvt does not
//     compute, a compare in total order, a rounding outside the int8 requantize idiom.
// Both are computed from the tables and predicates Lower dispatches on (row_op_table.h,
// requantize_pattern.h, IsaDtype, MxuBit), and targets/systolic/description.cc builds the
// target's rules from them, so the description cannot claim an op the lowering does not run.
// What depends on shapes, fusion context and unified-buffer capacity is Lower's alone
// (lowering.h); a host step for an op these functions call native is one of those.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hlo/ir.h"

namespace systolic::lowering {

// How the lowering treats one opcode.
struct OpcodeSupport {
  bool every_type = false;               // a byte alias or DMA move: any element type
  std::set<hlo::PrimitiveType> types;    // else the element types it runs on
  std::string host_reason;               // no type at all: why the host runs it
  bool runs_natively() const { return every_type || !types.empty(); }
};

// nullopt for the opcodes that generate no code of their own (parameters, tuples, control flow
// run by the host sequencer with its bodies lowered separately, collectives): the ownership
// analysis never asks for those.
std::optional<OpcodeSupport> SupportFor(hlo::Opcode op);

// Whether every window dimension has a positive stride, non-negative padding and no dilation
// or reversal: the windows the accelerator's window folds take (reduce-window, depthwise
// convolution: emit_reduce_window.h).
bool IsPlainWindow(const std::vector<hlo::WindowDim>& window);

// Why `inst` runs on the host although SupportFor(its opcode) covers its element type, when
// the reason lies in the instruction itself (its attributes, its operand and result types, the
// users that make it part of an idiom); nullopt otherwise.
std::optional<std::string> IntrinsicHostReason(const hlo::Instruction& inst);

// Why DMA cannot move elements of `type` (nullopt when it can): elements of one to eight whole
// bytes of a type the accelerator holds (compiler::ComplexAndNarrowTypes are the host's).
std::optional<std::string> DmaElementTypeReason(hlo::PrimitiveType type);

// A reverse is one DMA box per index of its reversed dimensions (emit_block_copy.h), up to
// this many boxes; a longer one is a host step.
inline constexpr int64_t kMaxReverseBoxes = 4096;

// Whether `inst` is a step of an integer requantize idiom (requantize_pattern.h) that one
// vrequant computes: the s64 multiply, nudge and shift of the fixed-point form, the widening
// and narrowing converts, the zero-point add, the clamp. Their element types alone (s64) have
// no vector-unit program; in the idiom they need none.
bool InNativeIdiom(const hlo::Instruction& inst);

}  // namespace systolic::lowering

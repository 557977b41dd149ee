// Helpers shared by the emitter's op-family files (internal to targets/llvm/).
//
// Guarantees:
//   - Narrow floats (bf16, f16) are widened to f32 exactly and narrowed with round to nearest
//     even; bf16 narrowing is integer arithmetic on the f32 bit pattern, bit-identical to
//     hlo::FloatToBF16 (NaN keeps its sign and becomes quiet).
//   - The control-flow helpers work wherever the builder's insertion point is, also in the
//     middle of a block that already has a terminator: the block is split at the insertion point
//     and the code after it continues in the merge block (PHIs of successors are updated).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "hlo/ir.h"

namespace llvm_codegen::detail {

// The type an element has in memory: i8 for pred, IrType otherwise.
llvm::Type* MemoryType(hlo::PrimitiveType type, llvm::LLVMContext& context);

inline bool IsNarrowFloat(hlo::PrimitiveType type) {
  return type == hlo::PrimitiveType::kBF16 || type == hlo::PrimitiveType::kF16;
}
// The type arithmetic happens in: f32 for bf16/f16 (ir.h), IrType otherwise.
llvm::Type* ComputeType(hlo::PrimitiveType type, llvm::LLVMContext& context);
// bf16/f16 -> f32 (exact); other types unchanged.
llvm::Value* Widen(llvm::IRBuilder<>& b, llvm::Value* value, hlo::PrimitiveType type);
// f32 -> bf16/f16 rounding to nearest even; other types unchanged.
llvm::Value* Narrow(llvm::IRBuilder<>& b, llvm::Value* value, hlo::PrimitiveType type);
llvm::Value* F32ToBF16(llvm::IRBuilder<>& b, llvm::Value* value);
llvm::Value* BF16ToF32(llvm::IRBuilder<>& b, llvm::Value* value);

inline llvm::Value* I64(llvm::IRBuilder<>& b, int64_t value) {
  return b.getInt64(static_cast<uint64_t>(value));
}

// A start index of dynamic-slice, dynamic-update-slice or gather (`raw`, of the integer
// `type`) as an i64 clamped into [0, highest], as the interpreter does: signed types are
// sign-extended, unsigned zero-extended and compared unsigned (a u64 beyond 2^63 is a large
// start, clamped to `highest`, not a negative one).
llvm::Value* ClampStartIndex(llvm::IRBuilder<>& b, llvm::Value* raw, hlo::PrimitiveType type,
                             int64_t highest);

// "cannot emit 'name' (opcode): why" at the instruction's location.
[[noreturn]] void Fail(const hlo::Instruction& inst, std::string_view why);

// Block -> a block dominating it, recorded by the helpers below for the blocks they create.
using DominatorMap = std::map<llvm::BasicBlock*, llvm::BasicBlock*>;
// The blocks whose values may be used at the insertion point: the current block, then the
// recorded dominators up the chain.
std::vector<llvm::BasicBlock*> DominatingBlocks(llvm::IRBuilder<>& b,
                                                const DominatorMap& dominators);

// Moves everything after the insertion point into a new block (returned) and leaves the builder
// at the end of the current, now unterminated, block: the caller branches out of it and later
// continues at the start of the returned block.
llvm::BasicBlock* SplitAtInsertPoint(llvm::IRBuilder<>& b, std::string_view name,
                                     DominatorMap* dominators);

// if (condition) then_value() else else_value(), merged by a PHI of `type`. Each side may emit
// control flow of its own. The builder continues after the merge.
llvm::Value* EmitIfThenElse(llvm::IRBuilder<>& b, llvm::Value* condition, llvm::Type* type,
                            const std::function<llvm::Value*()>& then_value,
                            const std::function<llvm::Value*()>& else_value,
                            DominatorMap* dominators);

// for (i = start; i < end; ++i) body(i), i being i64. The builder continues after the loop.
void EmitForLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, std::string_view name,
                 const std::function<void(llvm::Value*)>& body, DominatorMap* dominators);

// An alloca in the entry block of the current function (so it is promoted to a register).
llvm::AllocaInst* EntryAlloca(llvm::IRBuilder<>& b, llvm::Type* type, std::string_view name);

// ---- Element conversions and comparisons (elemental_convert.cc). ----

// convert: float -> int truncates and saturates (NaN -> 0), int -> int wraps, x -> pred is
// x != 0, to bf16/f16 through f32 (also from f64 and 64-bit integers, as the interpreter does).
llvm::Value* EmitConvert(llvm::IRBuilder<>& b, llvm::Value* value, hlo::PrimitiveType from,
                         hlo::PrimitiveType to);
// Reinterprets the bits of one element as another type of the same width.
llvm::Value* EmitBitcastSameWidth(llvm::IRBuilder<>& b, llvm::Value* value, hlo::PrimitiveType from,
                                  hlo::PrimitiveType to);
// compare of two values of `type` (register types), giving i1.
llvm::Value* EmitCompare(llvm::IRBuilder<>& b, const hlo::CompareAttrs& attrs,
                         hlo::PrimitiveType type, llvm::Value* lhs, llvm::Value* rhs);
// reduce-precision of a float element of `type` (register type in, register type out).
llvm::Value* EmitReducePrecision(llvm::IRBuilder<>& b, llvm::Value* value, hlo::PrimitiveType type,
                                 int64_t exponent_bits, int64_t mantissa_bits);

}  // namespace llvm_codegen::detail

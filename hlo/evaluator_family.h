// Entry points of the evaluator's own family files beyond the contract in evaluator_internal.h
// (internal to hlo/). The core (evaluator.cc) calls these; tests reach them only through
// hlo::Evaluate.
#pragma once

#include <cstdint>
#include <span>

#include "hlo/evaluator_internal.h"

namespace hlo::eval {

// evaluator_rng.cc: rng, rng-bit-generator, rng-get-and-update-state. Deterministic: the stream
// is seeded from the instruction's name (and, for rng-bit-generator, from its state operand).
Literal EvaluateRandom(const Instruction& inst, Operands operands);

// evaluator_collectives.cc: collectives and partition-id / replica-id, exchanging operands with
// the other devices of the run through context.device() (one device when it is nullptr).
Literal EvaluateCollective(const Instruction& inst, Operands operands, EvalContext& context);

// evaluator_data_movement.cc: dynamic-update-slice writing into `target` in place (the core
// passes the operand's buffer when this instruction is its last user, so loops that update a
// large carried buffer do not copy it every iteration). `indices` are the start index scalars.
void DynamicUpdateSliceInPlace(Literal& target, const Literal& update, Operands indices);

// evaluator_custom_calls.cc: XLA's custom-call form of top-k: operand [batch..., n] ->
// (values [batch..., k], s32 indices [batch..., k]), largest first, ties by lower index.
Literal EvaluateTopKCustomCall(const Instruction& call, std::span<const Literal* const> operands);
// Sharding, annotate_device_placement, MoveToHost, MoveToDevice: the operand, unchanged.
Literal EvaluateAnnotationCustomCall(const Instruction& call,
                                     std::span<const Literal* const> operands);
// AllocateBuffer: a buffer of the result shape; XLA leaves it uninitialized, this gives zeros.
Literal EvaluateAllocateBufferCustomCall(const Instruction& call,
                                         std::span<const Literal* const> operands);
// __onednn$layernorm (XLA:CPU's oneDNN layer norm): (x - mean) / sqrt(variance + epsilon) over
// the last dimension, times scale and plus shift when given; computed in f64, rounded once.
// epsilon is backend_config's epsilon_typecast (the bits of an f32; absent: 0, as XLA reads it).
Literal EvaluateOneDnnLayerNormCustomCall(const Instruction& call,
                                          std::span<const Literal* const> operands);
// GetRngSeed: XLA's per-run seed for the RNG ops; the interpreter is deterministic and gives
// kRngSeed every time.
inline constexpr int64_t kRngSeed = 42;
Literal EvaluateGetRngSeedCustomCall(const Instruction& call,
                                     std::span<const Literal* const> operands);

// Strided element copy shared by the data-movement ops (evaluator_strided.cc): for every index
// `i` of `dims` (row-major), dst[dst_offset + i·dst_strides] = src[src_offset + i·src_strides].
// Offsets and strides count elements of `element_size` bytes; strides may be 0 or negative.
// Contiguous innermost runs are copied with memcpy.
void StridedCopy(uint8_t* dst, int64_t dst_offset, std::span<const int64_t> dst_strides,
                 const uint8_t* src, int64_t src_offset, std::span<const int64_t> src_strides,
                 std::span<const int64_t> dims, int64_t element_size);

// Reads a scalar integer literal of any integer type (used for start indices and selectors).
int64_t ScalarAsInt64(const Literal& scalar);
// Element `i` of an integer array as an index: u64 values beyond INT64_MAX saturate (they are
// out of range either way, and clamping must treat them as large, not negative).
int64_t IndexAsInt64(const Literal& indices, int64_t i);

}  // namespace hlo::eval

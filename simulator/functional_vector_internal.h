// Shared plumbing of the vector unit's functional model (functional_vector*.cc): reading and
// writing operand ranges of local memory and checking dtype fields. Internal to simulator/.
//
// Every operand range is read in full (copied, or read in place where the destination cannot
// clobber it first: OperandBytes) before the destination is written, so operands may overlap the
// destination: the result is as if all reads happened first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "simulator/functional.h"
#include "simulator/numeric_types.h"

namespace simulator::vector_internal {

// Which dtypes an operation accepts.
enum class DtypeClass : uint8_t {
  kAny,      // every dtype, pred included (vmov, vsel, vfill, vbcast)
  kNumeric,  // s8, u8, s32, bf16, f16, f32 (arithmetic, compares, reductions)
  kFloat,    // bf16, f16, f32 (transcendentals)
  kInteger,  // s8, u8, s32 (vrequant's destination)
};

std::string Mnemonic(const systolic::Instruction& inst);
// Decodes a dtype field value and checks it against `allowed`; throws naming the instruction.
systolic::Dtype CheckedDtype(const systolic::Instruction& inst, uint64_t raw, DtypeClass allowed,
                             const char* field = "dtype");

// `count` elements of `dtype` at a local address (UB or accumulators), copied out.
std::vector<uint8_t> ReadOperand(Memories& memories, uint64_t address, int64_t count,
                                 systolic::Dtype dtype);
// An operand read in place when the destination cannot change it before it is read -- the
// ranges are disjoint, or (`same_start_ok`, for elementwise ops whose element i is read before
// element i is written, at the same width) they start at the same byte -- and copied out first
// otherwise. Either way the result is as if every read happened before the first write.
// Range-checked like ReadOperand, when constructed.
class OperandBytes {
 public:
  OperandBytes(Memories& memories, uint64_t address, int64_t count, systolic::Dtype dtype,
               uint64_t dst_address, uint64_t dst_bytes, bool same_start_ok);
  const uint8_t* data() const { return data_; }

 private:
  std::vector<uint8_t> copy_;  // empty when read in place
  const uint8_t* data_ = nullptr;
};
// The destination range, marked written.
std::span<uint8_t> WriteOperand(Memories& memories, uint64_t address, int64_t count,
                                systolic::Dtype dtype);

// `address` moved on by `bytes` inside the same memory (throws rather than spill into the other).
uint64_t AdvanceAddress(uint64_t address, uint64_t bytes);

// NaN-propagating max/min with -0 < +0 (ISA: vmax, vmin, vredmax).
float FloatMax(float a, float b);
float FloatMin(float a, float b);

// The data effect of each vector-unit family, for the dispatch in functional.cc: elementwise
// (functional_vector.cc: the binary ops and vcmp share one layout, as do vmov and the
// transcendentals), conversions (functional_vector_convert.cc) and row operations
// (functional_vector_rows.cc).
void ExecuteBinary(const systolic::Instruction& inst, Memories& memories);
void ExecuteSelect(const systolic::Instruction& inst, Memories& memories);
void ExecuteUnary(const systolic::Instruction& inst, Memories& memories);
void ExecuteFill(const systolic::Instruction& inst, Memories& memories);
void ExecuteIota(const systolic::Instruction& inst, const RegisterFile& registers,
                 Memories& memories);
void ExecuteConvert(const systolic::Instruction& inst, Memories& memories);
void ExecuteRequantize(const systolic::Instruction& inst, const RegisterFile& registers,
                       Memories& memories);
void ExecuteReduce(const systolic::Instruction& inst, Memories& memories);
void ExecuteBroadcast(const systolic::Instruction& inst, Memories& memories);
void ExecuteTranspose(const systolic::Instruction& inst, Memories& memories);
void ExecuteBitonic(const systolic::Instruction& inst, Memories& memories);

}  // namespace simulator::vector_internal

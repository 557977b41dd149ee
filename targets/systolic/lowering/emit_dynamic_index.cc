// EmitIndexProgram (emit_dynamic_index.h).
#include "targets/systolic/lowering/emit_dynamic_index.h"

#include "targets/systolic/lowering/emit_vector.h"

namespace systolic::lowering {
namespace {

int64_t SlotBytes(int64_t count) {
  return AlignedLocal(count * 4);
}

}  // namespace

// Slots: the result, one per term's values, and two constants (the bound, the scale); zero
// is a third constant.
int64_t IndexProgramBytes(size_t terms, int64_t count) {
  return (static_cast<int64_t>(terms) + 4) * SlotBytes(count);
}

bool IndexTermsFit(const std::vector<IndexTerm>& terms, int64_t constant, std::string* why) {
  int64_t total = constant;
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (const IndexTerm& term : terms) {
    if (term.max < 0 || term.scale < 0 || (term.max > 0 && term.scale >= kLimit / term.max)) {
      if (why) *why = "an index term beyond the s32 range";
      return false;
    }
    total += term.max * term.scale;
    if (total >= kLimit) {
      if (why) *why = "a computed offset of " + std::to_string(total) + " elements (over 2^31)";
      return false;
    }
  }
  if (constant < 0 || constant >= kLimit) {
    if (why) *why = "a constant offset beyond the s32 range";
    return false;
  }
  return true;
}

IndexProgramLayout EmitIndexProgram(ProgramBuilder& builder, const std::vector<IndexTerm>& terms,
                                    int64_t constant, int64_t count, uint64_t base) {
  const auto slot = static_cast<uint64_t>(SlotBytes(count));
  const uint64_t result = base;
  const uint64_t zero = base + slot, bound = base + 2 * slot, scale = base + 3 * slot;
  // Without a constant, the first term is computed in the result's slot (no sum to start).
  const bool first_in_result = constant == 0 && !terms.empty();
  auto value_slot = [&](size_t j) {
    return first_in_result && j == 0 ? result : base + (4 + j) * slot;
  };
  for (size_t j = 0; j < terms.size(); ++j) {
    builder.Load(terms[j].dram, terms[j].dram_stride, value_slot(j), 4, 4, count);
  }
  builder.Signal(Unit::kLoad, Unit::kVector);
  builder.Wait(Unit::kLoad, Unit::kVector);
  if (!first_in_result) {
    EmitFill(builder, result, count, Dtype::kS32, static_cast<uint32_t>(constant));
  }
  EmitFill(builder, zero, count, Dtype::kS32, 0);
  for (size_t j = 0; j < terms.size(); ++j) {
    const IndexTerm& term = terms[j];
    const uint64_t x = value_slot(j);
    if (term.is_unsigned) {
      // The vector unit computes in s32: a u32 of 2^31 or more reads as negative. Its sign
      // spread and shifted right logically by one is INT32_MAX, which then wins the max.
      EmitFill(builder, scale, count, Dtype::kS32, 31);
      EmitBinary(builder, Opcode::kVShra, bound, x, scale, count, Dtype::kS32);
      EmitFill(builder, scale, count, Dtype::kS32, 1);
      EmitBinary(builder, Opcode::kVShrl, bound, bound, scale, count, Dtype::kS32);
      EmitBinary(builder, Opcode::kVMax, x, x, bound, count, Dtype::kS32);
    } else {
      EmitBinary(builder, Opcode::kVMax, x, x, zero, count, Dtype::kS32);
    }
    EmitFill(builder, bound, count, Dtype::kS32, static_cast<uint32_t>(term.max));
    EmitBinary(builder, Opcode::kVMin, x, x, bound, count, Dtype::kS32);
    if (term.scale != 1) {
      EmitFill(builder, scale, count, Dtype::kS32, static_cast<uint32_t>(term.scale));
      EmitBinary(builder, Opcode::kVMul, x, x, scale, count, Dtype::kS32);
    }
    if (x != result) EmitBinary(builder, Opcode::kVAdd, result, result, x, count, Dtype::kS32);
  }
  return {result, IndexProgramBytes(terms.size(), count)};
}

}  // namespace systolic::lowering

// Row structure of reductions, for input fusion: which values of a group belong to the same
// "row" of a reduction, so that one kernel can compute a whole row group (softmax: max, exp,
// sum, divide) with each row's reduced values kept on chip.
//
// A row signature is the reduce input's shape without its unit dimensions, with the reduced
// dimensions marked. Relative to it, a value is
//   kFull    its non-unit dims are the input's (one element per input element),
//   kKept    its non-unit dims are the kept dims (one element per row),
//   kScalar  it has no non-unit dims (the same for every row),
//   kNone    anything else (it may be read from outside the group, never computed inside).
// RowEdgeOk says whether a producer may feed a consumer inside a row group: elementwise ops and
// degenerate reshapes keep the class, a broadcast must put each non-unit operand dim on the
// dim with the same role, and a reduce must reduce exactly the signature's dims. These rules
// guarantee that every element of a row depends only on the same row's elements (or on values
// read from outside the group).
#pragma once

#include <optional>
#include <vector>

#include "hlo/ir.h"

namespace compiler::fusion {

struct RowSignature {
  std::vector<int64_t> sizes;   // non-unit dims of the reduce input
  std::vector<bool> reduced;    // per entry of `sizes`
  bool operator==(const RowSignature&) const = default;
};

enum class RowClass { kNone, kScalar, kKept, kFull };

// The signature of a single-input reduce that reduces at least one non-unit dimension.
std::optional<RowSignature> RowSignatureOf(const hlo::Instruction& reduce);
RowClass ClassOf(const hlo::Shape& shape, const RowSignature& signature);
// Opcodes a row group may compute: elementwise, reshape, broadcast, row reduces, small
// constants, iota.
bool IsRowOp(const hlo::Instruction& instruction);
bool RowEdgeOk(const hlo::Instruction& producer, const hlo::Instruction& consumer, int64_t index,
               const RowSignature& signature);

}  // namespace compiler::fusion

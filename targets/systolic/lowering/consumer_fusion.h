// A contraction and its lone elementwise user as one row program: the user becomes the dot's
// or convolution's epilogue, so the contraction's result never leaves the accumulators (the
// int8 requantize idiom after every layer, a residual add after a convolution).
//
//   producer  a dot, a convolution, or a fusion whose body holds one (an output fusion), with
//             exactly one user and not the entry's root
//   consumer  that user: an elementwise instruction or a fusion
//
// The consumer's computation is analyzed with its parameter for the producer substituted by
// the producer's root (row_program.h, Substitution); every other leaf maps to one operand list
// of entry-level values (the producer's operands, then the consumer's others).
//
// Guarantees: a returned pair's program has a contraction and every operand is an array value
// for which `computed` holds; nullopt when any of that fails (the caller lowers the two apart).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "hlo/ir.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {

struct ContractionWithConsumer {
  const hlo::Instruction* consumer = nullptr;
  std::vector<const hlo::Instruction*> operands;  // entry-level values, in external order
  RowProgram program;
  // Where each leaf the analysis met reads from (external) or is substituted (substitute).
  std::map<const hlo::Instruction*, int64_t> external_index;
  std::map<const hlo::Instruction*, const hlo::Instruction*> substitute;

  std::optional<int64_t> External(const hlo::Instruction* leaf) const;
};

std::optional<ContractionWithConsumer> AnalyzeWithConsumer(
    const hlo::Instruction& producer, const hlo::Instruction& entry_root,
    const std::function<bool(const hlo::Instruction*)>& computed);

}  // namespace systolic::lowering

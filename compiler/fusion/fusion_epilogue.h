// Recognizing contraction epilogues for output fusion: which consumer of a dot/convolution
// result is a bias-add, a scale, a relu, a convert or a residual add, so that a library or
// accelerator contraction can absorb it (compiler::Epilogue, TargetDescription).
//
// A chain step consumes the running value `value` (the contraction result, possibly after
// earlier epilogues) as operand `index` of `consumer`. The feature dimension is the result dim
// that a per-channel bias runs along (dot: the single rhs free dim; convolution: the output
// feature dim), tracked through degenerate reshapes; -1 when there is none.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler::fusion {

struct EpilogueStep {
  std::optional<Epilogue> epilogue;           // nullopt: a free step (degenerate reshape)
  std::vector<hlo::Instruction*> side_members;  // e.g. the bias broadcast and a small constant
  int64_t feature_dim = -1;                   // in the consumer's result
};

std::string_view EpilogueName(Epilogue epilogue);  // "bias-add", "scale", "relu", ...
// The feature dim of a dot/convolution result, or -1.
int64_t ContractionFeatureDim(const hlo::Instruction& contraction);
// The step `consumer` would be in an epilogue chain, or nullopt (with `why` filled) if it is not
// an epilogue at all.
std::optional<EpilogueStep> ClassifyEpilogueStep(const hlo::Instruction& value,
                                                 const hlo::Instruction& consumer, int64_t index,
                                                 int64_t feature_dim, std::string* why);

}  // namespace compiler::fusion

// ConvCanonicalizer (conv-canonicalizer): rewrites every convolution to the target's
// preferred dimension labels (TargetDescription::preferred_conv_dim_labels, e.g.
// "b01f_01io->b01f") by transposing the input and the kernel into that order and transposing
// the result back to the original one. The preferred labels name the order of batch/feature
// and of the spatial block; a convolution of another spatial rank uses the same order with its
// own number of spatial dims (when the preferred label's digits are contiguous).
//
// Post-condition: every convolution whose spatial rank the preferred labels can express uses
// them; results, window, feature/batch group counts and precision are unchanged.
// Does NOT: change anything when the preferred labels are empty; turn convolutions into dots;
// mark depthwise convolutions in the IR — they stay recognizable through
// IsDepthwiseConvolution, which fusion and the ownership analysis call.
#pragma once

#include <optional>
#include <string>

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

// A depthwise convolution: every input feature is its own group (feature_group_count equals
// the input feature count, > 1) and the kernel's input-feature dimension has size 1.
bool IsDepthwiseConvolution(const hlo::Instruction& instruction);

// The dimension numbers `labels` ("b01f_01io->b01f") describe for `spatial_rank` spatial dims;
// nullopt when they are malformed or cannot express that rank.
std::optional<hlo::ConvDimensionNumbers> ConvDimensionNumbersFromLabels(const std::string& labels,
                                                                        int64_t spatial_rank);

class ConvCanonicalizer : public Pass {
 public:
  explicit ConvCanonicalizer(const TargetDescription& target)
      : preferred_labels_(target.preferred_conv_dim_labels) {}
  explicit ConvCanonicalizer(std::string preferred_labels)
      : preferred_labels_(std::move(preferred_labels)) {}
  std::string_view name() const override { return "conv-canonicalizer"; }
  std::string_view description() const override {
    return "convolutions to the target's preferred dim_labels (input/kernel/output transposes)";
  }
  bool Run(hlo::Module& module) override;

 private:
  std::string preferred_labels_;
};

}  // namespace compiler

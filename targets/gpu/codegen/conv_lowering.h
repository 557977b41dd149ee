// convolution -> one cuDNN forward convolution (gpu::ConvCall: NCHW input, KCRS filter, NKPQ
// output, cross-correlation) plus the dimension orders to permute HLO's operands into.
//
// Guarantees: a plan is returned only for 2-D convolutions (two spatial dims) with no input
// (lhs) dilation, no window reversal, batch_group_count 1, one element type among f32, f16,
// bf16 throughout; the ConvCall then computes the HLO convolution exactly once its operands are
// in cuDNN's order (slices are the caller's). Otherwise the reason is returned.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "hlo/ir.h"
#include "targets/gpu/artifact.h"

namespace gpu::codegen {

struct ConvPlan {
  gpu::ConvCall call;  // dims, window and groups set; slices left empty
  // cuDNN's dimension i is HLO dimension x_dims[i] of the input / filter / result.
  std::vector<int64_t> input_dims, filter_dims, output_dims;
};

std::variant<ConvPlan, std::string> PlanConvolution(const hlo::Instruction& conv);

}  // namespace gpu::codegen

// convolution -> cuDNN forward convolution (see conv_lowering.h).
#include "targets/gpu/codegen/conv_lowering.h"

namespace gpu::codegen {

std::variant<ConvPlan, std::string> PlanConvolution(const hlo::Instruction& conv) {
  const auto& attrs = conv.attr<hlo::ConvolutionAttrs>();
  const hlo::ConvDimensionNumbers& d = attrs.dnums;
  const hlo::Shape& input = conv.operand(0)->shape();
  const hlo::Shape& filter = conv.operand(1)->shape();
  const hlo::Shape& output = conv.shape();
  if (d.input_spatial.size() != 2 || d.kernel_spatial.size() != 2 || d.output_spatial.size() != 2)
    return std::string("cuDNN lowering handles 2-D convolutions only");
  if (attrs.window.dims.size() != 2) return std::string("the window is not 2-D");
  if (attrs.batch_group_count != 1) return std::string("batch_group_count > 1");
  if (input.type != output.type || filter.type != output.type)
    return std::string("mixed element types");
  gpu::ConvCall call;
  switch (output.type) {
    case hlo::PrimitiveType::kF32:
      call.dtype = gpu::DType::kF32;
      break;
    case hlo::PrimitiveType::kF16:
      call.dtype = gpu::DType::kF16;
      break;
    case hlo::PrimitiveType::kBF16:
      call.dtype = gpu::DType::kBF16;
      break;
    default:
      return std::string("element type is not f32, f16 or bf16");
  }
  ConvPlan plan;
  plan.input_dims = {d.input_batch, d.input_feature, d.input_spatial[0], d.input_spatial[1]};
  plan.filter_dims = {d.kernel_output_feature, d.kernel_input_feature, d.kernel_spatial[0],
                      d.kernel_spatial[1]};
  plan.output_dims = {d.output_batch, d.output_feature, d.output_spatial[0], d.output_spatial[1]};
  auto dims_of = [](const hlo::Shape& shape, const std::vector<int64_t>& order) {
    std::vector<int64_t> dims;
    for (int64_t dim : order) dims.push_back(shape.dims.at(static_cast<size_t>(dim)));
    return dims;
  };
  call.input_dims = dims_of(input, plan.input_dims);
  call.filter_dims = dims_of(filter, plan.filter_dims);
  call.output_dims = dims_of(output, plan.output_dims);
  for (const hlo::WindowDim& w : attrs.window.dims) {
    if (w.base_dilation != 1) return std::string("input (lhs) dilation");
    if (w.reversal) return std::string("window reversal");
    call.strides.push_back(w.stride);
    call.padding_low.push_back(w.pad_lo);
    call.padding_high.push_back(w.pad_hi);
    call.dilations.push_back(w.window_dilation);
  }
  call.groups = attrs.feature_group_count;
  plan.call = call;
  return plan;
}

}  // namespace gpu::codegen

// Shape inference for dot, convolution and the batch-norm ops.
//
//   dot:         result = batch dims + lhs free dims + rhs free dims (each in operand order);
//                batch and contracting dimension sizes must agree pairwise.
//   convolution: dim_labels name the batch/feature/spatial dims; each output spatial size is the
//                windowed size of the input (padding, stride, lhs/rhs dilation); input features =
//                kernel input features * feature_group_count; the output batch is the input
//                batch / batch_group_count; output features = kernel output features.
//   batch-norm:  feature_index selects the feature dimension; scale/offset/mean/variance are
//                rank-1 of that size.
// Mixed precision: dot and convolution may produce an element type different from their operands
// (XLA's preferred_element_type), so the declared element type is taken; the operands must agree
// with each other up to floating-point precision.
#include <algorithm>
#include <string>

#include "hlo/shape_inference_internal.h"

namespace hlo::shape_inference {
namespace {

PrimitiveType ResultTypeOf(const Instruction& inst, const Shape& lhs, const Shape& rhs) {
  if (!SameTypeIgnoringFpPrecision(lhs.type, rhs.type)) {
    Fail(inst, "operand types " + std::string(PrimitiveTypeName(lhs.type)) + " and " +
                   std::string(PrimitiveTypeName(rhs.type)) + " do not agree");
  }
  return inst.shape().IsArray() ? inst.shape().type : lhs.type;
}

// Checks that `batch` and `contracting` are distinct dims of `shape`; returns the free dims.
std::vector<int64_t> FreeDims(const Instruction& inst, const Shape& shape,
                              std::span<const int64_t> batch, std::span<const int64_t> contracting,
                              std::string_view side) {
  std::vector<int64_t> all(batch.begin(), batch.end());
  all.insert(all.end(), contracting.begin(), contracting.end());
  ExpectDistinctDimensions(inst, all, shape.rank(),
                           std::string(side) + " batch and contracting dims");
  std::vector<int64_t> free;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(all.begin(), all.end(), d) == all.end()) {
      free.push_back(shape.dims[static_cast<size_t>(d)]);
    }
  }
  return free;
}

void ExpectPairedSizes(const Instruction& inst, const Shape& lhs, std::span<const int64_t> l,
                       const Shape& rhs, std::span<const int64_t> r, std::string_view what) {
  if (l.size() != r.size()) {
    Fail(inst, "lhs and rhs have different numbers of " + std::string(what) + " dims (" +
                   DimsToString(l) + " vs " + DimsToString(r) + ")");
  }
  for (size_t i = 0; i < l.size(); ++i) {
    const int64_t ls = lhs.dims[static_cast<size_t>(l[i])];
    const int64_t rs = rhs.dims[static_cast<size_t>(r[i])];
    if (ls != rs) {
      Fail(inst, std::string(what) + " dimension sizes differ: lhs dimension " +
                     std::to_string(l[i]) + " has size " + std::to_string(ls) +
                     " but rhs dimension " + std::to_string(r[i]) + " has size " +
                     std::to_string(rs));
    }
  }
}

Shape InferDot(const Instruction& inst) {
  const Shape& lhs = ExpectArrayOperand(inst, 0);
  const Shape& rhs = ExpectArrayOperand(inst, 1);
  const DotDimensionNumbers& dn = AttrsOf<DotAttrs>(inst, "dot").dnums;
  const std::vector<int64_t> lhs_free =
      FreeDims(inst, lhs, dn.lhs_batch, dn.lhs_contracting, "lhs");
  const std::vector<int64_t> rhs_free =
      FreeDims(inst, rhs, dn.rhs_batch, dn.rhs_contracting, "rhs");
  ExpectPairedSizes(inst, lhs, dn.lhs_batch, rhs, dn.rhs_batch, "batch");
  ExpectPairedSizes(inst, lhs, dn.lhs_contracting, rhs, dn.rhs_contracting, "contracting");
  std::vector<int64_t> dims;
  for (int64_t d : dn.lhs_batch) dims.push_back(lhs.dims[static_cast<size_t>(d)]);
  dims.insert(dims.end(), lhs_free.begin(), lhs_free.end());
  dims.insert(dims.end(), rhs_free.begin(), rhs_free.end());
  return Shape::Array(ResultTypeOf(inst, lhs, rhs), std::move(dims));
}

Shape InferConvolution(const Instruction& inst) {
  const Shape& input = ExpectArrayOperand(inst, 0);
  const Shape& kernel = ExpectArrayOperand(inst, 1);
  const auto& attrs = AttrsOf<ConvolutionAttrs>(inst, "convolution");
  const ConvDimensionNumbers& dn = attrs.dnums;
  const size_t spatial = dn.input_spatial.size();
  const int64_t rank = static_cast<int64_t>(spatial) + 2;
  if (input.rank() != rank || kernel.rank() != rank || dn.kernel_spatial.size() != spatial ||
      dn.output_spatial.size() != spatial) {
    Fail(inst, "dim_labels describe " + std::to_string(spatial) +
                   " spatial dims, which does not fit input " + input.ToString(false) +
                   " and kernel " + kernel.ToString(false));
  }
  if (attrs.window.dims.size() != spatial) {
    Fail(inst, "window has " + std::to_string(attrs.window.dims.size()) + " dimensions but " +
                   std::to_string(spatial) + " spatial dims were expected");
  }
  std::vector<int64_t> in_dims{dn.input_batch, dn.input_feature};
  in_dims.insert(in_dims.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  std::vector<int64_t> k_dims{dn.kernel_input_feature, dn.kernel_output_feature};
  k_dims.insert(k_dims.end(), dn.kernel_spatial.begin(), dn.kernel_spatial.end());
  std::vector<int64_t> out_dims{dn.output_batch, dn.output_feature};
  out_dims.insert(out_dims.end(), dn.output_spatial.begin(), dn.output_spatial.end());
  ExpectDistinctDimensions(inst, in_dims, rank, "input dim_labels");
  ExpectDistinctDimensions(inst, k_dims, rank, "kernel dim_labels");
  ExpectDistinctDimensions(inst, out_dims, rank, "output dim_labels");

  const int64_t fgc = attrs.feature_group_count;
  const int64_t bgc = attrs.batch_group_count;
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1)) {
    Fail(inst, "feature_group_count=" + std::to_string(fgc) + " and batch_group_count=" +
                   std::to_string(bgc) + " must be >= 1 and not both > 1");
  }
  auto size = [](const Shape& s, int64_t d) { return s.dims[static_cast<size_t>(d)]; };
  const int64_t in_features = size(input, dn.input_feature);
  const int64_t kernel_in = size(kernel, dn.kernel_input_feature);
  const int64_t kernel_out = size(kernel, dn.kernel_output_feature);
  const int64_t batch = size(input, dn.input_batch);
  // Written as a division so that an absurd group count cannot overflow the product.
  if (in_features % fgc != 0 || in_features / fgc != kernel_in) {
    Fail(inst, "input feature size " + std::to_string(in_features) +
                   " must equal kernel input features " + std::to_string(kernel_in) +
                   " * feature_group_count " + std::to_string(fgc));
  }
  if (kernel_out % fgc != 0 || kernel_out % bgc != 0) {
    Fail(inst, "kernel output features " + std::to_string(kernel_out) +
                   " must be divisible by the group counts");
  }
  if (batch % bgc != 0) {
    Fail(inst, "input batch " + std::to_string(batch) + " must be divisible by batch_group_count " +
                   std::to_string(bgc));
  }
  std::vector<int64_t> dims(static_cast<size_t>(rank), 0);
  dims[static_cast<size_t>(dn.output_batch)] = batch / bgc;
  dims[static_cast<size_t>(dn.output_feature)] = kernel_out;
  for (size_t i = 0; i < spatial; ++i) {
    const WindowDim& w = attrs.window.dims[i];
    if (w.size != size(kernel, dn.kernel_spatial[i])) {
      Fail(inst, "window size " + std::to_string(w.size) + " of spatial dim " +
                     std::to_string(i) + " differs from the kernel size " +
                     std::to_string(size(kernel, dn.kernel_spatial[i])));
    }
    dims[static_cast<size_t>(dn.output_spatial[i])] =
        WindowedOutputSize(inst, size(input, dn.input_spatial[i]), w, static_cast<int64_t>(i));
  }
  return Shape::Array(ResultTypeOf(inst, input, kernel), std::move(dims));
}

// Operand `i` must be F-vector of the operand's element type.
void ExpectFeatureVector(const Instruction& inst, int64_t i, const Shape& operand,
                         int64_t features) {
  const Shape expected = Shape::Array(operand.type, {features});
  if (!ExpectArrayOperand(inst, i).Compatible(expected)) {
    Fail(inst, "operand " + std::to_string(i) + " has shape " +
                   OperandShape(inst, i).ToString(false) + " but " + expected.ToString(false) +
                   " was expected");
  }
}

Shape InferBatchNorm(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  if (!IsFloating(operand.type)) {
    Fail(inst, "operand 0 has shape " + operand.ToString(false) +
                   " but batch norm needs a floating-point type");
  }
  const int64_t feature_index = AttrsOf<BatchNormAttrs>(inst, "batch-norm").feature_index;
  ExpectDimension(inst, feature_index, operand.rank(), "feature_index");
  const int64_t features = operand.dims[static_cast<size_t>(feature_index)];
  const Shape plain = Shape::Array(operand.type, operand.dims);
  const Shape vector = Shape::Array(operand.type, {features});
  switch (inst.opcode()) {
    case Opcode::kBatchNormInference:  // operand, scale, offset, mean, variance
      for (int64_t i = 1; i < 5; ++i) ExpectFeatureVector(inst, i, operand, features);
      return plain;
    case Opcode::kBatchNormTraining:  // operand, scale, offset -> (output, mean, variance)
      for (int64_t i = 1; i < 3; ++i) ExpectFeatureVector(inst, i, operand, features);
      return Shape::Tuple({plain, vector, vector});
    case Opcode::kBatchNormGrad:  // operand, scale, mean, variance, grad_output
      for (int64_t i = 1; i < 4; ++i) ExpectFeatureVector(inst, i, operand, features);
      if (!ExpectArrayOperand(inst, 4).Compatible(plain)) {
        Fail(inst, "operand 4 has shape " + OperandShape(inst, 4).ToString(false) + " but " +
                       plain.ToString(false) + " was expected");
      }
      return Shape::Tuple({plain, vector, vector});
    default: break;
  }
  Fail(inst, "is not a batch-norm op (internal error)");
}

}  // namespace

Shape InferContractionShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kDot: return InferDot(inst);
    case Opcode::kConvolution: return InferConvolution(inst);
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
      return InferBatchNorm(inst);
    default: break;
  }
  Fail(inst, "is not a contraction op (internal error)");
}

}  // namespace hlo::shape_inference

// Shape inference for fft (XLA's four forms over the last fft_length.size() dimensions, 1 to 3):
//   FFT, IFFT  complex -> the same complex shape;
//   RFFT       f32/f64 whose last dims equal fft_length -> c64/c128 with the last dim
//              fft_length.back() / 2 + 1 (the non-negative frequencies);
//   IRFFT      c64/c128 whose last dims equal fft_length but the last, which is
//              fft_length.back() / 2 + 1 -> f32/f64 with the last dims fft_length.
#include <string>

#include "hlo/shape_inference_internal.h"

namespace hlo::shape_inference {

Shape InferFftShape(const Instruction& inst) {
  const Shape& operand = ExpectArrayOperand(inst, 0);
  const auto& attrs = AttrsOf<FftAttrs>(inst, "fft");
  const int64_t n = static_cast<int64_t>(attrs.length.size());
  if (n < 1 || n > 3) {
    Fail(inst, "fft_length must name 1 to 3 dimensions, got " + std::to_string(n));
  }
  if (operand.rank() < n) {
    Fail(inst, "operand " + operand.ToString(false) + " has fewer dimensions than fft_length " +
                   DimsToString(attrs.length));
  }
  for (int64_t len : attrs.length) {
    if (len < 1) Fail(inst, "fft_length " + DimsToString(attrs.length) + " must be positive");
  }
  const bool real_input = attrs.type == FftType::kRfft;
  const bool real_output = attrs.type == FftType::kIrfft;
  if (real_input ? !(operand.type == PrimitiveType::kF32 || operand.type == PrimitiveType::kF64)
                 : !IsComplex(operand.type)) {
    Fail(inst, std::string(FftTypeName(attrs.type)) + " needs " +
                   (real_input ? "an f32 or f64" : "a c64 or c128") + " operand, got " +
                   operand.ToString(false));
  }
  const int64_t first = operand.rank() - n;
  std::vector<int64_t> dims = operand.dims;
  for (int64_t i = 0; i < n; ++i) {
    const bool last = i == n - 1;
    const int64_t len = attrs.length[static_cast<size_t>(i)];
    const int64_t expected = last && real_output ? len / 2 + 1 : len;
    if (operand.dims[static_cast<size_t>(first + i)] != expected) {
      Fail(inst, "operand " + operand.ToString(false) + " does not match " +
                     std::string(FftTypeName(attrs.type)) + " with fft_length " +
                     DimsToString(attrs.length) + " (dimension " + std::to_string(first + i) +
                     " should be " + std::to_string(expected) + ")");
    }
    if (last && real_input) dims[static_cast<size_t>(first + i)] = len / 2 + 1;
    if (last && real_output) dims[static_cast<size_t>(first + i)] = len;
  }
  PrimitiveType type = operand.type;
  if (real_input) {
    type = operand.type == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64;
  }
  if (real_output) type = ComplexComponentType(operand.type);
  return Shape::Array(type, std::move(dims));
}

}  // namespace hlo::shape_inference

// The matrix unit's arithmetic (numeric_mxu.h), one element at a time; the GEMM kernel is in
// numeric_mxu_gemm.cc.
#include "simulator/numeric_mxu.h"

#include <algorithm>
#include <string>

#include "hlo/diagnostic.h"

namespace simulator {

using systolic::Dtype;

bool IsMxuDtype(Dtype dtype) {
  return dtype == Dtype::kS8 || dtype == Dtype::kBf16 || dtype == Dtype::kF32;
}

Dtype MxuAccumulatorDtype(Dtype input) {
  if (!IsMxuDtype(input)) {
    throw hlo::Error("the matrix unit multiplies s8, bf16 or f32, not " +
                     std::string(systolic::DtypeName(input)));
  }
  return input == Dtype::kS8 ? Dtype::kS32 : Dtype::kF32;
}

uint32_t MxuMac(Dtype dtype, uint32_t sum, uint32_t a, uint32_t w) {
  switch (dtype) {
    case Dtype::kS8: {
      // Unsigned arithmetic is the two's-complement wrap without signed-overflow UB.
      const int32_t product = static_cast<int32_t>(static_cast<int8_t>(a)) *
                              static_cast<int32_t>(static_cast<int8_t>(w));
      return sum + static_cast<uint32_t>(product);
    }
    case Dtype::kBf16: {
      const float product = Bf16BitsToFloat(static_cast<uint16_t>(a)) *
                            Bf16BitsToFloat(static_cast<uint16_t>(w));  // exact
      return std::bit_cast<uint32_t>(std::bit_cast<float>(sum) + product);
    }
    case Dtype::kF32: {
      const float product = std::bit_cast<float>(a) * std::bit_cast<float>(w);
      return std::bit_cast<uint32_t>(std::bit_cast<float>(sum) + product);
    }
    case Dtype::kU8:
    case Dtype::kS32:
    case Dtype::kF16:
    case Dtype::kPred:
      break;
  }
  MxuAccumulatorDtype(dtype);  // throws the error naming the dtype
  return 0;
}

uint32_t MxuAccumulate(Dtype dtype, bool accumulate, uint32_t old_value, uint32_t column_sum) {
  if (!accumulate) return column_sum;
  if (MxuAccumulatorDtype(dtype) == Dtype::kS32) return old_value + column_sum;
  return std::bit_cast<uint32_t>(std::bit_cast<float>(old_value) +
                                 std::bit_cast<float>(column_sum));
}

void MxuAccumulateRow(Dtype dtype, std::span<uint32_t> acc, std::span<const uint32_t> column_sums) {
  const size_t n = std::min(acc.size(), column_sums.size());
  if (MxuAccumulatorDtype(dtype) == Dtype::kS32) {
    for (size_t j = 0; j < n; ++j) acc[j] += column_sums[j];  // uint32: the s32 wrap
    return;
  }
  for (size_t j = 0; j < n; ++j) {
    acc[j] = std::bit_cast<uint32_t>(std::bit_cast<float>(acc[j]) +
                                     std::bit_cast<float>(column_sums[j]));
  }
}

}  // namespace simulator

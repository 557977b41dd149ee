// The matrix unit's arithmetic (numeric_mxu.h).
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

namespace {

// Decodes operands once, then runs the k loop outermost and the n loop innermost: every output
// element still sees its products in increasing k, exactly as MxuMac chains them, and the inner
// loop is a plain elementwise multiply-add the compiler vectorizes (no reassociation needed).
// This file is compiled with -ffp-contract=off so no multiply-add here or in MxuMac is fused.
template <class Acc, class Decode>
std::vector<uint32_t> GemmTyped(int64_t m, int64_t k, int64_t n, std::span<const uint32_t> a,
                                std::span<const uint32_t> w, Decode decode) {
  std::vector<Acc> weights(w.size());
  for (size_t i = 0; i < w.size(); ++i) weights[i] = decode(w[i]);
  std::vector<uint32_t> out(static_cast<size_t>(m * n));
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc{0});  // the +0 start of every column sum
    for (int64_t kk = 0; kk < k; ++kk) {
      const Acc x = decode(a[i * k + kk]);
      const Acc* wrow = &weights[kk * n];
      for (int64_t j = 0; j < n; ++j) {
        const Acc product = x * wrow[j];
        row[j] = row[j] + product;
      }
    }
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = std::bit_cast<uint32_t>(row[j]);
  }
  return out;
}

}  // namespace

std::vector<uint32_t> MxuGemm(Dtype dtype, int64_t m, int64_t k, int64_t n,
                              std::span<const uint32_t> a, std::span<const uint32_t> w) {
  switch (dtype) {
    case Dtype::kS8:  // uint32 arithmetic: the s32 wrap without signed-overflow UB
      return GemmTyped<uint32_t>(m, k, n, a, w, [](uint32_t bits) {
        return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(bits)));
      });
    case Dtype::kBf16:
      return GemmTyped<float>(m, k, n, a, w, [](uint32_t bits) {
        return std::bit_cast<float>((bits & 0xffffu) << 16);  // bf16: the top half of an f32
      });
    case Dtype::kF32:
      return GemmTyped<float>(m, k, n, a, w, [](uint32_t bits) { return std::bit_cast<float>(bits); });
    case Dtype::kU8:
    case Dtype::kS32:
    case Dtype::kF16:
    case Dtype::kPred:
      break;
  }
  MxuAccumulatorDtype(dtype);  // throws the error naming the dtype
  return {};
}

}  // namespace simulator

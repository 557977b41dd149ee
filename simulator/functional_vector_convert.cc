// The vector unit's conversions (functional.h): vcvt and vrequant.
//
//   vcvt      float -> float: round to nearest even (NaN stays NaN); float -> integer: round to
//             nearest even, saturate, NaN -> 0; integer -> float: one round to nearest even;
//             integer -> integer: saturate; anything -> pred: != 0; pred -> x: 0 or 1.
//   vrequant  dst = saturate(round_half_even(f32(src) * scale) + zero_point), the product in f32
//             (TFLite-style requantization); a NaN product counts as 0; dst is s8, u8 or s32.
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/functional_vector_internal.h"

namespace simulator::vector_internal {
namespace {

using systolic::Dtype;
using systolic::Instruction;

void ConvertElement(Dtype from, const uint8_t* src, Dtype to, uint8_t* dst) {
  if (to == Dtype::kPred) {
    StoreIntWrapping(to, dst, LoadAsDouble(from, src) != 0.0);  // NaN != 0
  } else if (IsFloatDtype(to)) {
    if (IsFloatDtype(from)) {
      StoreFloat(to, dst, LoadFloat(from, src));  // exact widening, one rounding
    } else {
      StoreDoubleAsFloat(to, dst, static_cast<double>(LoadInt(from, src)));
    }
  } else if (IsFloatDtype(from)) {
    StoreIntWrapping(to, dst, RoundToIntSaturating(to, LoadFloat(from, src)));
  } else {
    StoreIntSaturating(to, dst, LoadInt(from, src));
  }
}

void Convert(const Instruction& inst, Memories& memories) {
  using F = systolic::VCvtField;
  const Dtype from = CheckedDtype(inst, inst.get(F::src_type), DtypeClass::kAny, "src_type");
  const Dtype to = CheckedDtype(inst, inst.get(F::dst_type), DtypeClass::kAny, "dst_type");
  const int64_t count = static_cast<int64_t>(inst.get(F::count));
  const std::vector<uint8_t> src = ReadOperand(memories, inst.get(F::src), count, from);
  std::span<uint8_t> out = WriteOperand(memories, inst.get(F::dst), count, to);
  const int from_bytes = systolic::DtypeBytes(from), to_bytes = systolic::DtypeBytes(to);
  for (int64_t i = 0; i < count; ++i) {
    ConvertElement(from, &src[i * from_bytes], to, &out[i * to_bytes]);
  }
}

void Requantize(const Instruction& inst, const RegisterFile& registers, Memories& memories) {
  using F = systolic::VRequantField;
  const Dtype from = CheckedDtype(inst, inst.get(F::src_type), DtypeClass::kNumeric, "src_type");
  const Dtype to = CheckedDtype(inst, inst.get(F::dst_type), DtypeClass::kInteger, "dst_type");
  const float scale = std::bit_cast<float>(
      registers[static_cast<size_t>(systolic::ConfigRegister::kQuantScale)]);
  const int64_t zero_point = static_cast<int32_t>(
      registers[static_cast<size_t>(systolic::ConfigRegister::kQuantZeroPoint)]);
  // A fused ReLU (TFLite's output_activation_min = zero point): the lower bound of the result.
  const bool relu = registers[static_cast<size_t>(systolic::ConfigRegister::kQuantRelu)] != 0;
  const int64_t count = static_cast<int64_t>(inst.get(F::count));
  const std::vector<uint8_t> src = ReadOperand(memories, inst.get(F::src), count, from);
  std::span<uint8_t> out = WriteOperand(memories, inst.get(F::dst), count, to);
  const int from_bytes = systolic::DtypeBytes(from), to_bytes = systolic::DtypeBytes(to);
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* element = &src[i * from_bytes];
    // f32(src): s32 rounds to nearest even like any int -> f32 conversion.
    const float value = IsFloatDtype(from) ? LoadFloat(from, element)
                                           : static_cast<float>(LoadInt(from, element));
    const float product = value * scale;
    // Clamp to +-2^40 (far beyond any s32 result, so saturation below is unchanged), round
    // half to even, add the zero point in 64 bits, saturate.
    constexpr double kClamp = 1099511627776.0;
    const double clamped = std::isnan(product) ? 0.0
                                               : std::fmax(-kClamp, std::fmin(kClamp, product));
    const int64_t rounded = static_cast<int64_t>(std::nearbyint(clamped));
    const int64_t shifted = rounded + zero_point;
    StoreIntSaturating(to, &out[i * to_bytes],
                       relu ? std::max(shifted, zero_point) : shifted);
  }
}

}  // namespace

void ExecuteConvert(const Instruction& inst, Memories& memories) { Convert(inst, memories); }
void ExecuteRequantize(const Instruction& inst, const RegisterFile& registers,
                       Memories& memories) {
  Requantize(inst, registers, memories);
}

}  // namespace simulator::vector_internal

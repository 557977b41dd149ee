// The vector unit's conversions (functional.h): vcvt and vrequant.
//
//   vcvt      float -> float: round to nearest even (NaN stays NaN); float -> integer: round to
//             nearest even, saturate, NaN -> 0; integer -> float: one round to nearest even;
//             integer -> integer: saturate; anything -> pred: != 0; pred -> x: 0 or 1.
//   vrequant  dst = saturate(rescale(src) + zero_point), by quant.mode:
//             0 float: round_half_even(f32(src) * scale [* post_scale]), each product rounded to
//               f32 (TFLite-style, or AQT's dequantize-then-requantize); a NaN counts as 0;
//             1, 2 fixed point (gemmlowp / TFLite single rounding): (src * multiplier + nudge)
//               >> shift in 64 bits, nudge 2^(shift-1) (mode 1, round half up) or 0 (mode 2,
//               floor: a plain arithmetic shift with multiplier 1); src an integer type;
//             dst is s8, u8 or s32.
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

// The rescaled value of one element before the zero point, in the mode quant.mode selects.
class Rescale {
 public:
  Rescale(const RegisterFile& registers, Dtype from) : from_(from) {
    auto reg = [&](systolic::ConfigRegister r) { return registers[static_cast<size_t>(r)]; };
    mode_ = reg(systolic::ConfigRegister::kQuantMode);
    scale_ = std::bit_cast<float>(reg(systolic::ConfigRegister::kQuantScale));
    post_scale_ = std::bit_cast<float>(reg(systolic::ConfigRegister::kQuantPostScale));
    multiplier_ = static_cast<int32_t>(reg(systolic::ConfigRegister::kQuantMultiplier));
    shift_ = reg(systolic::ConfigRegister::kQuantShift);
    if (mode_ > 2) {
      throw hlo::Error("vrequant: quant.mode " + std::to_string(mode_) +
                       " is not a mode (0 float, 1 fixed point rounding, 2 fixed point floor)");
    }
    if (mode_ != 0 && (!IsIntegerDtype(from) || shift_ > 62)) {
      throw hlo::Error(
          "vrequant: a fixed-point mode needs an integer src_type and quant.shift <= 62 (got " +
          std::string(systolic::DtypeName(from)) + ", " + std::to_string(shift_) + ")");
    }
  }

  int64_t operator()(const uint8_t* element) const {
    if (mode_ == 0) return Float(element);
    // |src| < 2^31 and |multiplier| <= 2^31: the product and the nudge fit in 63 bits.
    const int64_t product = LoadInt(from_, element) * int64_t{multiplier_};
    const int64_t nudge = mode_ == 1 && shift_ > 0 ? int64_t{1} << (shift_ - 1) : 0;
    return (product + nudge) >> shift_;  // arithmetic: floor
  }

 private:
  int64_t Float(const uint8_t* element) const {
    // f32(src): s32 rounds to nearest even like any int -> f32 conversion.
    const float value = IsFloatDtype(from_) ? LoadFloat(from_, element)
                                            : static_cast<float>(LoadInt(from_, element));
    float product = value * scale_;
    if (post_scale_ != 0.0f) product *= post_scale_;  // a second f32 rounding, as the idiom has
    // Clamp to +-2^40 (far beyond any s32 result, so saturation below is unchanged), round
    // half to even.
    constexpr double kClamp = 1099511627776.0;
    const double clamped = std::isnan(product) ? 0.0
                                               : std::fmax(-kClamp, std::fmin(kClamp, product));
    return static_cast<int64_t>(std::nearbyint(clamped));
  }

  Dtype from_;
  uint32_t mode_ = 0;
  float scale_ = 0, post_scale_ = 0;
  int32_t multiplier_ = 0;
  uint32_t shift_ = 0;
};

void Requantize(const Instruction& inst, const RegisterFile& registers, Memories& memories) {
  using F = systolic::VRequantField;
  const Dtype from = CheckedDtype(inst, inst.get(F::src_type), DtypeClass::kNumeric, "src_type");
  const Dtype to = CheckedDtype(inst, inst.get(F::dst_type), DtypeClass::kInteger, "dst_type");
  const Rescale rescale(registers, from);
  const int64_t zero_point = static_cast<int32_t>(
      registers[static_cast<size_t>(systolic::ConfigRegister::kQuantZeroPoint)]);
  // A fused ReLU (TFLite's output_activation_min = zero point): the lower bound of the result.
  const bool relu = registers[static_cast<size_t>(systolic::ConfigRegister::kQuantRelu)] != 0;
  const int64_t count = static_cast<int64_t>(inst.get(F::count));
  const std::vector<uint8_t> src = ReadOperand(memories, inst.get(F::src), count, from);
  std::span<uint8_t> out = WriteOperand(memories, inst.get(F::dst), count, to);
  const int from_bytes = systolic::DtypeBytes(from), to_bytes = systolic::DtypeBytes(to);
  for (int64_t i = 0; i < count; ++i) {
    // The zero point is added in 64 bits, then the result saturates.
    const int64_t shifted = rescale(&src[i * from_bytes]) + zero_point;
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

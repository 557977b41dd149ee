// Element encodings and conversions (numeric_types.h).
#include "simulator/numeric_types.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "hlo/diagnostic.h"
#include "hlo/literal.h"

namespace simulator {
namespace {

using systolic::Dtype;

// Bytes per element: isa.def's ISA_DTYPE column again, here as a constant the element loops below
// can inline (systolic::DtypeBytes is an out-of-line call, once per element on the hot paths).
constexpr int kElementBytes[] = {
#define ISA_DTYPE(id, name, bytes, doc) bytes,
#include "simulator/isa/isa.def"
};
int ElementBytes(Dtype dtype) { return kElementBytes[static_cast<size_t>(dtype)]; }

// Little-endian loads and stores of a `Bytes`-wide element, written byte by byte so they are
// right on any host; compilers merge them into one load or store on a little-endian one.
template <int Bytes>
uint32_t LoadLittleEndian(const uint8_t* element) {
  uint32_t bits = 0;
  for (int i = Bytes - 1; i >= 0; --i) bits = (bits << 8) | element[i];
  return bits;
}
template <int Bytes>
void StoreLittleEndian(uint8_t* element, uint32_t bits) {
  for (int i = 0; i < Bytes; ++i) element[i] = static_cast<uint8_t>(bits >> (8 * i));
}
template <int Bytes>
void LoadArray(const uint8_t* elements, int64_t count, uint32_t* out) {
  if constexpr (Bytes == 4 && std::endian::native == std::endian::little) {
    if (count > 0) std::memcpy(out, elements, static_cast<size_t>(count) * 4);  // same bytes
    return;
  }
  for (int64_t i = 0; i < count; ++i) out[i] = LoadLittleEndian<Bytes>(elements + i * Bytes);
}
template <int Bytes>
void StoreArray(uint8_t* elements, int64_t count, const uint32_t* bits) {
  if constexpr (Bytes == 4 && std::endian::native == std::endian::little) {
    if (count > 0) std::memcpy(elements, bits, static_cast<size_t>(count) * 4);
    return;
  }
  for (int64_t i = 0; i < count; ++i) StoreLittleEndian<Bytes>(elements + i * Bytes, bits[i]);
}

// f32 nearest to `value` with round-to-odd: truncate toward zero, and set the last mantissa bit
// when the truncation was inexact. A later round-to-nearest-even to a format with at least two
// fewer mantissa bits (bf16: 8, f16: 11 of f32's 24) then equals one direct rounding of `value`.
float RoundToOddFloat(double value) {
  float nearest = static_cast<float>(value);
  if (static_cast<double>(nearest) == value || std::isnan(value) || std::isinf(nearest)) {
    return nearest;
  }
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(value)) {
    nearest = std::nextafter(nearest, 0.0f);
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(nearest) | 1u);
}

}  // namespace

bool IsFloatDtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBf16:
    case Dtype::kF16:
    case Dtype::kF32:
      return true;
    case Dtype::kS8:
    case Dtype::kU8:
    case Dtype::kS32:
    case Dtype::kPred:
      return false;
  }
  return false;
}

bool IsIntegerDtype(Dtype dtype) {
  return dtype == Dtype::kS8 || dtype == Dtype::kU8 || dtype == Dtype::kS32;
}

int64_t IntMin(Dtype dtype) {
  switch (dtype) {
    case Dtype::kS8: return std::numeric_limits<int8_t>::min();
    case Dtype::kS32: return std::numeric_limits<int32_t>::min();
    case Dtype::kU8:
    case Dtype::kPred:
      return 0;
    case Dtype::kBf16:
    case Dtype::kF16:
    case Dtype::kF32:
      break;
  }
  throw hlo::Error(std::string("no integer range for dtype ") +
                   std::string(systolic::DtypeName(dtype)));
}

int64_t IntMax(Dtype dtype) {
  switch (dtype) {
    case Dtype::kS8: return std::numeric_limits<int8_t>::max();
    case Dtype::kU8: return std::numeric_limits<uint8_t>::max();
    case Dtype::kS32: return std::numeric_limits<int32_t>::max();
    case Dtype::kPred: return 1;
    case Dtype::kBf16:
    case Dtype::kF16:
    case Dtype::kF32:
      break;
  }
  throw hlo::Error(std::string("no integer range for dtype ") +
                   std::string(systolic::DtypeName(dtype)));
}

uint32_t LoadBits(Dtype dtype, const uint8_t* element) {
  switch (ElementBytes(dtype)) {
    case 1: return LoadLittleEndian<1>(element);
    case 2: return LoadLittleEndian<2>(element);
    default: return LoadLittleEndian<4>(element);
  }
}

void StoreBits(Dtype dtype, uint8_t* element, uint32_t bits) {
  switch (ElementBytes(dtype)) {
    case 1: return StoreLittleEndian<1>(element, bits);
    case 2: return StoreLittleEndian<2>(element, bits);
    default: return StoreLittleEndian<4>(element, bits);
  }
}

void LoadBitsArray(Dtype dtype, const uint8_t* elements, int64_t count, uint32_t* out) {
  switch (ElementBytes(dtype)) {
    case 1: return LoadArray<1>(elements, count, out);
    case 2: return LoadArray<2>(elements, count, out);
    default: return LoadArray<4>(elements, count, out);
  }
}

void StoreBitsArray(Dtype dtype, uint8_t* elements, int64_t count, const uint32_t* bits) {
  switch (ElementBytes(dtype)) {
    case 1: return StoreArray<1>(elements, count, bits);
    case 2: return StoreArray<2>(elements, count, bits);
    default: return StoreArray<4>(elements, count, bits);
  }
}

int64_t LoadInt(Dtype dtype, const uint8_t* element) {
  uint32_t bits = LoadBits(dtype, element);
  switch (dtype) {
    case Dtype::kS8: return static_cast<int8_t>(bits);
    case Dtype::kU8: return static_cast<uint8_t>(bits);
    case Dtype::kS32: return static_cast<int32_t>(bits);
    case Dtype::kPred: return bits != 0;
    case Dtype::kBf16:
    case Dtype::kF16:
    case Dtype::kF32:
      break;
  }
  throw hlo::Error(std::string("dtype ") + std::string(systolic::DtypeName(dtype)) +
                   " is not an integer type");
}

void StoreIntWrapping(Dtype dtype, uint8_t* element, int64_t value) {
  if (dtype == Dtype::kPred) value = value != 0;
  StoreBits(dtype, element, static_cast<uint32_t>(static_cast<uint64_t>(value)));
}

void StoreIntSaturating(Dtype dtype, uint8_t* element, int64_t value) {
  if (dtype == Dtype::kPred) value = value != 0;
  if (value < IntMin(dtype)) value = IntMin(dtype);
  if (value > IntMax(dtype)) value = IntMax(dtype);
  StoreIntWrapping(dtype, element, value);
}

float Bf16BitsToFloat(uint16_t bits) { return hlo::BF16ToFloat(bits); }
uint16_t FloatToBf16Bits(float value) { return hlo::FloatToBF16(value); }

float LoadFloat(Dtype dtype, const uint8_t* element) {
  uint32_t bits = LoadBits(dtype, element);
  switch (dtype) {
    case Dtype::kBf16: return hlo::BF16ToFloat(static_cast<uint16_t>(bits));
    case Dtype::kF16: return hlo::F16ToFloat(static_cast<uint16_t>(bits));
    case Dtype::kF32: return std::bit_cast<float>(bits);
    case Dtype::kS8:
    case Dtype::kU8:
    case Dtype::kS32:
    case Dtype::kPred:
      break;
  }
  throw hlo::Error(std::string("dtype ") + std::string(systolic::DtypeName(dtype)) +
                   " is not a float type");
}

void StoreFloat(Dtype dtype, uint8_t* element, float value) {
  switch (dtype) {
    case Dtype::kBf16: StoreBits(dtype, element, hlo::FloatToBF16(value)); return;
    case Dtype::kF16: StoreBits(dtype, element, hlo::FloatToF16(value)); return;
    case Dtype::kF32: StoreBits(dtype, element, std::bit_cast<uint32_t>(value)); return;
    case Dtype::kS8:
    case Dtype::kU8:
    case Dtype::kS32:
    case Dtype::kPred:
      break;
  }
  throw hlo::Error(std::string("dtype ") + std::string(systolic::DtypeName(dtype)) +
                   " is not a float type");
}

double LoadAsDouble(Dtype dtype, const uint8_t* element) {
  if (IsFloatDtype(dtype)) return LoadFloat(dtype, element);
  return static_cast<double>(LoadInt(dtype, element));
}

void StoreDoubleAsFloat(Dtype dtype, uint8_t* element, double value) {
  // f32: one rounding of the double. bf16/f16: round-to-odd to f32, then nearest even (exact).
  float narrowed = dtype == Dtype::kF32 ? static_cast<float>(value) : RoundToOddFloat(value);
  StoreFloat(dtype, element, narrowed);
}

int64_t RoundToIntSaturating(Dtype dtype, double value) {
  if (std::isnan(value)) return 0;
  double rounded = std::nearbyint(value);  // default rounding mode: nearest, ties to even
  if (rounded <= static_cast<double>(IntMin(dtype))) return IntMin(dtype);
  if (rounded >= static_cast<double>(IntMax(dtype))) return IntMax(dtype);
  return static_cast<int64_t>(rounded);
}

}  // namespace simulator

// Element encodings of the accelerator's dtypes (isa.def's ISA_DTYPE rows) and the conversions
// the vector unit and the matrix unit perform: loading an element as a wide value, storing a wide
// value back with the ISA's rounding/wrapping/saturation rules.
//
// Guarantees:
//   - Elements are little-endian, DtypeBytes(dtype) bytes each (docs/isa.md "Data layout").
//   - Float -> bf16/f16 rounds to nearest even with NaN kept NaN, using hlo/literal.h's
//     conversions, so the simulator rounds exactly as the reference interpreter does.
//   - Any value -> float dtype rounds ONCE to nearest even (integers go through an exact
//     double and a round-to-odd float step, so s32 -> bf16 is not double-rounded).
//   - Float -> integer rounds to nearest even, saturates at the type's bounds, NaN -> 0.
//   - Integer -> integer saturates (vcvt); integer arithmetic results wrap (StoreIntWrapping).
//   - pred is one byte 0 or 1; converting to pred is `!= 0` (NaN != 0 is true), as in HLO.
#pragma once

#include <cstdint>

#include "simulator/isa/isa.h"

namespace simulator {

bool IsFloatDtype(systolic::Dtype dtype);    // bf16, f16, f32
bool IsIntegerDtype(systolic::Dtype dtype);  // s8, u8, s32 (not pred)
int64_t IntMin(systolic::Dtype dtype);       // integer dtypes (and pred: 0)
int64_t IntMax(systolic::Dtype dtype);       // integer dtypes (and pred: 1)

// Raw little-endian bit pattern of one element (zero-extended).
uint32_t LoadBits(systolic::Dtype dtype, const uint8_t* element);
void StoreBits(systolic::Dtype dtype, uint8_t* element, uint32_t bits);
// The same for `count` consecutive elements: out[i] = LoadBits(dtype, elements + i * bytes), and
// StoreBits of bits[i] likewise -- one dtype dispatch per call instead of per element (the
// functional model's hot loops).
void LoadBitsArray(systolic::Dtype dtype, const uint8_t* elements, int64_t count, uint32_t* out);
void StoreBitsArray(systolic::Dtype dtype, uint8_t* elements, int64_t count, const uint32_t* bits);

// Integer (and pred) elements as int64: sign- or zero-extended.
int64_t LoadInt(systolic::Dtype dtype, const uint8_t* element);
// Stores the low bits of `value` (two's-complement wrap). pred stores `value != 0`.
void StoreIntWrapping(systolic::Dtype dtype, uint8_t* element, int64_t value);
// Clamps to [IntMin, IntMax] first (pred: `value != 0`).
void StoreIntSaturating(systolic::Dtype dtype, uint8_t* element, int64_t value);

// Float elements as f32 (bf16/f16 widen exactly).
float LoadFloat(systolic::Dtype dtype, const uint8_t* element);
// f32 stores as is; bf16/f16 round to nearest even.
void StoreFloat(systolic::Dtype dtype, uint8_t* element, float value);

// Any element (integer, pred or float) as an exact double.
double LoadAsDouble(systolic::Dtype dtype, const uint8_t* element);
// Stores an exact double into a FLOAT dtype with a single round to nearest even.
void StoreDoubleAsFloat(systolic::Dtype dtype, uint8_t* element, double value);

// Float -> integer: round half to even, saturate to [IntMin, IntMax], NaN -> 0.
int64_t RoundToIntSaturating(systolic::Dtype dtype, double value);

// bf16 <-> f32 (hlo/literal.h's rounding).
float Bf16BitsToFloat(uint16_t bits);
uint16_t FloatToBf16Bits(float value);

}  // namespace simulator

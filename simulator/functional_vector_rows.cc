// The vector unit's row operations (functional.h) over a row-major rows x cols matrix:
//   vredsum  dst[r] = src[r][0] + src[r][1] + ... in order of increasing c, in dtype arithmetic
//            (integers wrap; bf16/f16 round to their type after every addition, as an HLO reduce
//            in that type does). Starting from src[r][0] keeps a row of -0 at -0.
//   vredmax  dst[r] = max over c, NaN-propagating, -0 < +0.
//   vbcast   dst[r][c] = per_row ? src[r] : src[c].
//   vtrans   dst[c][r] = src[r][c]; the source and the destination must not overlap.
//   vbitonic one compare-exchange stage of a bitonic sort, in place. Keys compare in their
//            total order (floats: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, by the
//            sign-magnitude of their bits), reversed when descending; equal keys by payload.
// cols must be at least 1 for the reductions (an empty max has no value).
#include <algorithm>
#include <cstring>
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/functional_vector_internal.h"

namespace simulator::vector_internal {
namespace {

using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

void Reduce(const Instruction& inst, Memories& memories) {
  using F = systolic::VRedSumField;  // vredmax shares the layout
  static_assert(static_cast<int>(systolic::VRedMaxField::dtype) == static_cast<int>(F::dtype));
  const auto field = [&](F f) { return inst.fields[static_cast<size_t>(f)]; };
  const Dtype dtype = CheckedDtype(inst, field(F::dtype), DtypeClass::kNumeric);
  const int64_t rows = static_cast<int64_t>(field(F::rows));
  const int64_t cols = static_cast<int64_t>(field(F::cols));
  if (cols < 1 && rows > 0) throw hlo::Error(Mnemonic(inst) + ": cols must be at least 1");
  const bool sum = inst.opcode == Opcode::kVRedSum;
  const int bytes = systolic::DtypeBytes(dtype);
  std::vector<uint8_t> result(static_cast<size_t>(rows * bytes));
  for (int64_t r = 0; r < rows; ++r) {  // one row at a time: host memory O(cols)
    const std::vector<uint8_t> row =
        ReadOperand(memories, AdvanceAddress(field(F::src), r * cols * bytes), cols, dtype);
    uint8_t* out = &result[r * bytes];
    std::copy(row.begin(), row.begin() + bytes, out);  // the first element
    for (int64_t c = 1; c < cols; ++c) {
      const uint8_t* x = &row[c * bytes];
      if (IsFloatDtype(dtype)) {
        const float acc = LoadFloat(dtype, out), value = LoadFloat(dtype, x);
        StoreFloat(dtype, out, sum ? acc + value : FloatMax(acc, value));
      } else {
        const int64_t acc = LoadInt(dtype, out), value = LoadInt(dtype, x);
        StoreIntWrapping(dtype, out, sum ? acc + value : std::max(acc, value));
      }
    }
  }
  std::span<uint8_t> out = WriteOperand(memories, field(F::dst), rows, dtype);
  std::copy(result.begin(), result.end(), out.begin());
}

void Broadcast(const Instruction& inst, Memories& memories) {
  using F = systolic::VBcastField;
  const Dtype dtype = CheckedDtype(inst, inst.get(F::dtype), DtypeClass::kAny);
  const int64_t rows = static_cast<int64_t>(inst.get(F::rows));
  const int64_t cols = static_cast<int64_t>(inst.get(F::cols));
  const bool per_row = inst.get(F::per_row) != 0;
  const std::vector<uint8_t> src =
      ReadOperand(memories, inst.get(F::src), per_row ? rows : cols, dtype);
  const int bytes = systolic::DtypeBytes(dtype);
  for (int64_t r = 0; r < rows; ++r) {  // row by row: the destination may be large
    std::span<uint8_t> out = WriteOperand(
        memories, AdvanceAddress(inst.get(F::dst), r * cols * bytes), cols, dtype);
    if (!per_row) {  // every row is the whole source vector
      std::copy(src.begin(), src.end(), out.begin());
      continue;
    }
    if (cols == 0) continue;
    // cols copies of element r: the first, then doubling copies of what is already filled.
    std::copy(&src[r * bytes], &src[r * bytes] + bytes, out.begin());
    for (size_t filled = static_cast<size_t>(bytes); filled < out.size(); filled *= 2) {
      std::memcpy(out.data() + filled, out.data(), std::min(filled, out.size() - filled));
    }
  }
}

void Transpose(const Instruction& inst, Memories& memories) {
  using F = systolic::VTransField;
  const Dtype dtype = CheckedDtype(inst, inst.get(F::dtype), DtypeClass::kAny);
  const int64_t rows = static_cast<int64_t>(inst.get(F::rows));
  const int64_t cols = static_cast<int64_t>(inst.get(F::cols));
  const int bytes = systolic::DtypeBytes(dtype);
  const uint64_t src = inst.get(F::src), dst = inst.get(F::dst);
  const auto size = static_cast<uint64_t>(rows * cols * bytes);
  if (size > 0 && (src & systolic::kAccumulatorBit) == (dst & systolic::kAccumulatorBit) &&
      src < dst + size && dst < src + size) {
    throw hlo::Error(Mnemonic(inst) + ": the source and the destination overlap");
  }
  const std::vector<uint8_t> in = ReadOperand(memories, src, rows * cols, dtype);
  std::span<uint8_t> out = WriteOperand(memories, dst, rows * cols, dtype);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      std::memcpy(&out[static_cast<size_t>((c * rows + r) * bytes)],
                  &in[static_cast<size_t>((r * cols + c) * bytes)], static_cast<size_t>(bytes));
    }
  }
}

// A key's position in the total order, as a signed integer: floats by their bits (negative
// ones reversed), integers as they are.
int64_t TotalOrderKey(Dtype dtype, const uint8_t* element) {
  if (!IsFloatDtype(dtype)) return LoadInt(dtype, element);
  const int bits = systolic::DtypeBytes(dtype) * 8;
  uint64_t raw = 0;
  std::memcpy(&raw, element, static_cast<size_t>(bits / 8));
  const uint64_t sign = uint64_t{1} << (bits - 1);
  const auto magnitude = static_cast<int64_t>(raw & (sign - 1));
  return (raw & sign) != 0 ? -magnitude - 1 : magnitude;
}

void Bitonic(const Instruction& inst, Memories& memories) {
  using F = systolic::VBitonicField;
  const Dtype dtype = CheckedDtype(inst, inst.get(F::dtype), DtypeClass::kNumeric);
  const auto count = static_cast<int64_t>(inst.get(F::count));
  const uint64_t k = inst.get(F::k), j = inst.get(F::j);
  if (count == 0 || (count & (count - 1)) != 0 || k == 0 || j >= k || (int64_t{1} << k) > count) {
    throw hlo::Error(Mnemonic(inst) + ": count " + std::to_string(count) + ", k " +
                     std::to_string(k) + ", j " + std::to_string(j) +
                     " is not a stage of a power-of-two sort");
  }
  const bool descending = inst.get(F::descending) != 0;
  const bool has_payload = inst.get(F::has_payload) != 0;
  const int bytes = systolic::DtypeBytes(dtype);
  std::vector<uint8_t> keys = ReadOperand(memories, inst.get(F::keys), count, dtype);
  std::vector<uint8_t> payload;
  if (has_payload) payload = ReadOperand(memories, inst.get(F::payload), count, Dtype::kS32);
  const int64_t block = int64_t{1} << k, distance = int64_t{1} << j;
  auto before = [&](int64_t a, int64_t b) {  // whether element a belongs before element b
    const int64_t ka = TotalOrderKey(dtype, &keys[static_cast<size_t>(a * bytes)]);
    const int64_t kb = TotalOrderKey(dtype, &keys[static_cast<size_t>(b * bytes)]);
    if (ka != kb) return descending ? ka > kb : ka < kb;
    if (!has_payload) return false;
    return LoadInt(Dtype::kS32, &payload[static_cast<size_t>(a * 4)]) <
           LoadInt(Dtype::kS32, &payload[static_cast<size_t>(b * 4)]);
  };
  for (int64_t i = 0; i < count; ++i) {
    if ((i & distance) != 0) continue;
    const int64_t p = i + distance;
    const bool up = (i & block) == 0;
    if (up ? before(p, i) : before(i, p)) {
      std::swap_ranges(&keys[static_cast<size_t>(i * bytes)],
                       &keys[static_cast<size_t>((i + 1) * bytes)],
                       &keys[static_cast<size_t>(p * bytes)]);
      if (has_payload) {
        std::swap_ranges(&payload[static_cast<size_t>(i * 4)],
                         &payload[static_cast<size_t>(i * 4 + 4)],
                         &payload[static_cast<size_t>(p * 4)]);
      }
    }
  }
  std::span<uint8_t> out = WriteOperand(memories, inst.get(F::keys), count, dtype);
  std::copy(keys.begin(), keys.end(), out.begin());
  if (has_payload) {
    std::span<uint8_t> moved = WriteOperand(memories, inst.get(F::payload), count, Dtype::kS32);
    std::copy(payload.begin(), payload.end(), moved.begin());
  }
}

}  // namespace

void ExecuteBitonic(const Instruction& inst, Memories& memories) { Bitonic(inst, memories); }

void ExecuteTranspose(const Instruction& inst, Memories& memories) { Transpose(inst, memories); }

void ExecuteReduce(const Instruction& inst, Memories& memories) { Reduce(inst, memories); }
void ExecuteBroadcast(const Instruction& inst, Memories& memories) { Broadcast(inst, memories); }

}  // namespace simulator::vector_internal

// Helpers shared by the reduction and contraction families of the evaluator
// (evaluator_reduction.cc, evaluator_window.cc, evaluator_scatter.cc, evaluator_sort.cc,
// evaluator_contraction.cc, evaluator_convolution.cc, evaluator_batch_norm.cc).
//
// Guarantees: element access is by row-major linear index on the typed storage of a Literal;
// arithmetic follows ir.h (bf16/f16 computed in f32 and rounded when stored, integers wrap,
// maximum/minimum propagate NaN). Buffers allocated here are at most the size of the literals
// they are built from.
// Not part of hlo/'s public API.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "hlo/binary_body.h"
#include "hlo/evaluator_internal.h"
#include "hlo/evaluator_types.h"

// Everything lives in hlo::eval::rc (reduction/contraction) so these helpers cannot collide with
// the other family files' internal helpers.
namespace hlo::eval::rc {

// Throws at the instruction's location. The evaluator core prefixes the instruction's name and
// opcode when the error passes through it, so the message names only the problem.
[[noreturn]] inline void Fail(const Instruction& inst, const std::string& message) {
  throw Error(inst.location(), message);
}
inline void Require(bool condition, const Instruction& inst, const std::string& message) {
  if (!condition) Fail(inst, message);
}

// A fresh zero-filled value of the instruction's result shape (allocation limits checked).
inline Literal NewResult(const Instruction& inst) {
  try {
    return Literal(inst.shape());
  } catch (const Error& e) {
    Fail(inst, e.message());
  }
}

// Storage <-> computation type. bf16/f16 compute in float and round to nearest even on Store;
// pred is stored as one byte 0/1 (read as uint8_t to avoid bool traps on bad bytes).
struct BF16Tag {};
struct F16Tag {};
template <typename Tag>
struct Arith {
  using Storage = Tag;
  using Compute = Tag;
  static Compute Load(Storage s) { return s; }
  static Storage Store(Compute c) { return c; }
};
template <>
struct Arith<BF16Tag> {
  using Storage = uint16_t;
  using Compute = float;
  // Inline widening (bf16 is the top half of an f32): hot in dot/conv operand packing.
  static float Load(uint16_t s) { return std::bit_cast<float>(static_cast<uint32_t>(s) << 16); }
  static uint16_t Store(float c) { return FloatToBF16(c); }
};
template <>
struct Arith<F16Tag> {
  using Storage = uint16_t;
  using Compute = float;
  static float Load(uint16_t s) { return F16ToFloat(s); }
  static uint16_t Store(float c) { return FloatToF16(c); }
};
// Types whose storage is not their compute type (s4/u4 wrap on store, the minifloats round):
// their ElementTraits (evaluator_types.h) do the work.
template <PrimitiveType P>
struct TraitsTag {};
template <PrimitiveType P>
struct Arith<TraitsTag<P>> {
  using Storage = typename ElementTraits<P>::Storage;
  using Compute = typename ElementTraits<P>::Compute;
  static Compute Load(Storage s) { return ElementTraits<P>::Load(s); }
  static Storage Store(Compute c) { return ElementTraits<P>::Store(c); }
};
struct PredTag {};
template <>
struct Arith<PredTag> {
  using Storage = uint8_t;
  using Compute = uint8_t;
  static uint8_t Load(uint8_t s) { return s != 0; }
  static uint8_t Store(uint8_t c) { return c != 0; }
};

// Calls fn(Tag{}) with the Arith tag of an array element type; throws on tuple/token.
template <typename Fn>
decltype(auto) VisitArrayType(PrimitiveType type, const Instruction& inst, Fn&& fn) {
  switch (type) {
    case PrimitiveType::kPred:
      return fn(PredTag{});
    case PrimitiveType::kS8:
      return fn(int8_t{});
    case PrimitiveType::kS16:
      return fn(int16_t{});
    case PrimitiveType::kS32:
      return fn(int32_t{});
    case PrimitiveType::kS64:
      return fn(int64_t{});
    case PrimitiveType::kU8:
      return fn(uint8_t{});
    case PrimitiveType::kU16:
      return fn(uint16_t{});
    case PrimitiveType::kU32:
      return fn(uint32_t{});
    case PrimitiveType::kU64:
      return fn(uint64_t{});
    case PrimitiveType::kF16:
      return fn(F16Tag{});
    case PrimitiveType::kBF16:
      return fn(BF16Tag{});
    case PrimitiveType::kF32:
      return fn(float{});
    case PrimitiveType::kF64:
      return fn(double{});
    case PrimitiveType::kS4: return fn(TraitsTag<PrimitiveType::kS4>{});
    case PrimitiveType::kU4: return fn(TraitsTag<PrimitiveType::kU4>{});
    case PrimitiveType::kF8E5M2: return fn(TraitsTag<PrimitiveType::kF8E5M2>{});
    case PrimitiveType::kF8E4M3FN: return fn(TraitsTag<PrimitiveType::kF8E4M3FN>{});
    case PrimitiveType::kF8E4M3B11FNUZ: return fn(TraitsTag<PrimitiveType::kF8E4M3B11FNUZ>{});
    case PrimitiveType::kF8E5M2FNUZ: return fn(TraitsTag<PrimitiveType::kF8E5M2FNUZ>{});
    case PrimitiveType::kF8E4M3FNUZ: return fn(TraitsTag<PrimitiveType::kF8E4M3FNUZ>{});
    case PrimitiveType::kF8E4M3: return fn(TraitsTag<PrimitiveType::kF8E4M3>{});
    case PrimitiveType::kF8E3M4: return fn(TraitsTag<PrimitiveType::kF8E3M4>{});
    case PrimitiveType::kF4E2M1FN: return fn(TraitsTag<PrimitiveType::kF4E2M1FN>{});
    case PrimitiveType::kF8E8M0FNU: return fn(TraitsTag<PrimitiveType::kF8E8M0FNU>{});
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
      Fail(inst, "is not defined for complex element type " + std::string(PrimitiveTypeName(type)));
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken:
      break;
  }
  Fail(inst, "expected an array element type, got " + std::string(PrimitiveTypeName(type)));
}

// BinaryKind, RecognizeBinaryBody and Combine: hlo/binary_body.h (public: backends recognize
// reducers the same way).
using hlo::BinaryKind;
using hlo::Combine;
using hlo::RecognizeBinaryBody;

// Recognizes a comparator `compare(param0, param1), direction=LT|GT` (also GE/LE for
// select-and-scatter's select). Returns the attrs when it matches.
std::optional<CompareAttrs> RecognizeCompareBody(const Computation& computation,
                                                 PrimitiveType type);

// Combine in the compute type of an Arith tag. pred: add/maximum are logical or,
// multiply/minimum logical and (as XLA's elementwise ops on pred).
template <typename Tag>
typename Arith<Tag>::Compute CombineAs(BinaryKind kind, typename Arith<Tag>::Compute a,
                                       typename Arith<Tag>::Compute b) {
  if constexpr (std::is_same_v<Tag, PredTag>) {
    switch (kind) {
      case BinaryKind::kAdd:
      case BinaryKind::kOr:
      case BinaryKind::kMaximum:
        return static_cast<uint8_t>(a | b);
      case BinaryKind::kMultiply:
      case BinaryKind::kAnd:
      case BinaryKind::kMinimum:
        return static_cast<uint8_t>(a & b);
    }
    return a;
  } else {
    return Combine(kind, a, b);
  }
}

// acc[e] = kind(acc[e], in[e]) for every element, on the typed storage of their (equal) array
// type: a map or a cross-device reduction whose body RecognizeBinaryBody recognized.
inline void CombineInto(BinaryKind kind, const Instruction& inst, Literal& acc,
                        const Literal& in) {
  VisitArrayType(acc.shape().type, inst, [&](auto tag) {
    using A = Arith<decltype(tag)>;
    using S = typename A::Storage;
    auto out = acc.mutable_data<S>();
    auto other = in.data<S>();
    for (size_t e = 0; e < out.size(); ++e) {
      out[e] = A::Store(CombineAs<decltype(tag)>(kind, A::Load(out[e]), A::Load(other[e])));
    }
  });
}

// a * b + c, or an error when the window arithmetic of bad attributes would overflow int64.
inline int64_t CheckedMulAdd(int64_t a, int64_t b, int64_t c, const Instruction& inst) {
  int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum)) {
    Fail(inst, "window attributes are too large (int64 overflow)");
  }
  return sum;
}

// Output size along one windowed dimension (reduce-window, select-and-scatter, convolution):
// the padded, base-dilated input holds floor((padded - extent) / stride) + 1 windows, where
// extent is the window-dilated window size. Checks attributes and overflow.
inline int64_t WindowOutputSize(const WindowDim& w, int64_t input_size, const Instruction& inst) {
  Require(w.size >= 0 && w.stride >= 1 && w.base_dilation >= 1 && w.window_dilation >= 1, inst,
          "window strides and dilations must be positive and sizes non-negative");
  const int64_t dilated =
      input_size == 0 ? 0 : CheckedMulAdd(input_size - 1, w.base_dilation, 1, inst);
  const int64_t padded =
      CheckedMulAdd(1, CheckedMulAdd(1, dilated, w.pad_lo, inst), w.pad_hi, inst);
  const int64_t extent = w.size == 0 ? 0 : CheckedMulAdd(w.size - 1, w.window_dilation, 1, inst);
  const int64_t windows = padded < extent ? 0 : (padded - extent) / w.stride + 1;
  // Every position touched below is o * stride + k * window_dilation - pad_lo: make sure the
  // largest one is representable too.
  if (windows > 0) CheckedMulAdd(windows - 1, w.stride, extent, inst);
  return windows;
}

// Calls fn(k, i) for each window position k (increasing) of the window starting at padded
// position `start` (= o * stride - pad_lo) that lands on a real input element i rather than on
// padding or a base-dilation hole. Work is bounded by min(window size, input size), so a huge
// window attribute cannot make this loop long.
template <typename Fn>
void ForEachWindowTap(const WindowDim& w, int64_t start, int64_t input_size, Fn&& fn) {
  if (input_size <= 0 || w.size <= 0) return;
  const int64_t last = (input_size - 1) * w.base_dilation;  // last real padded position + lo
  const int64_t wd = w.window_dilation, bd = w.base_dilation;
  const int64_t k_lo = start >= 0 ? 0 : (-start + wd - 1) / wd;
  if (last < start) return;
  const int64_t k_hi = std::min(w.size - 1, (last - start) / wd);
  if (k_lo > k_hi) return;
  if (k_hi - k_lo + 1 <= input_size) {
    for (int64_t k = k_lo; k <= k_hi; ++k) {
      const int64_t p = start + k * wd;
      if (p % bd == 0) fn(k, p / bd);
    }
  } else {
    const int64_t p_lo = start + k_lo * wd, p_hi = start + k_hi * wd;
    for (int64_t i = (p_lo + bd - 1) / bd; i <= p_hi / bd; ++i) {
      const int64_t q = i * bd - start;
      if (q % wd == 0) fn(q / wd, i);
    }
  }
}

// True when `value` is a pred scalar; its value in `*out`. (Per-call checks of comparator
// results, kept cheap.)
inline bool ReadPredScalar(const Literal& value, bool* out) {
  if (!value.shape().IsArray() || value.shape().type != PrimitiveType::kPred ||
      value.element_count() != 1) {
    return false;
  }
  *out = value.bytes()[0] != 0;
  return true;
}

// Scalar literal holding element `index` of the array `array` (bytes copied, no conversion).
inline Literal ScalarAt(const Literal& array, int64_t index) {
  Literal scalar(Shape::Scalar(array.shape().type));
  const int64_t size = ByteSize(array.shape().type);
  std::memcpy(scalar.mutable_bytes().data(), array.bytes().data() + index * size,
              static_cast<size_t>(size));
  return scalar;
}
// Copies the scalar `scalar` into element `index` of `array`; the types must match.
inline void StoreScalar(Literal& array, int64_t index, const Literal& scalar,
                        const Instruction& inst) {
  // Checked per element: build the message only on failure.
  if (!scalar.shape().IsArray() || scalar.shape().type != array.shape().type ||
      scalar.element_count() != 1) {
    Fail(inst, "called computation returned " + scalar.shape().ToString(false) + ", expected a " +
                   std::string(PrimitiveTypeName(array.shape().type)) + " scalar");
  }
  const int64_t size = ByteSize(array.shape().type);
  std::memcpy(array.mutable_bytes().data() + index * size, scalar.bytes().data(),
              static_cast<size_t>(size));
}

// Splits the result of a called computation into `n` scalars (a tuple for n > 1 or a scalar).
std::vector<Literal> SplitResult(Literal result, int64_t n, const Instruction& inst);

// The array shapes of an instruction's result: itself, or the elements of a tuple result.
std::vector<Shape> ResultArrayShapes(const Instruction& inst);

// Visits the index space `dims` in row-major order with a second set of strides: calls
// fn(packed_linear, strided_offset) where strided_offset = sum(index[d] * strides[d]).
// The innermost dimension is a plain loop so callers' bodies stay cheap.
template <typename Fn>
void ForEachStrided(std::span<const int64_t> dims, std::span<const int64_t> strides, Fn&& fn) {
  const size_t rank = dims.size();
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  if (rank == 0) {
    fn(int64_t{0}, int64_t{0});
    return;
  }
  const int64_t inner = dims[rank - 1], inner_stride = strides[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  int64_t linear = 0, offset = 0;
  while (true) {
    for (int64_t j = 0; j < inner; ++j) fn(linear + j, offset + j * inner_stride);
    linear += inner;
    size_t k = rank - 1;
    while (k > 0) {
      --k;
      offset += strides[k];
      if (++index[k] < dims[k]) break;
      offset -= strides[k] * dims[k];
      index[k] = 0;
      if (k == 0) return;
    }
    if (rank == 1) return;
  }
}

// Converts `src` to a dense row-major buffer of accumulator type Acc with its dimensions
// permuted: result dimension i is source dimension perm[i]. Floats load through their compute
// type; integers load sign- or zero-extended (into uint64 for wrapping integer accumulation).
template <typename Acc>
std::vector<Acc> PackPermuted(const Literal& src, std::span<const int64_t> perm,
                              const Instruction& inst) {
  const std::vector<int64_t> src_strides = RowMajorStrides(src.shape().dims);
  std::vector<int64_t> dims, strides;
  for (int64_t p : perm) {
    dims.push_back(src.shape().dims[p]);
    strides.push_back(src_strides[p]);
  }
  std::vector<Acc> out(static_cast<size_t>(src.element_count()));
  VisitArrayType(src.shape().type, inst, [&](auto tag) {
    using A = Arith<decltype(tag)>;
    using S = typename A::Storage;
    using C = typename A::Compute;
    if constexpr (std::is_integral_v<Acc> && std::is_floating_point_v<C>) {
      Fail(inst, "floating-point operands with an integer result are not supported");
    } else {
      const S* data = src.data<S>().data();
      ForEachStrided(dims, strides, [&](int64_t i, int64_t offset) {
        if constexpr (std::is_integral_v<Acc>) {
          // Sign-extend signed types, zero-extend unsigned ones, then wrap in Acc.
          using Wide = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
          out[static_cast<size_t>(i)] = static_cast<Acc>(static_cast<Wide>(A::Load(data[offset])));
        } else {
          out[static_cast<size_t>(i)] = static_cast<Acc>(A::Load(data[offset]));
        }
      });
    }
  });
  return out;
}

// Writes `packed` (row-major over dst dims permuted by `perm`) into `dst`, rounding once to
// the destination type (integers wrap).
template <typename Acc>
void UnpackPermuted(const std::vector<Acc>& packed, std::span<const int64_t> perm, Literal& dst,
                    const Instruction& inst) {
  const std::vector<int64_t> dst_strides = RowMajorStrides(dst.shape().dims);
  std::vector<int64_t> dims, strides;
  for (int64_t p : perm) {
    dims.push_back(dst.shape().dims[p]);
    strides.push_back(dst_strides[p]);
  }
  VisitArrayType(dst.shape().type, inst, [&](auto tag) {
    using A = Arith<decltype(tag)>;
    using S = typename A::Storage;
    using C = typename A::Compute;
    S* data = dst.mutable_data<S>().data();
    ForEachStrided(dims, strides, [&](int64_t i, int64_t offset) {
      data[offset] = A::Store(static_cast<C>(packed[static_cast<size_t>(i)]));
    });
  });
}

// The accumulator a contraction uses: f64 if any side is f64, f32 for the other floats, and
// wrapping 64-bit integers for integer results (exact modulo 2^bits of any narrower type).
enum class AccumulatorKind { kF32, kF64, kInt };
inline AccumulatorKind ChooseAccumulator(PrimitiveType result, PrimitiveType lhs,
                                         PrimitiveType rhs) {
  if (!IsFloating(result)) return AccumulatorKind::kInt;
  if (result == PrimitiveType::kF64 || lhs == PrimitiveType::kF64 || rhs == PrimitiveType::kF64) {
    return AccumulatorKind::kF64;
  }
  return AccumulatorKind::kF32;
}

}  // namespace hlo::eval::rc

#include "hlo/literal.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <new>
#include <vector>

#include "hlo/minifloat.h"

namespace hlo {

uint16_t FloatToBF16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040);  // keep quiet NaN
  uint32_t rounding_bias = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding_bias) >> 16);
}

float BF16ToFloat(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t FloatToF16(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  uint32_t sign = (f >> 16) & 0x8000;
  uint32_t abs = f & 0x7fffffff;
  if (abs > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00);  // NaN
  if (abs >= 0x47800000) {
    // >= 65536 before rounding -> inf (values in [65520, 65536) round to inf below too).
    return static_cast<uint16_t>(sign | 0x7c00);
  }
  if (abs < 0x38800000) {
    // Subnormal half (or zero): value = m * 2^-24. Round |x| * 2^24 to nearest even.
    float magnitude = std::bit_cast<float>(abs);
    float scaled = magnitude * 16777216.0f;  // exact: power-of-two scaling
    float rounded = std::nearbyint(scaled);  // default rounding mode: nearest even
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
  }
  // Normal: rebias exponent (127 -> 15), keep 10 mantissa bits with round to nearest even.
  uint32_t mantissa_odd = (abs >> 13) & 1;
  abs += 0xfff + mantissa_odd;
  abs -= (127 - 15) << 23;
  uint32_t half = abs >> 13;
  if (half >= 0x7c00) half = 0x7c00;  // rounded up into infinity
  return static_cast<uint16_t>(sign | half);
}

float F16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

void CheckAllocationLimit(const Shape& shape, const SourceLocation& loc) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) CheckAllocationLimit(element, loc);
    return;
  }
  if (!shape.IsArray()) return;
  const Limits& limits = GlobalLimits();
  int64_t count = shape.ElementCount();
  if (count < 0 || count > limits.max_elements_per_array) {
    throw Error(loc, "array " + shape.ToString(false) + " has too many elements (limit " +
                         std::to_string(limits.max_elements_per_array) + ")");
  }
  if (count * ByteSize(shape.type) > limits.max_bytes_per_allocation) {
    throw Error(loc, "array " + shape.ToString(false) + " needs more than " +
                         std::to_string(limits.max_bytes_per_allocation) +
                         " bytes (the allocation limit)");
  }
}

namespace {
std::atomic<int64_t> live_literal_bytes{0};
}  // namespace

int64_t LiveLiteralBytes() { return live_literal_bytes.load(std::memory_order_relaxed); }

namespace {

void ReserveLiteralBytes(int64_t bytes) {
  const int64_t budget = GlobalLimits().max_live_literal_bytes;
  const int64_t live = live_literal_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (live > budget) {
    live_literal_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    throw Error("memory budget exceeded: " + std::to_string(bytes) + " more bytes of values with " +
                std::to_string(live - bytes) + " live would pass the budget of " +
                std::to_string(budget) +
                " bytes (90 % of this machine's memory; hlo::GlobalLimits().max_live_literal_bytes)");
  }
}

// Freed blocks of at least kReusedBlockBytes, kept for the next allocation of exactly the same
// size. Bounded three ways: at most 1/16 of the literal budget (1 GiB at most) is held; live
// and kept bytes together stay within the budget (a block that would pass it is freed, and a
// reservation the budget refuses frees every kept block); and an allocation that finds no
// block of its size frees every kept block first — sizes that change from run to run gain
// nothing, and the kept blocks must not raise the resident set of a program whose memory is
// tight. Kept blocks are not live literal bytes.
class ReusableBlocks {
 public:
  void* Take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
        if (it->second != bytes) continue;
        void* block = it->first;
        blocks_.erase(it);
        held_ -= bytes;
        return block;
      }
    }
    Clear();
    return nullptr;
  }
  void Clear() {
    std::vector<std::pair<void*, size_t>> unused;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      unused.swap(blocks_);
      held_ = 0;
    }
    for (const auto& [block, size] : unused) ::operator delete(block, size);
  }
  bool Keep(void* block, size_t bytes) {
    const int64_t budget = GlobalLimits().max_live_literal_bytes;
    const size_t cap = static_cast<size_t>(std::min<int64_t>(int64_t{1} << 30, budget / 16));
    const int64_t live = live_literal_bytes.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_ + bytes > cap || live + static_cast<int64_t>(held_ + bytes) > budget) return false;
    try {
      blocks_.emplace_back(block, bytes);
    } catch (const std::bad_alloc&) {
      return false;  // the caller frees the block instead
    }
    held_ += bytes;
    return true;
  }
  size_t held() {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<void*, size_t>> blocks_;
  size_t held_ = 0;
};

// Never destroyed: literals with static storage may be freed after it would be.
ReusableBlocks& Reusable() {
  static ReusableBlocks* blocks = new ReusableBlocks;
  return *blocks;
}

}  // namespace

namespace detail {

void* AllocateLiteralBlock(size_t bytes) {
  try {
    ReserveLiteralBytes(static_cast<int64_t>(bytes));
  } catch (const Error&) {
    Reusable().Clear();  // memory is tight: nothing is kept beside the live values
    throw;
  }
  if (bytes >= kReusedBlockBytes) {
    if (void* block = Reusable().Take(bytes)) return block;
  }
  try {
    return ::operator new(bytes);
  } catch (...) {
    live_literal_bytes.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    throw;
  }
}

void FreeLiteralBlock(void* block, size_t bytes) noexcept {
  live_literal_bytes.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  if (block == nullptr) return;
  if (bytes >= kReusedBlockBytes && Reusable().Keep(block, bytes)) return;
  ::operator delete(block, bytes);
}

size_t ReusableLiteralBlockBytes() { return Reusable().held(); }

}  // namespace detail

Literal::Literal(const Shape& shape) : shape_(shape) {
  CheckAllocationLimit(shape);
  if (shape.IsTuple()) {
    elements_.reserve(shape.tuple_shapes.size());
    for (const Shape& element : shape.tuple_shapes) elements_.emplace_back(element);
  } else if (shape.IsArray()) {
    data_ = std::make_shared<LiteralBytes>(
        static_cast<size_t>(shape.ElementCount() * ByteSize(shape.type)), 0);
  }
}

Literal Literal::ForOverwrite(const Shape& shape) {
  if (!shape.IsArray()) return Literal(shape);
  CheckAllocationLimit(shape);
  Literal literal;
  literal.shape_ = shape;
  literal.data_ = std::make_shared<LiteralBytes>(
      static_cast<size_t>(shape.ElementCount() * ByteSize(shape.type)));
  return literal;
}

const LiteralBytes& Literal::Bytes() const {
  static const LiteralBytes* const kEmpty = new LiteralBytes();
  return data_ != nullptr ? *data_ : *kEmpty;
}

LiteralBytes& Literal::WritableBytes() {
  if (data_ == nullptr) {
    data_ = std::make_shared<LiteralBytes>();
  } else if (data_.use_count() > 1) {
    data_ = std::make_shared<LiteralBytes>(*data_);
  }
  return *data_;
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  Literal result;
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  result.shape_ = Shape::Tuple(std::move(shapes));
  result.elements_ = std::move(elements);
  return result;
}

namespace {
template <typename T>
T Load(const LiteralBytes& data, int64_t i) {
  T v;
  std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T>
void Store(LiteralBytes& data, int64_t i, T v) {
  std::memcpy(data.data() + i * sizeof(T), &v, sizeof(T));
}

// Float -> integer conversion as XLA does it: NaN -> 0, saturate at the type's bounds.
template <typename T>
T SaturatingCast(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
}  // namespace

double Literal::GetAsDouble(int64_t i) const {
  switch (shape_.type) {
    case PrimitiveType::kPred: return Bytes()[i] ? 1.0 : 0.0;
    case PrimitiveType::kS8: return Load<int8_t>(Bytes(), i);
    case PrimitiveType::kS16: return Load<int16_t>(Bytes(), i);
    case PrimitiveType::kS32: return Load<int32_t>(Bytes(), i);
    case PrimitiveType::kS64: return static_cast<double>(Load<int64_t>(Bytes(), i));
    case PrimitiveType::kU8: return Load<uint8_t>(Bytes(), i);
    case PrimitiveType::kU16: return Load<uint16_t>(Bytes(), i);
    case PrimitiveType::kU32: return Load<uint32_t>(Bytes(), i);
    case PrimitiveType::kU64: return static_cast<double>(Load<uint64_t>(Bytes(), i));
    case PrimitiveType::kF16: return F16ToFloat(Load<uint16_t>(Bytes(), i));
    case PrimitiveType::kBF16: return BF16ToFloat(Load<uint16_t>(Bytes(), i));
    case PrimitiveType::kF32: return Load<float>(Bytes(), i);
    case PrimitiveType::kF64: return Load<double>(Bytes(), i);
    case PrimitiveType::kS4: return Load<int8_t>(Bytes(), i);
    case PrimitiveType::kU4: return Load<uint8_t>(Bytes(), i);
    case PrimitiveType::kC64: return Load<float>(Bytes(), 2 * i);  // the real part
    case PrimitiveType::kC128: return Load<double>(Bytes(), 2 * i);
    RETARGET_MINIFLOAT_CASES:
      return MinifloatToDouble(*MinifloatFormatOf(shape_.type), Bytes()[i]);
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: break;
  }
  return 0.0;
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  switch (shape_.type) {
    case PrimitiveType::kC64: return {Load<float>(Bytes(), 2 * i), Load<float>(Bytes(), 2 * i + 1)};
    case PrimitiveType::kC128: return {Load<double>(Bytes(), 2 * i), Load<double>(Bytes(), 2 * i + 1)};
    default: return {GetAsDouble(i), 0.0};
  }
}

void Literal::SetComplex(int64_t i, std::complex<double> v) {
  LiteralBytes& out = WritableBytes();  // unshared once per call
  switch (shape_.type) {
    case PrimitiveType::kC64:
      Store(out, 2 * i, static_cast<float>(v.real()));
      Store(out, 2 * i + 1, static_cast<float>(v.imag()));
      return;
    case PrimitiveType::kC128:
      Store(out, 2 * i, v.real());
      Store(out, 2 * i + 1, v.imag());
      return;
    default: SetFromDouble(i, v.real()); return;
  }
}

void Literal::SetFromDouble(int64_t i, double v) {
  LiteralBytes& out = WritableBytes();  // unshared once per call
  switch (shape_.type) {
    case PrimitiveType::kPred: out[i] = v != 0.0; return;
    case PrimitiveType::kS8: Store(out, i, SaturatingCast<int8_t>(v)); return;
    case PrimitiveType::kS16: Store(out, i, SaturatingCast<int16_t>(v)); return;
    case PrimitiveType::kS32: Store(out, i, SaturatingCast<int32_t>(v)); return;
    case PrimitiveType::kS64: Store(out, i, SaturatingCast<int64_t>(v)); return;
    case PrimitiveType::kU8: Store(out, i, SaturatingCast<uint8_t>(v)); return;
    case PrimitiveType::kU16: Store(out, i, SaturatingCast<uint16_t>(v)); return;
    case PrimitiveType::kU32: Store(out, i, SaturatingCast<uint32_t>(v)); return;
    case PrimitiveType::kU64: Store(out, i, SaturatingCast<uint64_t>(v)); return;
    // Round through f32 first (as XLA converts f64 -> f32 -> bf16); double rounding is what
    // XLA's own convert does for f64 sources too.
    case PrimitiveType::kF16: Store(out, i, FloatToF16(static_cast<float>(v))); return;
    case PrimitiveType::kBF16: Store(out, i, FloatToBF16(static_cast<float>(v))); return;
    case PrimitiveType::kF32: Store(out, i, static_cast<float>(v)); return;
    case PrimitiveType::kF64: Store(out, i, v); return;
    // Saturated at the 4-bit bounds (NaN -> 0), as a float -> s4/u4 convert does.
    case PrimitiveType::kS4:
      Store(out, i, static_cast<int8_t>(std::clamp<int>(SaturatingCast<int8_t>(v), -8, 7)));
      return;
    case PrimitiveType::kU4:
      Store(out, i, static_cast<uint8_t>(std::min<int>(SaturatingCast<uint8_t>(v), 15)));
      return;
    case PrimitiveType::kC64:
    case PrimitiveType::kC128: SetComplex(i, {v, 0.0}); return;
    // Directly from f64: one rounding (XLA converts f64 -> f8 without an f32 step).
    RETARGET_MINIFLOAT_CASES:
      out[i] = DoubleToMinifloat(*MinifloatFormatOf(shape_.type), v);
      return;
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: return;
  }
}

int64_t Literal::GetAsInt64(int64_t i) const {
  switch (shape_.type) {
    case PrimitiveType::kS64: return Load<int64_t>(Bytes(), i);
    case PrimitiveType::kU64: return static_cast<int64_t>(Load<uint64_t>(Bytes(), i));
    default: {
      double v = GetAsDouble(i);
      return IsFloating(shape_.type) ? SaturatingCast<int64_t>(v) : static_cast<int64_t>(v);
    }
  }
}

void Literal::SetFromInt64(int64_t i, int64_t v) {
  LiteralBytes& out = WritableBytes();  // unshared once per call
  switch (shape_.type) {
    case PrimitiveType::kPred: out[i] = v != 0; return;
    // Integer to integer conversion wraps (two's complement truncation), as in XLA.
    case PrimitiveType::kS8: Store(out, i, static_cast<int8_t>(v)); return;
    case PrimitiveType::kS16: Store(out, i, static_cast<int16_t>(v)); return;
    case PrimitiveType::kS32: Store(out, i, static_cast<int32_t>(v)); return;
    case PrimitiveType::kS64: Store(out, i, v); return;
    case PrimitiveType::kU8: Store(out, i, static_cast<uint8_t>(v)); return;
    case PrimitiveType::kU16: Store(out, i, static_cast<uint16_t>(v)); return;
    case PrimitiveType::kU32: Store(out, i, static_cast<uint32_t>(v)); return;
    case PrimitiveType::kU64: Store(out, i, static_cast<uint64_t>(v)); return;
    case PrimitiveType::kS4: Store(out, i, WrapS4(static_cast<int8_t>(v))); return;
    case PrimitiveType::kU4: Store(out, i, WrapU4(static_cast<uint8_t>(v))); return;
    default: SetFromDouble(i, static_cast<double>(v)); return;
  }
}

bool Literal::BitwiseEqual(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (!elements_[i].BitwiseEqual(other.elements_[i])) return false;
    }
    return true;
  }
  return SharesBytesWith(other) || Bytes() == other.Bytes();
}

std::string Literal::ToString(int64_t max_elements) const {
  std::string out = shape_.ToString(false) + " {";
  if (IsTuple()) {
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out += ", ";
      out += elements_[i].ToString(max_elements);
    }
    return out + "}";
  }
  int64_t n = element_count();
  for (int64_t i = 0; i < n && i < max_elements; ++i) {
    if (i) out += ", ";
    if (IsComplex(shape_.type)) {
      char buf[64];
      const std::complex<double> v = GetComplex(i);
      std::snprintf(buf, sizeof(buf), "(%.9g, %.9g)", v.real(), v.imag());
      out += buf;
    } else if (IsFloating(shape_.type)) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.9g", GetAsDouble(i));
      out += buf;
    } else if (shape_.type == PrimitiveType::kU64) {
      out += std::to_string(static_cast<uint64_t>(GetAsInt64(i)));
    } else {
      out += std::to_string(GetAsInt64(i));
    }
  }
  if (n > max_elements) out += ", ...";
  return out + "}";
}

}  // namespace hlo

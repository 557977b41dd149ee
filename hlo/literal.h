// Literal: a concrete value of a Shape — the constants of a module and the values the interpreter
// computes.
//
// Array data is stored densely in *logical row-major order* (last dimension fastest) whatever the
// shape's layout says; layouts only matter to bitcast and to backends. bf16 and f16 elements are
// stored as their 16-bit patterns; pred as one byte 0/1.
//
// Copies share their array bytes until one of them writes (copy on write): a loop carry passed
// through a body, a tuple of parameters or a parameter returned as an output costs no memory,
// which is what lets an 11 GB model's weights live once. Every writer (mutable_bytes,
// mutable_data, the Set* functions) first makes the bytes its own. A span from mutable_* is
// valid until the literal is next copied or written through another literal; code that writes
// from several threads takes the span once, before it starts them.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/shape.h"

namespace hlo {

// Bytes of literal array data alive now, across the process (LiteralBytes counts them).
int64_t LiveLiteralBytes();

// The allocator of literal data: counts every byte against GlobalLimits().max_live_literal_bytes
// and throws hlo::Error naming the budget when an allocation would pass it.
template <typename T>
struct LiteralBytesAllocator {
  using value_type = T;
  LiteralBytesAllocator() = default;
  template <typename U>
  LiteralBytesAllocator(const LiteralBytesAllocator<U>&) {}
  T* allocate(size_t n);
  void deallocate(T* p, size_t n) noexcept;
  // Value-less construction default-initializes (bytes keep whatever the allocation held), so
  // LiteralBytes(n) does not write n zeros that a kernel overwrites next; LiteralBytes(n, 0)
  // zero-fills.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const LiteralBytesAllocator<U>&) const { return true; }
};
using LiteralBytes = std::vector<uint8_t, LiteralBytesAllocator<uint8_t>>;

namespace detail {
// A block of `bytes` for literal data, counted against the budget (throws hlo::Error when it
// would pass it). Freed blocks of at least kReusedBlockBytes are kept for the next allocation of
// the same size (bounded; see literal.cc): a model run again and again returns outputs of the
// same sizes, and memory fresh from the system costs a page fault per 4 KiB page on first
// touch — a 32 MiB result takes about as long to fault in as a softmax takes to compute it.
// Value-less LiteralBytes(n) therefore holds whatever the block held before, possibly an
// earlier run's result: code that allocates with Literal::ForOverwrite must write every byte
// (the backends' tests compare every element with the interpreter's).
void* AllocateLiteralBlock(size_t bytes);
void FreeLiteralBlock(void* block, size_t bytes) noexcept;
inline constexpr size_t kReusedBlockBytes = size_t{1} << 20;
// Bytes held by freed blocks waiting for reuse (for tests).
size_t ReusableLiteralBlockBytes();
}  // namespace detail

template <typename T>
T* LiteralBytesAllocator<T>::allocate(size_t n) {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  return static_cast<T*>(detail::AllocateLiteralBlock(n * sizeof(T)));
}
template <typename T>
void LiteralBytesAllocator<T>::deallocate(T* p, size_t n) noexcept {
  detail::FreeLiteralBlock(p, n * sizeof(T));
}

// bf16 / f16 conversions. To-16-bit conversions round to nearest even; NaN stays NaN (quiet).
uint16_t FloatToBF16(float value);
float BF16ToFloat(uint16_t bits);
uint16_t FloatToF16(float value);
float F16ToFloat(uint16_t bits);

// s4 / u4 values wrap to 4 bits (two's complement for s4), stored one per byte.
inline int8_t WrapS4(int8_t v) { return static_cast<int8_t>(static_cast<int8_t>(v << 4) >> 4); }
inline uint8_t WrapU4(uint8_t v) { return static_cast<uint8_t>(v & 0x0f); }

class Literal {
 public:
  Literal() = default;
  // Zero-initialized value of `shape`. Throws hlo::Error when the size exceeds GlobalLimits().
  explicit Literal(const Shape& shape);
  // A value of array `shape` whose bytes are not initialized: for a producer that writes every
  // byte next (a backend's result, a copy). Reading a byte before writing it is a defect.
  static Literal ForOverwrite(const Shape& shape);
  static Literal Tuple(std::vector<Literal> elements);

  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  bool IsTuple() const { return shape_.IsTuple(); }
  int64_t element_count() const { return shape_.IsArray() ? shape_.ElementCount() : 0; }

  std::span<const uint8_t> bytes() const { return Bytes(); }
  std::span<uint8_t> mutable_bytes() { return WritableBytes(); }
  template <typename T>
  std::span<const T> data() const {
    const LiteralBytes& bytes = Bytes();
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  template <typename T>
  std::span<T> mutable_data() {
    LiteralBytes& bytes = WritableBytes();
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  // Whether this literal's array bytes are the same memory as `other`'s (a copy not yet written).
  bool SharesBytesWith(const Literal& other) const {
    return data_ != nullptr && data_ == other.data_;
  }

  const std::vector<Literal>& elements() const { return elements_; }
  std::vector<Literal>& mutable_elements() { return elements_; }

  // Element `i` (row-major linear index) converted to/from double. Exact for every type except
  // 64-bit integers beyond 2^53 (use the typed data() for those). For complex types: the real
  // part (use GetComplex / SetComplex, which read and write both).
  double GetAsDouble(int64_t i) const;
  void SetFromDouble(int64_t i, double value);  // rounds/wraps as a convert would
  int64_t GetAsInt64(int64_t i) const;          // integers and pred; floats truncate
  void SetFromInt64(int64_t i, int64_t value);
  // Complex element `i`; other types read as (value, 0) and store the real part.
  std::complex<double> GetComplex(int64_t i) const;
  void SetComplex(int64_t i, std::complex<double> value);

  // Structural equality: same shape (ignoring layout) and bit-identical data.
  bool BitwiseEqual(const Literal& other) const;

  // Short human-readable form, e.g. "f32[2] {1, 2}" (at most `max_elements` values).
  std::string ToString(int64_t max_elements = 16) const;

 private:
  const LiteralBytes& Bytes() const;
  LiteralBytes& WritableBytes();  // unshared first: the bytes are this literal's alone

  Shape shape_;
  std::shared_ptr<LiteralBytes> data_;  // null for tuples, tokens and default literals
  std::vector<Literal> elements_;  // tuple elements
};

// Checks `shape` (recursively) against GlobalLimits(); throws hlo::Error(loc, ...) if too large.
void CheckAllocationLimit(const Shape& shape, const SourceLocation& loc = {});

}  // namespace hlo

// Layout-aware copies between literals and buffers (see buffers.h).
#include "targets/cpu/buffers.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>

#include "hlo/diagnostic.h"

namespace cpu {

int64_t ArrayByteSize(const hlo::Shape& shape) {
  return shape.ElementCount() * hlo::ByteSize(shape.type);
}

void CollectLeaves(const ValueLayout& value, std::vector<const ValueLayout*>& leaves) {
  if (!value.shape.IsTuple()) {
    leaves.push_back(&value);
    return;
  }
  for (const ValueLayout& element : value.elements) CollectLeaves(element, leaves);
}

void AlignedBytes::Free::operator()(uint8_t* p) const {
  if (mapped_bytes > 0) {
    munmap(p, mapped_bytes);
  } else {
    std::free(p);
  }
}

namespace {
// From this size on a buffer is its own anonymous mapping: the kernel hands out zero pages as
// they are first touched, so a buffer a run never writes (a loop's copy of a carry it reads in
// place) costs no memory, and a large one is not written twice (zeroed, then computed).
constexpr size_t kMappedFrom = size_t{1} << 20;
}  // namespace

AlignedBytes::AlignedBytes(int64_t size) : size_(size) {
  if (size < 0 || size > hlo::GlobalLimits().max_bytes_per_allocation)
    throw hlo::Error("cpu backend: buffer of " + std::to_string(size) +
                     " bytes exceeds the allocation limit");
  // aligned_alloc needs a multiple of the alignment; never ask for 0 bytes.
  size_t rounded = (static_cast<size_t>(size) + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  if (rounded >= kMappedFrom) {
    void* mapped = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    if (mapped == MAP_FAILED) throw hlo::Error("cpu backend: out of memory allocating a buffer");
    data_ = std::unique_ptr<uint8_t, Free>(static_cast<uint8_t*>(mapped), Free{rounded});
    return;
  }
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (p == nullptr) throw hlo::Error("cpu backend: out of memory allocating a buffer");
  std::memset(p, 0, rounded);
  data_.reset(p);
}

namespace {

// Element offset in physical memory of each logical dimension (stride per dim).
std::vector<int64_t> PhysicalStrides(const hlo::Shape& shape) {
  std::vector<int64_t> strides(shape.dims.size(), 1);
  int64_t stride = 1;
  for (int64_t dim : shape.EffectiveMinorToMajor()) {
    strides[static_cast<size_t>(dim)] = stride;
    stride *= shape.dims[static_cast<size_t>(dim)];
  }
  return strides;
}

// Walks every logical index in row-major order, calling copy(logical_linear, physical_linear).
template <typename Fn>
void ForEachIndex(const hlo::Shape& shape, Fn copy) {
  const int64_t count = shape.ElementCount();
  if (count == 0) return;
  std::vector<int64_t> strides = PhysicalStrides(shape);
  std::vector<int64_t> index(shape.dims.size(), 0);
  int64_t physical = 0;
  for (int64_t logical = 0; logical < count; ++logical) {
    copy(logical, physical);
    for (int64_t d = shape.rank() - 1; d >= 0; --d) {
      size_t ud = static_cast<size_t>(d);
      if (++index[ud] < shape.dims[ud]) {
        physical += strides[ud];
        break;
      }
      physical -= strides[ud] * (shape.dims[ud] - 1);
      index[ud] = 0;
    }
  }
}

}  // namespace

void LiteralToPhysical(const hlo::Literal& literal, const hlo::Shape& shape, uint8_t* dst) {
  const int64_t bytes = ArrayByteSize(shape);
  if (static_cast<int64_t>(literal.bytes().size()) != bytes)
    throw hlo::Error("cpu backend: argument of shape " + literal.shape().ToString(false) +
                     " does not match parameter shape " + shape.ToString(false));
  if (shape.HasDefaultLayout() || shape.rank() <= 1) {
    if (bytes > 0) std::memcpy(dst, literal.bytes().data(), static_cast<size_t>(bytes));
    return;
  }
  const int64_t element = hlo::ByteSize(shape.type);
  const uint8_t* src = literal.bytes().data();
  ForEachIndex(shape, [&](int64_t logical, int64_t physical) {
    std::memcpy(dst + physical * element, src + logical * element, static_cast<size_t>(element));
  });
}

hlo::Literal PhysicalToLiteral(const hlo::Shape& shape, const uint8_t* src) {
  hlo::Literal literal = hlo::Literal::ForOverwrite(shape);  // both branches copy every element
  uint8_t* dst = literal.mutable_bytes().data();
  const int64_t bytes = ArrayByteSize(shape);
  if (shape.HasDefaultLayout() || shape.rank() <= 1) {
    if (bytes > 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
    return literal;
  }
  const int64_t element = hlo::ByteSize(shape.type);
  ForEachIndex(shape, [&](int64_t logical, int64_t physical) {
    std::memcpy(dst + logical * element, src + physical * element, static_cast<size_t>(element));
  });
  return literal;
}

}  // namespace cpu

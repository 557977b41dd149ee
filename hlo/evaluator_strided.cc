// The strided element copy every data-movement op is built on (see evaluator_family.h).
//
// Guarantees: visits each index of `dims` exactly once, keeping source and destination offsets
// incrementally (no per-element index arithmetic). Dimensions that both sides traverse
// contiguously are merged first, so the innermost run is as long as possible: one memcpy when
// both sides are contiguous, a fill when the source stride is 0 (broadcast), else a typed
// strided loop. Callers have checked that every offset stays inside both buffers.
#include <cstring>
#include <vector>

#include "hlo/evaluator_family.h"

namespace hlo::eval {
namespace {

template <typename Word>
void CopyRun(uint8_t* dst, int64_t dst_offset, int64_t dst_stride, const uint8_t* src,
             int64_t src_offset, int64_t src_stride, int64_t count) {
  Word* d = reinterpret_cast<Word*>(dst) + dst_offset;
  const Word* s = reinterpret_cast<const Word*>(src) + src_offset;
  if (src_stride == 0) {
    const Word value = *s;
    for (int64_t i = 0; i < count; ++i) d[i * dst_stride] = value;
    return;
  }
  for (int64_t i = 0; i < count; ++i) d[i * dst_stride] = s[i * src_stride];
}

void CopyInnermost(uint8_t* dst, int64_t dst_offset, int64_t dst_stride, const uint8_t* src,
                   int64_t src_offset, int64_t src_stride, int64_t count, int64_t element_size) {
  if (dst_stride == 1 && src_stride == 1) {
    std::memcpy(dst + dst_offset * element_size, src + src_offset * element_size,
                static_cast<size_t>(count * element_size));
    return;
  }
  switch (element_size) {
    case 1: return CopyRun<uint8_t>(dst, dst_offset, dst_stride, src, src_offset, src_stride, count);
    case 2: return CopyRun<uint16_t>(dst, dst_offset, dst_stride, src, src_offset, src_stride, count);
    case 4: return CopyRun<uint32_t>(dst, dst_offset, dst_stride, src, src_offset, src_stride, count);
    case 8: return CopyRun<uint64_t>(dst, dst_offset, dst_stride, src, src_offset, src_stride, count);
    default:
      for (int64_t i = 0; i < count; ++i) {
        std::memcpy(dst + (dst_offset + i * dst_stride) * element_size,
                    src + (src_offset + i * src_stride) * element_size,
                    static_cast<size_t>(element_size));
      }
  }
}

}  // namespace

void StridedCopy(uint8_t* dst, int64_t dst_offset, std::span<const int64_t> dst_strides,
                 const uint8_t* src, int64_t src_offset, std::span<const int64_t> src_strides,
                 std::span<const int64_t> dims, int64_t element_size) {
  // Canonicalize: drop size-1 dimensions and merge a dimension into the next inner one when
  // both sides step over it contiguously, so e.g. a slice of whole rows becomes one memcpy.
  std::vector<int64_t> merged_dims, merged_dst, merged_src;
  merged_dims.reserve(dims.size());
  merged_dst.reserve(dims.size());
  merged_src.reserve(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] <= 0) return;  // nothing to copy
    if (dims[d] == 1) continue;
    if (!merged_dims.empty() && merged_dst.back() == dst_strides[d] * dims[d] &&
        merged_src.back() == src_strides[d] * dims[d]) {
      merged_dims.back() *= dims[d];
      merged_dst.back() = dst_strides[d];
      merged_src.back() = src_strides[d];
      continue;
    }
    merged_dims.push_back(dims[d]);
    merged_dst.push_back(dst_strides[d]);
    merged_src.push_back(src_strides[d]);
  }
  const size_t rank = merged_dims.size();
  if (rank == 0) {
    CopyInnermost(dst, dst_offset, 1, src, src_offset, 1, 1, element_size);
    return;
  }
  const size_t inner = rank - 1;
  std::vector<int64_t> index(rank, 0);
  int64_t d_off = dst_offset;
  int64_t s_off = src_offset;
  while (true) {
    CopyInnermost(dst, d_off, merged_dst[inner], src, s_off, merged_src[inner],
                  merged_dims[inner], element_size);
    // Advance the outer dimensions like an odometer, updating both offsets incrementally.
    size_t k = inner;
    while (k-- > 0) {
      d_off += merged_dst[k];
      s_off += merged_src[k];
      if (++index[k] < merged_dims[k]) break;
      d_off -= merged_dst[k] * merged_dims[k];
      s_off -= merged_src[k] * merged_dims[k];
      index[k] = 0;
      if (k == 0) return;
    }
    if (inner == 0) return;
  }
}

}  // namespace hlo::eval

// Buffers of the CPU backend's runtime: where each value of a compiled computation lives, and
// conversion between hlo::Literal (logical row-major) and a buffer (physical, per the shape's
// layout: minor_to_major[0] is the contiguous dimension).
//
// Guarantees: PhysicalToLiteral(LiteralToPhysical(x)) == x bit for bit for every array shape and
// layout; default-layout shapes are a plain memcpy. Buffers are 64-byte aligned (one AVX-512
// vector / cache line) and zero-initialized; sizes are checked against hlo::GlobalLimits().
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hlo/literal.h"
#include "hlo/shape.h"

namespace cpu {

// Bytes of one array value in memory (pred is one byte per element).
int64_t ArrayByteSize(const hlo::Shape& shape);

// Where a value lives: an array is one buffer id of its computation's BufferTable; a tuple is a
// tree of element layouts (tuples cost nothing at run time: they are only this tree).
struct ValueLayout {
  hlo::Shape shape;
  int64_t buffer = -1;                 // arrays only
  std::vector<ValueLayout> elements;   // tuples only
};
// The array leaves of a value, depth first (the order of .npz outputs and of tuple flattening).
void CollectLeaves(const ValueLayout& value, std::vector<const ValueLayout*>& leaves);

// A 64-byte aligned, zero-initialized byte array.
class AlignedBytes {
 public:
  explicit AlignedBytes(int64_t size);
  uint8_t* data() const { return data_.get(); }
  int64_t size() const { return size_; }

 private:
  struct Free {
    Free() : mapped_bytes(0) {}
    explicit Free(size_t mapped) : mapped_bytes(mapped) {}
    size_t mapped_bytes;  // 0: from aligned_alloc
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  int64_t size_ = 0;
};

void LiteralToPhysical(const hlo::Literal& literal, const hlo::Shape& shape, uint8_t* dst);
hlo::Literal PhysicalToLiteral(const hlo::Shape& shape, const uint8_t* src);

}  // namespace cpu

// Reshape / transpose / broadcast / slice / pad chains and identities. These ops only move
// elements, so every rule is exact for every type; each rule states the index algebra it uses.
#include <algorithm>

#include "compiler/passes/simplify_rules.h"

namespace compiler::simplify {
namespace {

using hlo::Instruction;
using O = hlo::Opcode;
using M = Match&;

const std::vector<int64_t>& Dims(const Instruction* x) {
  return x->attr<hlo::DimensionsAttrs>().dimensions;
}

bool IsIota(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool SameDims(const Instruction* a, const Instruction* b) { return a->shape().dims == b->shape().dims; }

// transpose(transpose(x, p1), p2) = transpose(x, p), p[i] = p1[p2[i]]: result dim i is inner
// dim p2[i], which is x dim p1[p2[i]].
Instruction* ComposeTransposes(M m) {
  const Instruction* inner = m.op(0);
  if (inner->opcode() != O::kTranspose) return nullptr;
  const auto& p1 = Dims(inner);
  const auto& p2 = Dims(&m.inst());
  std::vector<int64_t> p(p2.size());
  for (size_t i = 0; i < p2.size(); ++i) p[i] = p1[static_cast<size_t>(p2[i])];
  return m.builder().Transpose(inner->operand(0), p);
}

// broadcast(broadcast(x, d1), d2) = broadcast(x, d), d[i] = d2[d1[i]]: x dim i lands in inner
// dim d1[i], which lands in result dim d2[d1[i]].
Instruction* ComposeBroadcasts(M m) {
  const Instruction* inner = m.op(0);
  if (inner->opcode() != O::kBroadcast) return nullptr;
  const auto& d1 = Dims(inner);
  const auto& d2 = Dims(&m.inst());
  std::vector<int64_t> d(d1.size());
  for (size_t i = 0; i < d1.size(); ++i) d[i] = d2[static_cast<size_t>(d1[i])];
  return m.builder().Broadcast(inner->operand(0), m.shape().dims, d);
}

// slice(slice(x, s1:_:t1), s2:l2:t2): result element j is x[s1 + (s2 + j*t2)*t1], i.e. a single
// slice with start s1 + s2*t1 and stride t1*t2 over the same number of elements.
Instruction* ComposeSlices(M m) {
  const Instruction* inner = m.op(0);
  if (inner->opcode() != O::kSlice) return nullptr;
  const auto& a = inner->attr<hlo::SliceAttrs>().dims;
  const auto& b = m.inst().attr<hlo::SliceAttrs>().dims;
  hlo::SliceAttrs composed;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t count = m.shape().dims[i];
    hlo::SliceDim d;
    if (count > 0) {
      d.start = a[i].start + b[i].start * a[i].stride;
      d.stride = a[i].stride * b[i].stride;
      d.limit = d.start + (count - 1) * d.stride + 1;
    }  // else an empty [0:0:1] selects nothing, like the original
    composed.dims.push_back(d);
  }
  Instruction* x = inner->operand(0);
  return m.builder().Add(O::kSlice, hlo::Shape::Array(x->shape().type, m.shape().dims), {x},
                         std::move(composed));
}

bool IsIdentitySlice(M m) {
  const auto& dims = m.inst().attr<hlo::SliceAttrs>().dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].start != 0 || dims[i].stride != 1 || dims[i].limit != m.op(0)->shape().dims[i]) {
      return false;
    }
  }
  return true;
}

bool IsZeroPad(M m) {
  for (const hlo::PadDim& d : m.inst().attr<hlo::PadAttrs>().dims) {
    if (d.lo != 0 || d.hi != 0 || d.interior != 0) return false;
  }
  return true;
}

// Reversing only dimensions of size 0 or 1 moves nothing.
bool IsTrivialReverse(M m) {
  for (int64_t d : Dims(&m.inst())) {
    if (m.shape().dims[static_cast<size_t>(d)] > 1) return false;
  }
  return true;
}

// reverse(reverse(x, D), D) = x: each reversal is an involution on the same dimensions.
bool IsReverseOfSameReverse(M m) {
  if (m.op(0)->opcode() != O::kReverse) return false;
  std::vector<int64_t> a = Dims(m.op(0)), b = Dims(&m.inst());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// reshape(broadcast(scalar)) = broadcast(scalar) of the reshaped dims: every element is the scalar.
Instruction* ReshapeOfScalarBroadcast(M m) {
  const Instruction* b = m.op(0);
  if (b->opcode() != O::kBroadcast || b->operand(0)->shape().rank() != 0) return nullptr;
  return m.builder().Broadcast(b->operand(0), m.shape().dims, {});
}

const Rule kShapeRules[] = {
    // reshape(x) -> x   when the dims do not change
    {"reshape-identity", O::kReshape, [](M m) { return SameDims(&m.inst(), m.op(0)) ? m.op(0) : nullptr; }},
    // reshape(reshape(x)) -> reshape(x)   (a reshape only depends on the row-major element order)
    {"reshape-reshape", O::kReshape, [](M m) { return m.op(0)->opcode() == O::kReshape ? m.builder().Reshape(m.op(0)->operand(0), m.shape().dims) : nullptr; }},
    // reshape(broadcast(s)) -> broadcast(s)   (s scalar)
    {"reshape-scalar-broadcast", O::kReshape, ReshapeOfScalarBroadcast},
    // transpose(x, 0..n-1) -> x
    {"transpose-identity", O::kTranspose, [](M m) { return IsIota(Dims(&m.inst())) ? m.op(0) : nullptr; }},
    // transpose(transpose(x, p1), p2) -> transpose(x, p1∘p2)
    {"transpose-transpose", O::kTranspose, ComposeTransposes},
    // broadcast(x, 0..n-1) -> x   when no dimension is added
    {"broadcast-identity", O::kBroadcast, [](M m) { return SameDims(&m.inst(), m.op(0)) && IsIota(Dims(&m.inst())) ? m.op(0) : nullptr; }},
    // broadcast(broadcast(x, d1), d2) -> broadcast(x, d2∘d1)
    {"broadcast-broadcast", O::kBroadcast, ComposeBroadcasts},
    // slice(x, [0:n:1]...) -> x
    {"slice-identity", O::kSlice, [](M m) { return IsIdentitySlice(m) ? m.op(0) : nullptr; }},
    // slice(slice(x)) -> slice(x)   with composed start/stride
    {"slice-slice", O::kSlice, ComposeSlices},
    // pad(x, v, 0_0_0...) -> x
    {"pad-identity", O::kPad, [](M m) { return IsZeroPad(m) ? m.op(0) : nullptr; }},
    // concatenate(x) -> x
    {"concatenate-single", O::kConcatenate, [](M m) { return m.inst().operand_count() == 1 ? m.op(0) : nullptr; }},
    // reverse(x, dims of size <= 1) -> x
    {"reverse-trivial", O::kReverse, [](M m) { return IsTrivialReverse(m) ? m.op(0) : nullptr; }},
    // reverse(reverse(x, D), D) -> x
    {"reverse-reverse", O::kReverse, [](M m) { return IsReverseOfSameReverse(m) ? m.op(0)->operand(0) : nullptr; }},
    // dynamic-slice(x, i...) -> x   when the slice is all of x (starts clamp to 0)
    {"dynamic-slice-full", O::kDynamicSlice, [](M m) { return SameDims(&m.inst(), m.op(0)) ? m.op(0) : nullptr; }},
    // dynamic-update-slice(x, u, i...) -> u   when u covers all of x (starts clamp to 0)
    {"dynamic-update-slice-full", O::kDynamicUpdateSlice, [](M m) { return SameDims(m.op(1), m.op(0)) ? m.op(1) : nullptr; }},
};

}  // namespace

std::span<const Rule> ShapeRules() { return kShapeRules; }

}  // namespace compiler::simplify

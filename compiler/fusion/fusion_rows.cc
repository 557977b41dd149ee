// Row signatures and row-locality rules for input fusion (fusion_rows.h).
#include "compiler/fusion/fusion_rows.h"

#include <algorithm>

#include "compiler/fusion/fusion_cost.h"

namespace compiler::fusion {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Dimension numbers of the non-unit dims of `shape`, in order.
std::vector<int64_t> NonUnitDims(const hlo::Shape& shape) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dims[static_cast<size_t>(d)] != 1) out.push_back(d);
  }
  return out;
}

std::vector<int64_t> KeptPositions(const RowSignature& s) {
  std::vector<int64_t> kept;
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    if (!s.reduced[i]) kept.push_back(static_cast<int64_t>(i));
  }
  return kept;
}

// The signature position of the m-th non-unit dim of a value of class `c`.
int64_t Label(RowClass c, int64_t m, const RowSignature& s) {
  if (c == RowClass::kFull) return m;
  return KeptPositions(s)[static_cast<size_t>(m)];
}

// Index of `dim` among the non-unit dims of `shape`, or -1.
int64_t NonUnitIndex(const hlo::Shape& shape, int64_t dim) {
  const std::vector<int64_t> dims = NonUnitDims(shape);
  auto it = std::find(dims.begin(), dims.end(), dim);
  return it == dims.end() ? -1 : it - dims.begin();
}

bool BroadcastKeepsRoles(const Instruction& producer, const Instruction& broadcast,
                         RowClass from, RowClass to, const RowSignature& s) {
  const auto& dims = broadcast.attr<hlo::DimensionsAttrs>().dimensions;
  const hlo::Shape& in = producer.shape();
  for (int64_t j = 0; j < in.rank() && j < static_cast<int64_t>(dims.size()); ++j) {
    if (in.dims[static_cast<size_t>(j)] == 1) continue;
    const int64_t m = NonUnitIndex(in, j);
    const int64_t n = NonUnitIndex(broadcast.shape(), dims[static_cast<size_t>(j)]);
    if (m < 0 || n < 0 || Label(from, m, s) != Label(to, n, s)) return false;
  }
  return true;
}

bool ReduceMatches(const Instruction& producer, const Instruction& reduce, const RowSignature& s) {
  const auto& dims = reduce.attr<hlo::DimensionsAttrs>().dimensions;
  std::vector<bool> reduced(s.sizes.size(), false);
  for (int64_t d : dims) {
    const int64_t m = NonUnitIndex(producer.shape(), d);
    if (m >= 0) reduced[static_cast<size_t>(m)] = true;
  }
  return reduced == s.reduced;
}

}  // namespace

std::optional<RowSignature> RowSignatureOf(const Instruction& reduce) {
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() != 2 ||
      !reduce.shape().IsArray() || !reduce.operand(0)->shape().IsArray()) {
    return std::nullopt;
  }
  const hlo::Shape& in = reduce.operand(0)->shape();
  const auto& dims = reduce.attr<hlo::DimensionsAttrs>().dimensions;
  RowSignature s;
  bool any_reduced = false;
  for (int64_t d : NonUnitDims(in)) {
    const bool r = std::find(dims.begin(), dims.end(), d) != dims.end();
    s.sizes.push_back(in.dims[static_cast<size_t>(d)]);
    s.reduced.push_back(r);
    any_reduced = any_reduced || r;
  }
  if (!any_reduced) return std::nullopt;
  return s;
}

RowClass ClassOf(const hlo::Shape& shape, const RowSignature& s) {
  if (!shape.IsArray()) return RowClass::kNone;
  std::vector<int64_t> sizes;
  for (int64_t d : NonUnitDims(shape)) sizes.push_back(shape.dims[static_cast<size_t>(d)]);
  if (sizes == s.sizes) return RowClass::kFull;
  std::vector<int64_t> kept;
  for (int64_t p : KeptPositions(s)) kept.push_back(s.sizes[static_cast<size_t>(p)]);
  if (sizes == kept) return RowClass::kKept;
  if (sizes.empty()) return RowClass::kScalar;
  return RowClass::kNone;
}

bool IsRowOp(const Instruction& inst) {
  if (IsNeverFusible(inst)) return false;
  if (hlo::IsElementwise(inst.opcode())) return true;
  switch (inst.opcode()) {
    case Opcode::kReshape: case Opcode::kBroadcast: case Opcode::kConstant: case Opcode::kIota:
      return true;
    case Opcode::kReduce:
      return RowSignatureOf(inst).has_value();
    default:
      return false;
  }
}

bool RowEdgeOk(const Instruction& producer, const Instruction& consumer, int64_t index,
               const RowSignature& s) {
  const RowClass from = ClassOf(producer.shape(), s);
  const RowClass to = ClassOf(consumer.shape(), s);
  if (from == RowClass::kNone || to == RowClass::kNone) return false;
  if (hlo::IsElementwise(consumer.opcode())) return from == to || from == RowClass::kScalar;
  switch (consumer.opcode()) {
    case Opcode::kReshape:
      return from == to;  // same non-unit dims: a degenerate reshape keeps every role
    case Opcode::kBroadcast:
      return BroadcastKeepsRoles(producer, consumer, from, to, s);
    case Opcode::kReduce:
      if (index >= 1) return from == RowClass::kScalar || producer.shape().rank() == 0;
      return from == RowClass::kFull && ReduceMatches(producer, consumer, s);
    default:
      return false;
  }
}

}  // namespace compiler::fusion

// Transposes folded into dot dimension numbers: dot(transpose(x, p), y) reads x through p, so
// the dot can name x's dimensions directly (batch/contracting dim d of the transpose is dim p[d]
// of x). The dot's result lists batch dims, then the lhs free dims in increasing order, then the
// rhs free dims, so the fold is legal only when p keeps the free dims in increasing order.
//
// Canonical dots ([b..., m, k] x [b..., k, n], see dot_canonicalizer.h) are left alone: the
// canonicalizer introduced those transposes on purpose, and folding them back would undo it.
#include <algorithm>

#include "compiler/passes/dot_canonicalizer.h"
#include "compiler/passes/simplify_rules.h"

namespace compiler::simplify {
namespace {

using hlo::Instruction;
using O = hlo::Opcode;
using M = Match&;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Instruction* FoldTranspose(M m, int side) {
  if (IsCanonicalDot(m.inst())) return nullptr;
  const Instruction* t = m.op(side);
  if (t->opcode() != O::kTranspose) return nullptr;
  const std::vector<int64_t>& p = t->attr<hlo::DimensionsAttrs>().dimensions;
  hlo::DotAttrs attrs = m.inst().attr<hlo::DotAttrs>();
  std::vector<int64_t>& batch = side == 0 ? attrs.dnums.lhs_batch : attrs.dnums.rhs_batch;
  std::vector<int64_t>& contracting =
      side == 0 ? attrs.dnums.lhs_contracting : attrs.dnums.rhs_contracting;
  int64_t last_free = -1;
  for (int64_t d = 0; d < t->shape().rank(); ++d) {
    if (Contains(batch, d) || Contains(contracting, d)) continue;
    if (p[static_cast<size_t>(d)] < last_free) return nullptr;  // free dims would reorder
    last_free = p[static_cast<size_t>(d)];
  }
  for (int64_t& d : batch) d = p[static_cast<size_t>(d)];
  for (int64_t& d : contracting) d = p[static_cast<size_t>(d)];
  std::vector<Instruction*> operands = {m.op(0), m.op(1)};
  operands[static_cast<size_t>(side)] = t->operand(0);
  Instruction* dot = m.builder().Add(O::kDot, m.shape(), operands, std::move(attrs));
  dot->mutable_opaque_attributes() = m.inst().opaque_attributes();  // keep metadata
  return dot;
}

const Rule kDotRules[] = {
    // dot(transpose(x, p), y) -> dot(x, y) with lhs batch/contracting dims mapped through p
    {"dot-fold-lhs-transpose", O::kDot, [](M m) { return FoldTranspose(m, 0); }},
    // dot(x, transpose(y, p)) -> dot(x, y) with rhs batch/contracting dims mapped through p
    {"dot-fold-rhs-transpose", O::kDot, [](M m) { return FoldTranspose(m, 1); }},
};

}  // namespace

std::span<const Rule> DotRules() { return kDotRules; }

}  // namespace compiler::simplify

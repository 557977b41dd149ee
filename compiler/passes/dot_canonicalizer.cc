#include "compiler/passes/dot_canonicalizer.h"

#include <algorithm>

#include "compiler/passes/rewrite_builder.h"

namespace compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsRange(const std::vector<int64_t>& v, int64_t first, int64_t count) {
  if (static_cast<int64_t>(v.size()) != count) return false;
  for (int64_t i = 0; i < count; ++i) {
    if (v[static_cast<size_t>(i)] != first + i) return false;
  }
  return true;
}

// Dimensions of an operand that are neither batch nor contracting, in increasing order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

int64_t Product(const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
  int64_t p = 1;
  for (int64_t d : which) p *= dims[static_cast<size_t>(d)];
  return p;
}

// Whether `group` is the run of dimensions first, first + 1, ... (possibly empty).
bool IsRunFrom(const std::vector<int64_t>& group, int64_t first) {
  return IsRange(group, first, static_cast<int64_t>(group.size()));
}

// Brings one operand to [batch..., middle, last]: transpose to batch ++ middle ++ last, then
// reshape collapsing `middle` and `last` into one dimension each. An operand already laid out
// as [batch..., last..., middle...] (a weight stored [n, k] read as the rhs, whose canonical
// form is [k, n]) is reshaped first and then transposed in its last two dimensions only: the
// same values, and a transpose a backend can read through as a transposed matrix instead of a
// rotation of several dimensions.
Instruction* Canonicalize(RewriteBuilder& b, Instruction* x, const std::vector<int64_t>& batch,
                          const std::vector<int64_t>& middle, const std::vector<int64_t>& last) {
  const int64_t batch_rank = static_cast<int64_t>(batch.size());
  if (IsRange(batch, 0, batch_rank) && !middle.empty() && !last.empty() &&
      IsRunFrom(last, batch_rank) &&
      IsRunFrom(middle, batch_rank + static_cast<int64_t>(last.size()))) {
    const std::vector<int64_t>& dims = x->shape().dims;
    std::vector<int64_t> swapped(dims.begin(), dims.begin() + batch_rank);
    swapped.push_back(Product(dims, last));
    swapped.push_back(Product(dims, middle));
    if (x->shape().dims != swapped) x = b.Reshape(x, swapped);
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < batch_rank; ++d) perm.push_back(d);
    perm.push_back(batch_rank + 1);
    perm.push_back(batch_rank);
    return b.Transpose(x, perm);
  }
  std::vector<int64_t> perm = batch;
  perm.insert(perm.end(), middle.begin(), middle.end());
  perm.insert(perm.end(), last.begin(), last.end());
  const std::vector<int64_t>& dims = x->shape().dims;
  std::vector<int64_t> target;
  for (int64_t d : batch) target.push_back(dims[static_cast<size_t>(d)]);
  target.push_back(Product(dims, middle));
  target.push_back(Product(dims, last));
  if (!IsRange(perm, 0, static_cast<int64_t>(perm.size()))) x = b.Transpose(x, perm);
  if (x->shape().dims != target) x = b.Reshape(x, target);
  return x;
}

bool CanonicalizeDot(RewriteBuilder& b, hlo::Computation& computation, Instruction* dot) {
  const hlo::DotAttrs& attrs = dot->attr<hlo::DotAttrs>();
  const hlo::DotDimensionNumbers& dn = attrs.dnums;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  if (!lhs->shape().IsArray() || !rhs->shape().IsArray()) return false;
  b.set_origin(dot);
  const std::vector<int64_t> lhs_free = FreeDims(lhs->shape().rank(), dn.lhs_batch, dn.lhs_contracting);
  const std::vector<int64_t> rhs_free = FreeDims(rhs->shape().rank(), dn.rhs_batch, dn.rhs_contracting);
  Instruction* new_lhs = Canonicalize(b, lhs, dn.lhs_batch, lhs_free, dn.lhs_contracting);
  Instruction* new_rhs = Canonicalize(b, rhs, dn.rhs_batch, dn.rhs_contracting, rhs_free);

  const int64_t batch_rank = static_cast<int64_t>(dn.lhs_batch.size());
  hlo::DotAttrs canonical;
  canonical.precision = attrs.precision;
  for (int64_t i = 0; i < batch_rank; ++i) {
    canonical.dnums.lhs_batch.push_back(i);
    canonical.dnums.rhs_batch.push_back(i);
  }
  canonical.dnums.lhs_contracting = {batch_rank + 1};
  canonical.dnums.rhs_contracting = {batch_rank};
  std::vector<int64_t> result_dims(new_lhs->shape().dims.begin(),
                                   new_lhs->shape().dims.end() - 1);
  result_dims.push_back(new_rhs->shape().dims.back());
  Instruction* new_dot =
      b.Add(Opcode::kDot, hlo::Shape::Array(dot->shape().type, result_dims), {new_lhs, new_rhs},
            std::move(canonical));
  new_dot->mutable_opaque_attributes() = dot->opaque_attributes();
  Instruction* result = b.Reshape(new_dot, dot->shape().dims);
  // Keep the original layout: the dot may be a root whose layout is part of a signature.
  result->mutable_shape() = dot->shape();
  dot->ReplaceAllUsesWith(result);
  RemoveDeadChain(computation, {dot});
  return true;
}

}  // namespace

bool IsCanonicalDot(const hlo::Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2) return false;
  const hlo::DotDimensionNumbers& dn = dot.attr<hlo::DotAttrs>().dnums;
  const int64_t b = static_cast<int64_t>(dn.lhs_batch.size());
  return dot.operand(0)->shape().rank() == b + 2 && dot.operand(1)->shape().rank() == b + 2 &&
         IsRange(dn.lhs_batch, 0, b) && IsRange(dn.rhs_batch, 0, b) &&
         IsRange(dn.lhs_contracting, b + 1, 1) && IsRange(dn.rhs_contracting, b, 1);
}

bool SwapsLastTwoDims(const hlo::Instruction& inst) {
  if (inst.opcode() != Opcode::kTranspose) return false;
  const hlo::Shape& shape = inst.shape();
  if (!shape.IsArray() || shape.rank() < 2 || !shape.HasDefaultLayout() ||
      !inst.operand(0)->shape().HasDefaultLayout())
    return false;
  const std::vector<int64_t>& perm = inst.attr<hlo::DimensionsAttrs>().dimensions;
  const int64_t rank = shape.rank();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (perm[static_cast<size_t>(d)] != d) return false;
  return perm[static_cast<size_t>(rank - 2)] == rank - 1 &&
         perm[static_cast<size_t>(rank - 1)] == rank - 2;
}

bool DotCanonicalizer::Run(hlo::Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> dots;
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kDot && !IsCanonicalDot(*inst)) dots.push_back(inst.get());
    }
    if (dots.empty()) continue;
    RewriteBuilder builder(*computation);
    for (Instruction* dot : dots) changed |= CanonicalizeDot(builder, *computation, dot);
    computation->SortTopologically();
  }
  return changed;
}

}  // namespace compiler

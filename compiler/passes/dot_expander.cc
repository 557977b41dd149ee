#include "compiler/passes/dot_expander.h"

#include <vector>

#include "compiler/passes/rewrite_builder.h"

namespace compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

int64_t PositionIn(const std::vector<int64_t>& dims, int64_t dim) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == dim) return static_cast<int64_t>(i);
  return -1;
}

// Where each dimension of one operand lands in [batch..., lhs free..., rhs free...,
// contracting...]. `free_offset` is the first result position of this operand's free dims.
std::vector<int64_t> ProductPositions(const hlo::Shape& operand, const std::vector<int64_t>& batch,
                                      const std::vector<int64_t>& contracting, int64_t free_offset,
                                      int64_t result_rank) {
  std::vector<int64_t> positions;
  int64_t next_free = free_offset;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (int64_t b = PositionIn(batch, d); b >= 0) positions.push_back(b);
    else if (int64_t c = PositionIn(contracting, d); c >= 0) positions.push_back(result_rank + c);
    else positions.push_back(next_free++);
  }
  return positions;
}

// reduce(multiply(broadcast(lhs), broadcast(rhs)), 0) over the contracting dims, in `type`.
Instruction* ExpandToReduce(RewriteBuilder& b, ScalarAddComputations& adds, Instruction* dot,
                            Instruction* lhs, Instruction* rhs) {
  const hlo::DotDimensionNumbers& d = dot->attr<hlo::DotAttrs>().dnums;
  const PrimitiveType type = dot->shape().type;
  const int64_t result_rank = dot->shape().rank();
  const int64_t lhs_free =
      lhs->shape().rank() - static_cast<int64_t>(d.lhs_batch.size() + d.lhs_contracting.size());
  std::vector<int64_t> product_dims = dot->shape().dims;
  std::vector<int64_t> reduced;
  for (size_t c = 0; c < d.lhs_contracting.size(); ++c) {
    product_dims.push_back(lhs->shape().dims[static_cast<size_t>(d.lhs_contracting[c])]);
    reduced.push_back(result_rank + static_cast<int64_t>(c));
  }
  const int64_t batch = static_cast<int64_t>(d.lhs_batch.size());
  // Converted after broadcasting, so that the whole expression fuses into the reduce's kernel.
  Instruction* wide_lhs = b.Convert(
      b.Broadcast(lhs, product_dims,
                  ProductPositions(lhs->shape(), d.lhs_batch, d.lhs_contracting, batch, result_rank)),
      type);
  Instruction* wide_rhs = b.Convert(
      b.Broadcast(rhs, product_dims,
                  ProductPositions(rhs->shape(), d.rhs_batch, d.rhs_contracting, batch + lhs_free,
                                   result_rank)),
      type);
  Instruction* products = b.Binary(Opcode::kMultiply, wide_lhs, wide_rhs);
  return b.Add(Opcode::kReduce, hlo::Shape::Array(type, dot->shape().dims),
               {products, b.ScalarConstant(type, 0)}, hlo::DimensionsAttrs{reduced}, {},
               {adds.Add(type)});
}

}  // namespace

DotExpander::DotExpander(const TargetDescription& target) {
  auto rule = target.op_rules.find(Opcode::kDot);
  if (rule == target.op_rules.end() || rule->second.handling != OpHandling::kLibrary) return;
  library_types_ = rule->second.types;
  expand_integer_dots_ = !library_types_.empty() && rule->second.otherwise == OpHandling::kGenerated;
}

bool DotExpander::Run(hlo::Module& module) {
  if (library_types_.empty()) return false;
  ScalarAddComputations adds(module, "dot_expander_add_");
  bool changed = false;
  // Snapshot: expanding adds computations to the module.
  std::vector<hlo::Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (hlo::Computation* computation : computations) {
    std::vector<Instruction*> dots;
    for (const auto& inst : computation->instructions())
      if (inst->opcode() == Opcode::kDot && inst->shape().IsArray() &&
          inst->has_attr<hlo::DotAttrs>())
        dots.push_back(inst.get());
    if (dots.empty()) continue;
    RewriteBuilder b(*computation);
    for (Instruction* dot : dots) {
      const PrimitiveType type = dot->shape().type;
      Instruction* lhs = dot->operand(0);
      Instruction* rhs = dot->operand(1);
      const bool mixed = lhs->shape().type != type || rhs->shape().type != type;
      b.set_origin(dot);
      if (expand_integer_dots_ && hlo::IsInteger(type) && !library_types_.count(lhs->shape().type)) {
        Instruction* expanded = ExpandToReduce(b, adds, dot, lhs, rhs);
        expanded->mutable_shape() = dot->shape();  // same logical shape; keeps the layout
        dot->ReplaceAllUsesWith(expanded);
        RemoveDeadChain(*computation, {dot});
        changed = true;
      } else if (mixed && library_types_.count(type) &&
                 (lhs->shape().type == PrimitiveType::kF64 ||
                  rhs->shape().type == PrimitiveType::kF64)) {
        // f64 operands into a narrower result: converting them to the result's type would
        // round them first, where the dot sums in f64 and rounds once. An f64 dot, then the
        // conversion, computes exactly that.
        Instruction* wide_lhs = lhs->shape().type == PrimitiveType::kF64
                                    ? lhs : b.Convert(lhs, PrimitiveType::kF64);
        Instruction* wide_rhs = rhs->shape().type == PrimitiveType::kF64
                                    ? rhs : b.Convert(rhs, PrimitiveType::kF64);
        hlo::Shape wide_shape = dot->shape();
        wide_shape.type = PrimitiveType::kF64;
        Instruction* wide =
            b.Add(Opcode::kDot, wide_shape, {wide_lhs, wide_rhs}, dot->attrs(), dot->name());
        Instruction* narrowed = b.Convert(wide, type);
        narrowed->mutable_shape() = dot->shape();  // same logical shape; keeps the layout
        dot->ReplaceAllUsesWith(narrowed);
        RemoveDeadChain(*computation, {dot});
        changed = true;
      } else if (mixed && library_types_.count(type)) {
        dot->SetOperand(0, b.Convert(lhs, type));
        dot->SetOperand(1, b.Convert(rhs, type));
        changed = true;
      }
    }
    if (b.added_any()) computation->SortTopologically();
  }
  return changed;
}

}  // namespace compiler

#include "compiler/passes/rewrite_builder.h"

#include <memory>
#include <string>
#include <utility>

#include "hlo/literal.h"
#include "hlo/shape_inference.h"

namespace compiler {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

RewriteBuilder::RewriteBuilder(hlo::Computation& computation) : computation_(computation) {}

std::string RewriteBuilder::UniqueName(std::string_view base) {
  // The name set is built on first use: most computations a pass visits get no new instruction.
  if (!names_ready_) {
    names_.reserve(computation_.instructions().size() * 2);
    for (const auto& inst : computation_.instructions()) names_.insert(inst->name());
    names_ready_ = true;
  }
  std::string candidate(base);
  if (names_.insert(candidate).second) return candidate;
  // XLA-style suffixes; counting up is bounded by the number of names already present.
  for (int64_t n = 1;; ++n) {
    candidate = std::string(base) + "." + std::to_string(n);
    if (names_.insert(candidate).second) return candidate;
  }
}

Instruction* RewriteBuilder::Add(Opcode opcode, const Shape& declared,
                                 const std::vector<Instruction*>& operands, hlo::Attrs attrs,
                                 std::string_view name_hint,
                                 const std::vector<hlo::Computation*>& called) {
  std::string base(name_hint);
  if (base.empty()) base = origin_ ? origin_->name() : std::string(hlo::OpcodeName(opcode));
  auto inst = std::make_unique<Instruction>(UniqueName(base), opcode, declared);
  inst->set_attrs(std::move(attrs));
  if (origin_) inst->set_location(origin_->location());
  for (Instruction* operand : operands) inst->AppendOperand(operand);
  inst->mutable_called_computations() = called;
  Instruction* raw = computation_.AddInstruction(std::move(inst));
  try {
    raw->mutable_shape() = hlo::InferShape(*raw);
  } catch (...) {
    computation_.RemoveInstruction(raw);  // never leave an ill-typed node behind
    throw;
  }
  added_any_ = true;
  return raw;
}

Instruction* RewriteBuilder::Unary(Opcode opcode, Instruction* x) {
  return Add(opcode, x->shape(), {x}, hlo::NoAttrs{});
}

Instruction* RewriteBuilder::Binary(Opcode opcode, Instruction* a, Instruction* b) {
  return Add(opcode, Shape::Array(a->shape().type, a->shape().dims), {a, b}, hlo::NoAttrs{});
}

Instruction* RewriteBuilder::Reshape(Instruction* x, const std::vector<int64_t>& dims) {
  return Add(Opcode::kReshape, Shape::Array(x->shape().type, dims), {x}, hlo::NoAttrs{});
}

Instruction* RewriteBuilder::Transpose(Instruction* x, const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(x->shape().dims[static_cast<size_t>(p)]);
  return Add(Opcode::kTranspose, Shape::Array(x->shape().type, dims), {x},
             hlo::DimensionsAttrs{permutation});
}

Instruction* RewriteBuilder::Broadcast(Instruction* x, const std::vector<int64_t>& result_dims,
                                       const std::vector<int64_t>& operand_to_result) {
  return Add(Opcode::kBroadcast, Shape::Array(x->shape().type, result_dims), {x},
             hlo::DimensionsAttrs{operand_to_result});
}

Instruction* RewriteBuilder::Convert(Instruction* x, hlo::PrimitiveType type) {
  return Add(Opcode::kConvert, Shape::Array(type, x->shape().dims), {x}, hlo::NoAttrs{});
}

Instruction* RewriteBuilder::ScalarConstant(hlo::PrimitiveType type, double value) {
  hlo::Literal literal(Shape::Scalar(type));
  literal.SetFromDouble(0, value);
  return Add(Opcode::kConstant, Shape::Scalar(type), {}, hlo::ConstantAttrs{std::move(literal)},
             "constant");
}

Instruction* RewriteBuilder::Splat(const Shape& shape, double value) {
  Instruction* scalar = ScalarConstant(shape.type, value);
  if (shape.rank() == 0) return scalar;
  return Broadcast(scalar, shape.dims, {});
}

hlo::Computation* ScalarAddComputations::Add(hlo::PrimitiveType type) {
  auto it = computations_.find(type);
  if (it != computations_.end()) return it->second;
  const std::string base = prefix_ + std::string(hlo::PrimitiveTypeName(type));
  std::string name = base;
  for (int n = 1; module_.FindComputation(name) != nullptr; ++n) {
    name = base + ".";
    name += std::to_string(n);
  }
  auto computation = std::make_unique<hlo::Computation>(name);
  const Shape scalar = Shape::Scalar(type);
  auto lhs = std::make_unique<Instruction>("lhs", Opcode::kParameter, scalar);
  lhs->set_attrs(hlo::ParameterAttrs{0});
  auto rhs = std::make_unique<Instruction>("rhs", Opcode::kParameter, scalar);
  rhs->set_attrs(hlo::ParameterAttrs{1});
  auto sum = std::make_unique<Instruction>("sum", Opcode::kAdd, scalar);
  sum->AppendOperand(lhs.get());
  sum->AppendOperand(rhs.get());
  Instruction* root = sum.get();
  computation->AddInstruction(std::move(lhs));
  computation->AddInstruction(std::move(rhs));
  computation->AddInstruction(std::move(sum));
  computation->set_root(root);
  const hlo::Computation* first = module_.computations().front().get();
  hlo::Computation* added = module_.AddComputationBefore(std::move(computation), first);
  computations_[type] = added;
  return added;
}

bool IsRemovableWhenDead(const Instruction& instruction) {
  switch (hlo::OpcodeClass(instruction.opcode())) {
    case hlo::OpClass::kElementwiseUnary:
    case hlo::OpClass::kElementwiseBinary:
    case hlo::OpClass::kElementwiseTernary:
    case hlo::OpClass::kDataMovement:
    case hlo::OpClass::kReduction:
    case hlo::OpClass::kContraction:
      return true;
    case hlo::OpClass::kOther:
      return instruction.opcode() == Opcode::kConstant || instruction.opcode() == Opcode::kIota;
    case hlo::OpClass::kControl:
    case hlo::OpClass::kCollective:
      return false;
  }
  return false;
}

int64_t RemoveDeadChain(hlo::Computation& computation, std::vector<Instruction*> start) {
  // Pointers of removed instructions are remembered so that a second path to the same operand
  // never touches freed memory (nothing is allocated meanwhile, so addresses cannot be reused).
  std::unordered_set<Instruction*> removed;
  std::vector<Instruction*> worklist = std::move(start);
  while (!worklist.empty()) {
    Instruction* inst = worklist.back();
    worklist.pop_back();
    if (removed.count(inst) || !inst->users().empty() || inst == computation.root() ||
        !IsRemovableWhenDead(*inst)) {
      continue;
    }
    std::vector<Instruction*> operands = inst->operands();
    computation.RemoveInstruction(inst);
    removed.insert(inst);
    for (Instruction* operand : operands) worklist.push_back(operand);
  }
  return static_cast<int64_t>(removed.size());
}

}  // namespace compiler

// layout-assignment (see the header for the post-condition). One walk per computation in
// definition order decides each result layout, a second walk fixes operands whose layout
// differs from what their user requires, and a final step restores the root's layout.
#include "compiler/passes/layout_assignment.h"

#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/passes/basic_pass_util.h"

namespace compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// Makes every array leaf's effective layout explicit, in place (a no-op for the printer and
// the evaluator, which already treat a missing layout as the default one). Scalars have one
// layout only and are left as they are (XLA prints them without `{}`).
void MakeExplicit(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.tuple_shapes) MakeExplicit(element);
  } else if (shape.IsArray() && shape.rank() > 0 && !shape.has_layout) {
    shape.minor_to_major = shape.EffectiveMinorToMajor();
    shape.has_layout = true;
  }
}

// Gives every array leaf the default descending layout, in place.
void MakeDescending(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.tuple_shapes) MakeDescending(element);
    return;
  }
  if (!shape.HasDefaultLayout()) shape.has_layout = false;  // forget it: default is implied
  MakeExplicit(shape);
}

Shape Explicit(Shape shape) {
  MakeExplicit(shape);
  return shape;
}

// Ops whose result layout is a contract with someone else and therefore never changes.
bool IsPinned(Opcode op) {
  switch (op) {
    case Opcode::kParameter:   // the caller's (or entry_computation_layout's) layout
    case Opcode::kBitcast:     // its result is defined by its physical layout
    case Opcode::kCopy:        // the op whose whole purpose is a layout
    case Opcode::kWhile:       // must match the body's root and parameter
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kFusion:      // must match the fused computation's root
    case Opcode::kCustomCall:  // an opaque kernel decided it
      return true;
    default:
      return false;
  }
}

class ComputationLayouts {
 public:
  ComputationLayouts(hlo::Computation& computation, bool prefers_row_major)
      : computation_(computation), prefers_row_major_(prefers_row_major) {}

  bool Run() {
    std::vector<Instruction*> order;
    order.reserve(computation_.instructions().size());
    Instruction* root = computation_.root();
    // Only bitcast/custom-call operands and the root need their original layout later.
    for (const auto& inst : computation_.instructions()) {
      order.push_back(inst.get());
      if (inst->opcode() == Opcode::kBitcast || inst->opcode() == Opcode::kCustomCall) {
        for (const Instruction* operand : inst->operands()) {
          original_.emplace(operand, Explicit(operand->shape()));
        }
      }
    }
    if (root != nullptr) original_.emplace(root, Explicit(root->shape()));
    for (Instruction* inst : order) AssignResultLayout(inst, inst == root);
    for (Instruction* inst : order) FixOperands(inst, inst == root);
    if (root != nullptr && root->opcode() != Opcode::kTuple) {
      Instruction* converted = ConvertTo(root, original_.at(root));
      if (converted != root) computation_.set_root(converted);
    }
    if (inserted_) computation_.SortTopologically();
    return changed_ || inserted_;
  }

 private:
  void SetShape(Instruction* inst, Shape shape) {
    if (!inst->shape().Equal(shape)) changed_ = true;
    inst->mutable_shape() = std::move(shape);
  }

  void AssignResultLayout(Instruction* inst, bool is_root) {
    Shape& shape = inst->mutable_shape();
    if (IsPinned(inst->opcode()) || (is_root && inst->opcode() == Opcode::kTuple)) {
      MakeExplicit(shape);
      return;
    }
    switch (inst->opcode()) {
      case Opcode::kTuple: {
        std::vector<Shape> elements;
        for (const Instruction* operand : inst->operands()) elements.push_back(operand->shape());
        SetShape(inst, Shape::Tuple(std::move(elements)));
        return;
      }
      case Opcode::kGetTupleElement: {
        const Shape& tuple = inst->operand(0)->shape();
        const int64_t index = inst->attr<hlo::TupleIndexAttrs>().index;
        if (tuple.IsTuple() && index >= 0 &&
            index < static_cast<int64_t>(tuple.tuple_shapes.size())) {
          SetShape(inst, tuple.tuple_shapes[static_cast<size_t>(index)]);
        } else {
          MakeExplicit(shape);
        }
        return;
      }
      case Opcode::kOptimizationBarrier:
        SetShape(inst, inst->operand(0)->shape());
        return;
      default:
        if (!prefers_row_major_) {
          MakeExplicit(shape);
          return;
        }
        if (!IsAllDefault(shape)) changed_ = true;
        MakeDescending(shape);
        return;
    }
  }

  static bool IsAllDefault(const Shape& shape) {
    if (!shape.IsTuple()) return !shape.IsArray() || shape.HasDefaultLayout();
    for (const Shape& element : shape.tuple_shapes) {
      if (!IsAllDefault(element)) return false;
    }
    return true;
  }

  // The shape operand `i` must have, or nullptr when any layout will do.
  const Shape* RequiredOperandShape(const Instruction* inst, int64_t i, bool is_root) {
    const Instruction* operand = inst->operand(i);
    const auto& called = inst->called_computations();
    auto callee_parameter = [&](size_t computation, int64_t parameter) -> const Shape* {
      if (computation >= called.size()) return nullptr;
      const hlo::Computation* callee = called[computation];
      if (parameter >= callee->parameter_count() || callee->parameter(parameter) == nullptr) {
        return nullptr;
      }
      return &callee->parameter(parameter)->shape();
    };
    switch (inst->opcode()) {
      case Opcode::kBitcast:
      case Opcode::kCustomCall:
        return &original_.at(operand);
      case Opcode::kWhile:
        return callee_parameter(1, 0);
      case Opcode::kCall:
      case Opcode::kFusion:
        return callee_parameter(0, i);
      case Opcode::kConditional:
        if (i == 0) return nullptr;
        return callee_parameter(static_cast<size_t>(i - 1), 0);
      case Opcode::kTuple:
        if (!is_root) return nullptr;
        return &inst->shape().tuple_shapes[static_cast<size_t>(i)];
      case Opcode::kGetTupleElement:
      case Opcode::kCopy:
      case Opcode::kOptimizationBarrier:
        return nullptr;
      default:
        if (!prefers_row_major_ || !operand->shape().IsArray() ||
            operand->shape().HasDefaultLayout()) {
          return nullptr;
        }
        scratch_ = operand->shape();
        MakeDescending(scratch_);
        return &scratch_;
    }
  }

  void FixOperands(Instruction* inst, bool is_root) {
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      const Shape* required = RequiredOperandShape(inst, i, is_root);
      if (required == nullptr) continue;
      Instruction* converted = ConvertTo(inst->operand(i), *required);
      if (converted != inst->operand(i)) inst->SetOperand(i, converted);
    }
  }

  // `value` itself when it already has `required`'s layouts, else a (shared) copy of it in
  // that layout; tuples are converted element by element and re-assembled.
  Instruction* ConvertTo(Instruction* value, const Shape& required) {
    if (value->shape().Equal(required) || !value->shape().Compatible(required)) return value;
    auto key = std::make_pair(value, required.ToString());
    if (auto it = conversions_.find(key); it != conversions_.end()) return it->second;
    Instruction* result = nullptr;
    if (required.IsTuple()) {
      std::vector<Instruction*> elements;
      for (size_t j = 0; j < required.tuple_shapes.size(); ++j) {
        Instruction* element = Add(basic::MakeGetTupleElement(
            value, static_cast<int64_t>(j), Names().Unique(value->name() + ".element")));
        elements.push_back(ConvertTo(element, required.tuple_shapes[j]));
      }
      result = Add(basic::MakeTuple(elements, Names().Unique(value->name() + ".relayout")));
    } else {
      auto copy = std::make_unique<Instruction>(Names().Unique(value->name() + ".copy"),
                                                Opcode::kCopy, Explicit(required));
      copy->AppendOperand(value);
      copy->set_location(value->location());
      result = Add(std::move(copy));
    }
    conversions_.emplace(std::move(key), result);
    return result;
  }

  // Built on first use: most computations need no new instruction.
  basic::NameUniquer& Names() {
    if (!names_) names_.emplace(computation_);
    return *names_;
  }

  Instruction* Add(std::unique_ptr<Instruction> inst) {
    inserted_ = true;
    return computation_.AddInstruction(std::move(inst));
  }

  hlo::Computation& computation_;
  bool prefers_row_major_;
  std::optional<basic::NameUniquer> names_;
  std::unordered_map<const Instruction*, Shape> original_;  // bitcast/custom-call operands, root
  Shape scratch_;  // the last preferred-layout requirement (see RequiredOperandShape)
  std::map<std::pair<Instruction*, std::string>, Instruction*> conversions_;
  bool changed_ = false;
  bool inserted_ = false;
};

}  // namespace

bool LayoutAssignment::Run(hlo::Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    changed |= ComputationLayouts(*computation, prefers_row_major_).Run();
  }
  return changed;
}

}  // namespace compiler

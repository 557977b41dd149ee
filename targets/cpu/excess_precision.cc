// Excess precision inside a fusion (see excess_precision.h).
#include "targets/cpu/excess_precision.h"

#include <map>

namespace cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

bool IsNarrowFloat(PrimitiveType type) {
  return type == PrimitiveType::kBF16 || type == PrimitiveType::kF16;
}
bool IsNarrowArray(const hlo::Shape& shape) { return shape.IsArray() && IsNarrowFloat(shape.type); }

// Ops that only move elements: the same op moves f32 elements as well.
bool MovesElements(Opcode opcode) {
  switch (opcode) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

// Elementwise ops whose value depends on the bits of the narrow type itself.
bool NeedsNarrowBits(Opcode opcode) {
  return opcode == Opcode::kBitcastConvert || opcode == Opcode::kReducePrecision;
}

class Widener {
 public:
  explicit Widener(const hlo::Computation& fused)
      : result_{std::make_unique<hlo::Computation>(fused.name() + ".f32"), {}} {}

  WidenedComputation Run(const hlo::Computation& fused) {
    for (const auto& member : fused.instructions()) Visit(*member);
    // A root reshape (softmax's squeeze) stays the root, rounding its operand: the CPU row
    // kernel peels such a root.
    const Instruction* original_root = fused.root();
    Instruction* root = nullptr;
    if ((original_root->opcode() == Opcode::kReshape ||
         original_root->opcode() == Opcode::kBitcast) &&
        IsNarrowArray(original_root->shape()) && !narrow_.count(original_root)) {
      root = Add(*original_root, original_root->opcode(), original_root->shape(),
                 {Narrow(original_root->operand(0))});
    } else {
      root = Narrow(original_root);
    }
    result_.computation->set_root(root);
    return std::move(result_);
  }

 private:
  Instruction* Add(const Instruction& like, Opcode opcode, hlo::Shape shape,
                   const std::vector<Instruction*>& operands) {
    auto inst = std::make_unique<Instruction>(like.name() + (opcode == like.opcode() ? "" : ".x"),
                                              opcode, std::move(shape));
    if (opcode == like.opcode()) {
      inst->set_attrs(like.attrs());
      inst->mutable_called_computations() = like.called_computations();
    }
    for (Instruction* operand : operands) inst->AppendOperand(operand);
    return result_.computation->AddInstruction(std::move(inst));
  }
  static hlo::Shape AsF32(hlo::Shape shape) {
    shape.type = PrimitiveType::kF32;
    return shape;
  }
  // The value of an original instruction in its original type (rounded back if carried wide).
  Instruction* Narrow(const Instruction* original) {
    auto it = narrow_.find(original);
    if (it != narrow_.end()) return it->second;
    Instruction* wide = wide_.at(original);
    if (!IsNarrowArray(original->shape())) return wide;
    Instruction* narrow = Add(*original, Opcode::kConvert, original->shape(), {wide});
    narrow_[original] = narrow;
    return narrow;
  }
  // The value as the widened computation carries it (f32 for narrow floats).
  Instruction* Wide(const Instruction* original) {
    auto it = wide_.find(original);
    if (it != wide_.end()) return it->second;
    Instruction* narrow = narrow_.at(original);
    Instruction* wide = IsNarrowArray(original->shape())
                            ? Add(*original, Opcode::kConvert, AsF32(original->shape()), {narrow})
                            : narrow;
    wide_[original] = wide;
    return wide;
  }

  void Visit(const Instruction& m) {
    const Opcode opcode = m.opcode();
    const bool elementwise = hlo::IsElementwise(opcode) && !NeedsNarrowBits(opcode);
    const bool narrow_result = IsNarrowArray(m.shape());
    const bool float_convert = opcode == Opcode::kConvert && m.operand_count() == 1 &&
                               m.operand(0)->shape().IsArray() &&
                               hlo::IsFloating(m.operand(0)->shape().type);
    std::vector<Instruction*> wide_operands;
    if (elementwise || MovesElements(opcode))
      for (const Instruction* operand : m.operands()) wide_operands.push_back(Wide(operand));
    if (float_convert && narrow_result && IsExplicitRounding(m)) {
      // convert(convert(x, bf16), f32): the program rounds on purpose and computes on in the
      // wide type, so the rounding is kept (XLA:CPU keeps it too).
      narrow_[&m] = Add(m, Opcode::kConvert, m.shape(), {wide_operands[0]});
      return;
    }
    if (float_convert && hlo::IsFloating(m.shape().type)) {
      // Between float types: a rounding to bf16/f16 is what excess precision drops; a widening
      // of a value already carried in f32 is nothing.
      Instruction* source = wide_operands[0];
      const PrimitiveType target = narrow_result ? PrimitiveType::kF32 : m.shape().type;
      hlo::Shape shape = m.shape();
      shape.type = target;
      wide_[&m] = source->shape().type == target
                      ? source
                      : Add(m, Opcode::kConvert, std::move(shape), {source});
      if (narrow_result) result_.widened.insert(wide_[&m]);
      return;
    }
    if (narrow_result && opcode == Opcode::kDivide &&
        m.operand(1)->opcode() == Opcode::kBroadcast) {
      // x / broadcast(s) -> x * broadcast(1 / s): one division per row (s is per row in
      // softmax and layer norm) instead of one per element. The product is within one f32 ulp
      // of the quotient, far below the bf16 rounding that follows.
      wide_[&m] = MultiplyByReciprocal(m, wide_operands[0], *m.operand(1));
      return;
    }
    if (narrow_result && (elementwise || MovesElements(opcode)) && opcode != Opcode::kConvert) {
      Instruction* wide = Add(m, opcode, AsF32(m.shape()), wide_operands);
      wide_[&m] = wide;
      result_.widened.insert(wide);
      return;
    }
    if (opcode == Opcode::kCompare || (elementwise && !narrow_result && opcode != Opcode::kConvert)) {
      // compare / is-finite of narrow values: the same test on the f32 values.
      wide_[&m] = Add(m, opcode, m.shape(), wide_operands);
      return;
    }
    if (narrow_result && opcode == Opcode::kReduce && m.operand_count() == 2) {
      if (const hlo::Computation* combiner = WidenCombiner(m)) {
        Instruction* reduce = Add(m, opcode, AsF32(m.shape()),
                                  {Wide(m.operand(0)), Wide(m.operand(1))});
        reduce->mutable_called_computations() = {const_cast<hlo::Computation*>(combiner)};
        wide_[&m] = reduce;
        result_.widened.insert(reduce);
        return;
      }
    }
    // Anything else keeps its types: narrow operands are rounded back first.
    std::vector<Instruction*> operands;
    for (const Instruction* operand : m.operands()) operands.push_back(Narrow(operand));
    narrow_[&m] = Add(m, opcode, m.shape(), operands);
  }

  // A rounding of a wider float to bf16/f16 whose every user converts the result back to a
  // wider float type: the narrow value is never computed with, so the rounding is all the
  // convert stands for, not a step whose precision may be exceeded.
  static bool IsExplicitRounding(const Instruction& convert) {
    if (IsNarrowFloat(convert.operand(0)->shape().type) || convert.users().empty()) return false;
    for (const Instruction* user : convert.users()) {
      if (user->opcode() != Opcode::kConvert || !hlo::IsFloating(user->shape().type) ||
          IsNarrowFloat(user->shape().type)) {
        return false;
      }
    }
    return true;
  }

  // An f32 copy of `reduce`'s combiner when it is max / min / add of its two parameters.
  const hlo::Computation* WidenCombiner(const Instruction& reduce) {
    if (reduce.called_computations().size() != 1) return nullptr;
    const hlo::Computation& original = *reduce.called_computations()[0];
    const Instruction* root = original.root();
    if (original.parameter_count() != 2 || root == nullptr || root->operand_count() != 2 ||
        root->operand(0) != original.parameter(0) || root->operand(1) != original.parameter(1))
      return nullptr;
    if (root->opcode() != Opcode::kMaximum && root->opcode() != Opcode::kMinimum &&
        root->opcode() != Opcode::kAdd)
      return nullptr;
    auto combiner = std::make_unique<hlo::Computation>(original.name() + ".f32");
    std::vector<Instruction*> parameters;
    for (int64_t number = 0; number < 2; ++number) {
      auto parameter = std::make_unique<Instruction>(original.parameter(number)->name(),
                                                     Opcode::kParameter,
                                                     hlo::Shape::Scalar(PrimitiveType::kF32));
      parameter->set_attrs(hlo::ParameterAttrs{number});
      parameters.push_back(combiner->AddInstruction(std::move(parameter)));
    }
    auto combine = std::make_unique<Instruction>(root->name(), root->opcode(),
                                                 hlo::Shape::Scalar(PrimitiveType::kF32));
    for (Instruction* parameter : parameters) combine->AppendOperand(parameter);
    combiner->set_root(combiner->AddInstruction(std::move(combine)));
    result_.combiners.push_back(std::move(combiner));
    return result_.combiners.back().get();
  }

  Instruction* MultiplyByReciprocal(const Instruction& divide, Instruction* numerator,
                                    const Instruction& broadcast) {
    Instruction* divisor = Wide(broadcast.operand(0));
    hlo::Literal one_value(hlo::Shape::Scalar(PrimitiveType::kF32));
    one_value.SetFromDouble(0, 1.0);
    auto one = std::make_unique<Instruction>(divide.name() + ".one", Opcode::kConstant,
                                             hlo::Shape::Scalar(PrimitiveType::kF32));
    one->set_attrs(hlo::ConstantAttrs{std::move(one_value), false});
    Instruction* scalar = result_.computation->AddInstruction(std::move(one));
    Instruction* ones = Add(divide, Opcode::kBroadcast, AsF32(divisor->shape()), {scalar});
    ones->set_attrs(hlo::DimensionsAttrs{});
    Instruction* reciprocal = Add(divide, Opcode::kDivide, AsF32(divisor->shape()), {ones, divisor});
    Instruction* spread = Add(broadcast, Opcode::kBroadcast, AsF32(broadcast.shape()), {reciprocal});
    Instruction* product = Add(divide, Opcode::kMultiply, AsF32(divide.shape()), {numerator, spread});
    result_.widened.insert(reciprocal);
    result_.widened.insert(product);
    return product;
  }

  WidenedComputation result_;
  std::map<const Instruction*, Instruction*> wide_;    // f32 for narrow floats, else the value
  std::map<const Instruction*, Instruction*> narrow_;  // the original type
};

}  // namespace

std::optional<WidenedComputation> WidenNarrowFloats(const hlo::Computation& fused) {
  bool any_narrow_op = false;
  for (const auto& member : fused.instructions())
    any_narrow_op |= IsNarrowArray(member->shape()) && member->opcode() != Opcode::kParameter &&
                     member->opcode() != Opcode::kConstant;
  if (!any_narrow_op) return std::nullopt;
  return Widener(fused).Run(fused);
}

}  // namespace cpu

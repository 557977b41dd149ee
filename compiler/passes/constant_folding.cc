// constant-folding: see constant_folding.h. Each candidate is evaluated alone: a scratch
// computation holds one parameter per operand and a copy of the instruction (calling the same
// computations, e.g. a reduce's to_apply), and hlo::EvaluateComputation runs it on the operand
// constants' literals.
#include "compiler/passes/constant_folding.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/passes/basic_pass_util.h"
#include "hlo/evaluator.h"

namespace compiler {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

bool IsFoldableConstant(const Instruction& inst) {
  return inst.opcode() == Opcode::kConstant && inst.has_attr<hlo::ConstantAttrs>() &&
         !inst.attr<hlo::ConstantAttrs>().elided && inst.shape().IsArray();
}

// Whether the opcode may be folded at all; size limits are checked separately.
bool OpcodeFoldable(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kBroadcast:  // keeps constants small; see the header
    case Opcode::kTuple:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAfterAll:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
      return false;
    default:
      break;
  }
  const hlo::OpClass op_class = hlo::OpcodeClass(op);
  return op_class != hlo::OpClass::kControl && op_class != hlo::OpClass::kCollective;
}

// Rough count of the evaluator's inner-loop steps (in double: window sizes in bad input can be
// huge), so that a small result computed from large operands — a long dot, a big convolution or
// reduce-window window — is not evaluated at compile time.
double EstimatedWork(const Instruction& inst) {
  const double result = static_cast<double>(inst.shape().ElementCount());
  double operands = 0;
  for (const Instruction* operand : inst.operands()) {
    operands += static_cast<double>(operand->shape().ElementCount());
  }
  double per_result = 1;
  if (inst.opcode() == Opcode::kDot && inst.has_attr<hlo::DotAttrs>()) {
    const hlo::Shape& lhs = inst.operand(0)->shape();
    for (int64_t d : inst.attr<hlo::DotAttrs>().dnums.lhs_contracting) {
      if (d >= 0 && d < lhs.rank()) per_result *= static_cast<double>(lhs.dims[d]);
    }
  } else if (inst.opcode() == Opcode::kConvolution && inst.has_attr<hlo::ConvolutionAttrs>()) {
    // Every output element reads one kernel slice: all kernel elements of one output feature.
    const hlo::Shape& kernel = inst.operand(1)->shape();
    const int64_t out_feature = inst.attr<hlo::ConvolutionAttrs>().dnums.kernel_output_feature;
    per_result = static_cast<double>(kernel.ElementCount());
    if (out_feature >= 0 && out_feature < kernel.rank() && kernel.dims[out_feature] > 0) {
      per_result /= static_cast<double>(kernel.dims[out_feature]);
    }
  } else if (inst.has_attr<hlo::WindowAttrs>()) {  // reduce-window, select-and-scatter
    for (const hlo::WindowDim& d : inst.attr<hlo::WindowAttrs>().window.dims) {
      per_result *= static_cast<double>(d.size);
    }
  }
  return result * per_result + operands;
}

bool WithinSizeLimits(const Instruction& inst) {
  if (!inst.shape().IsArray()) return false;
  const int64_t elements = inst.shape().ElementCount();
  if (elements < 0 || elements > ConstantFolding::kMaxFoldedElements) return false;
  if (inst.opcode() == Opcode::kIota && elements > ConstantFolding::kMaxFoldedIotaElements) {
    return false;
  }
  int64_t operand_elements = 0;
  for (const Instruction* operand : inst.operands()) {
    operand_elements += operand->shape().ElementCount();
    if (operand_elements > ConstantFolding::kMaxOperandElements) return false;
  }
  return EstimatedWork(inst) <= ConstantFolding::kMaxFoldWork;
}

bool ShouldFold(const Instruction& inst, const basic::SideEffects& side_effects) {
  if (!OpcodeFoldable(inst.opcode()) || !WithinSizeLimits(inst) || side_effects.Has(inst)) {
    return false;
  }
  for (const Instruction* operand : inst.operands()) {
    if (!IsFoldableConstant(*operand)) return false;
  }
  return true;
}

// The value of `inst` on its constant operands, or nothing when the evaluator refuses.
std::optional<hlo::Literal> Evaluate(const Instruction& inst) {
  Computation scratch("constant_folding_scratch");
  std::vector<Instruction*> parameters;
  std::vector<const hlo::Literal*> arguments;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Instruction& operand = *inst.operand(i);
    std::string parameter_name = "p";
    parameter_name += std::to_string(i);
    auto parameter = std::make_unique<Instruction>(std::move(parameter_name), Opcode::kParameter,
                                                   operand.shape());
    parameter->set_attrs(hlo::ParameterAttrs{i});
    parameters.push_back(scratch.AddInstruction(std::move(parameter)));
    arguments.push_back(&operand.attr<hlo::ConstantAttrs>().literal);
  }
  scratch.set_root(scratch.AddInstruction(basic::CloneInstruction(inst, "folded", parameters)));
  try {
    return hlo::EvaluateComputation(scratch, arguments);
  } catch (const hlo::Error&) {
    return std::nullopt;  // e.g. an op the evaluator does not implement: leave it unfolded
  }
}

bool FoldComputation(Computation& computation, const basic::SideEffects& side_effects) {
  std::unordered_set<Instruction*> folded;
  std::vector<Instruction*> created;
  // A snapshot: constants added below are appended to the computation while we walk it.
  std::vector<Instruction*> order;
  order.reserve(computation.instructions().size());
  for (const auto& inst : computation.instructions()) order.push_back(inst.get());
  for (Instruction* inst : order) {
    if (!ShouldFold(*inst, side_effects)) continue;
    std::optional<hlo::Literal> value = Evaluate(*inst);
    if (!value || !value->shape().IsArray()) continue;
    value->mutable_shape() = inst->shape();  // literal data is row-major whatever the layout
    auto constant = std::make_unique<Instruction>(inst->name(), Opcode::kConstant, inst->shape());
    constant->set_attrs(hlo::ConstantAttrs{std::move(*value), false});
    constant->set_location(inst->location());
    if (const hlo::OpaqueAttribute* metadata = inst->FindOpaqueAttribute("metadata")) {
      constant->mutable_opaque_attributes().push_back(*metadata);
    }
    Instruction* replacement = computation.AddInstruction(std::move(constant));
    inst->ReplaceAllUsesWith(replacement);
    folded.insert(inst);
    created.push_back(replacement);
  }
  if (folded.empty()) return false;
  basic::RemoveInstructions(computation, folded);
  // Intermediate results of a folded chain are now unused constants of our own making.
  std::unordered_set<Instruction*> unused_intermediates;
  for (Instruction* constant : created) {
    if (constant->users().empty() && computation.root() != constant) {
      unused_intermediates.insert(constant);
    }
  }
  basic::RemoveInstructions(computation, unused_intermediates);
  computation.SortTopologically();
  return true;
}

}  // namespace

bool ConstantFolding::Run(hlo::Module& module) {
  const basic::SideEffects side_effects(module);
  bool changed = false;
  for (Computation* computation : basic::ReachableComputationsCalleesFirst(module)) {
    changed |= FoldComputation(*computation, side_effects);
  }
  return changed;
}

}  // namespace compiler

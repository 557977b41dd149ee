// Control flow and calls: call, fusion, while, conditional, custom-call.
//
// Guarantees:
//  - call / fusion evaluate the called computation on the operands.
//  - while runs at most GlobalLimits().max_while_iterations body iterations; one more is an
//    hlo::Error naming the limit, never a hang.
//  - conditional takes a pred selector (true -> branch 0, false -> branch 1) or an s32 index;
//    an index outside [0, branches) runs the last branch, as XLA does.
//  - custom-call looks the target up in EvaluatorOptions::custom_calls, then in the builtin
//    registry; an unknown target is an hlo::Error naming the target and the instruction.
#include <string>
#include <vector>

#include "hlo/custom_call_targets.h"
#include "hlo/evaluator_family.h"
#include "hlo/progress.h"

namespace hlo::eval {
namespace {

const Computation& Called(const Instruction& inst, size_t index) {
  const auto& called = inst.called_computations();
  if (index >= called.size() || called[index] == nullptr) {
    throw Error("'" + inst.name() + "' is missing called computation " + std::to_string(index));
  }
  return *called[index];
}

bool PredValue(const Literal& value, const char* what) {
  if (!value.shape().IsArray() || value.shape().type != PrimitiveType::kPred ||
      value.element_count() != 1) {
    throw Error(std::string(what) + " must be a pred scalar, got " + value.shape().ToString(false));
  }
  return value.data<uint8_t>()[0] != 0;
}

Literal While(const Instruction& inst, Operands operands, EvalContext& context) {
  const Computation& condition = Called(inst, 0);
  const Computation& body = Called(inst, 1);
  if (operands.size() != 1) throw Error("while takes exactly one operand");
  const int64_t limit = GlobalLimits().max_while_iterations;
  Literal state = *operands[0];
  LoopProgressScope progress(inst.name());
  for (int64_t iteration = 0;; ++iteration) {
    progress.Trip(iteration);
    const Literal* argument = &state;
    if (!PredValue(context.Call(condition, {&argument, 1}), "while condition result")) break;
    if (iteration >= limit) {
      // The evaluator's error names the instruction ("in 'w' (while): ...").
      throw Error(inst.location(),
                  "the loop exceeded " + std::to_string(limit) + " iterations");
    }
    state = context.Call(body, {&argument, 1});
  }
  return state;
}

Literal Conditional(const Instruction& inst, Operands operands, EvalContext& context) {
  const auto& branches = inst.called_computations();
  if (branches.empty() || operands.size() != branches.size() + 1) {
    throw Error("conditional needs one operand per branch plus the selector");
  }
  const Literal& selector = *operands[0];
  int64_t branch = 0;
  if (selector.shape().IsArray() && selector.shape().type == PrimitiveType::kPred) {
    if (branches.size() != 2) throw Error("a pred selector needs exactly two branches");
    branch = PredValue(selector, "conditional selector") ? 0 : 1;
  } else {
    branch = ScalarAsInt64(selector);
    const int64_t count = static_cast<int64_t>(branches.size());
    if (branch < 0 || branch >= count) branch = count - 1;
  }
  const Literal* argument = operands[branch + 1];
  return context.Call(Called(inst, static_cast<size_t>(branch)), {&argument, 1});
}

Literal CustomCall(const Instruction& inst, Operands operands, EvalContext& context) {
  const std::string& target = inst.attr<CustomCallAttrs>().target;
  const CustomCallFn* fn = nullptr;
  if (const CustomCallRegistry* user = context.options().custom_calls) fn = user->Find(target);
  if (fn == nullptr) {
    static const CustomCallRegistry* builtin = [] {
      auto* registry = new CustomCallRegistry;
      RegisterBuiltinCustomCalls(*registry);
      return registry;
    }();
    fn = builtin->Find(target);
  }
  if (fn == nullptr) {
    throw Error("unknown custom-call target '" + target + "' in instruction '" + inst.name() +
                "' (register it in EvaluatorOptions::custom_calls)");
  }
  Literal result = (*fn)(inst, operands);
  if (!result.shape().Compatible(inst.shape())) {
    throw Error("custom-call '" + target + "' returned " + result.shape().ToString(false) +
                ", expected " + inst.shape().ToString(false));
  }
  return result;
}

}  // namespace

Literal EvaluateControl(const Instruction& inst, Operands operands, EvalContext& context) {
  switch (inst.opcode()) {
    case Opcode::kCall:
    case Opcode::kFusion:
      return context.Call(Called(inst, 0), operands);
    case Opcode::kWhile:
      return While(inst, operands, context);
    case Opcode::kConditional:
      return Conditional(inst, operands, context);
    case Opcode::kCustomCall:
      return CustomCall(inst, operands, context);
    case Opcode::kAsyncStart: {
      // ((operands), result, context...): the context words are zero, as no model reads them.
      std::vector<Literal> elements;
      std::vector<Literal> copies;
      for (const Literal* operand : operands) copies.push_back(*operand);
      elements.push_back(Literal::Tuple(std::move(copies)));
      elements.push_back(context.Call(Called(inst, 0), operands));
      const auto& shapes = inst.shape().tuple_shapes;
      for (size_t k = 2; k < shapes.size(); ++k) elements.push_back(Literal(shapes[k]));
      return Literal::Tuple(std::move(elements));
    }
    case Opcode::kAsyncUpdate:
      return *operands[0];
    case Opcode::kAsyncDone:
      return operands[0]->elements().at(1);
    default:
      break;
  }
  if (OpcodeClass(inst.opcode()) == OpClass::kCollective) {
    return EvaluateCollective(inst, operands, context);
  }
  throw Error("'" + std::string(OpcodeName(inst.opcode())) + "' is not a control op");
}

}  // namespace hlo::eval

namespace hlo {
void RegisterBuiltinCustomCalls(CustomCallRegistry& registry) {
  registry.Register("TopK", eval::EvaluateTopKCustomCall);
  // Annotations JAX and XLA put on values that do not change them on one device: SPMD sharding
  // hints, and placement between device and host memory (host offloading).
  for (std::string_view target : AnnotationCustomCallTargets())
    registry.Register(std::string(target), eval::EvaluateAnnotationCustomCall);
  registry.Register("AllocateBuffer", eval::EvaluateAllocateBufferCustomCall);
  registry.Register("GetRngSeed", eval::EvaluateGetRngSeedCustomCall);
  registry.Register("__onednn$layernorm", eval::EvaluateOneDnnLayerNormCustomCall);
}
}  // namespace hlo

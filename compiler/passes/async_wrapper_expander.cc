// async-wrapper-expander: see async_wrapper_expander.h.
#include "compiler/passes/async_wrapper_expander.h"

#include <unordered_set>
#include <vector>

#include "compiler/passes/basic_pass_util.h"
#include "compiler/passes/rewrite_builder.h"

namespace compiler {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

bool IsAsync(const Instruction& inst) {
  return inst.opcode() == Opcode::kAsyncStart || inst.opcode() == Opcode::kAsyncUpdate ||
         inst.opcode() == Opcode::kAsyncDone;
}

bool ExpandComputation(Computation& computation) {
  std::vector<Instruction*> wrapped;
  for (const auto& inst : computation.instructions()) {
    if (IsAsync(*inst)) wrapped.push_back(inst.get());
  }
  if (wrapped.empty()) return false;
  RewriteBuilder builder(computation);
  // In program order: a start is rewritten before the update or done that reads it.
  for (Instruction* inst : wrapped) {
    builder.set_origin(inst);
    Instruction* replacement = nullptr;
    switch (inst->opcode()) {
      case Opcode::kAsyncStart: {
        const std::vector<Instruction*> operands(inst->operands().begin(),
                                                 inst->operands().end());
        Instruction* call = builder.Add(Opcode::kCall, inst->shape().tuple_shapes.at(1), operands,
                                        hlo::NoAttrs{}, inst->name() + ".call",
                                        inst->called_computations());
        std::vector<Instruction*> elements = {
            builder.Add(Opcode::kTuple, inst->shape().tuple_shapes.at(0), operands,
                        hlo::NoAttrs{}, inst->name() + ".operands"),
            call};
        const auto& shapes = inst->shape().tuple_shapes;
        for (size_t k = 2; k < shapes.size(); ++k) elements.push_back(builder.Splat(shapes[k], 0));
        replacement = builder.Add(Opcode::kTuple, inst->shape(), elements, hlo::NoAttrs{});
        break;
      }
      case Opcode::kAsyncUpdate:
        replacement = inst->operand(0);
        break;
      default:  // async-done
        replacement = builder.Add(Opcode::kGetTupleElement, inst->shape(), {inst->operand(0)},
                                  hlo::TupleIndexAttrs{1});
        break;
    }
    inst->ReplaceAllUsesWith(replacement);
  }
  basic::RemoveInstructions(computation,
                            std::unordered_set<Instruction*>(wrapped.begin(), wrapped.end()));
  computation.SortTopologically();
  return true;
}

}  // namespace

bool AsyncWrapperExpander::Run(hlo::Module& module) {
  bool changed = false;
  for (Computation* computation : basic::ReachableComputationsCalleesFirst(module)) {
    changed |= ExpandComputation(*computation);
  }
  return changed;
}

}  // namespace compiler

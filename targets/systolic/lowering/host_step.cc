// HostStepModule (lowering.h): the module a host-fallback step runs — the instruction over fresh
// parameters, with copies of just the computations it calls (transitively), so a step of a big
// model does not carry the whole model (its constants included) along.
#include <map>

#include "targets/systolic/lowering/lowering.h"

namespace systolic::lowering {
namespace {

using hlo::Computation;
using hlo::Instruction;

std::unique_ptr<Instruction> CopyInstruction(const Instruction& inst,
                                             const std::map<const Computation*, Computation*>& copies) {
  auto copy = std::make_unique<Instruction>(inst.name(), inst.opcode(), inst.shape());
  copy->set_attrs(inst.attrs());
  copy->mutable_opaque_attributes() = inst.opaque_attributes();
  copy->set_location(inst.location());
  for (const Computation* called : inst.called_computations()) {
    copy->mutable_called_computations().push_back(copies.at(called));
  }
  return copy;
}

// Copies `computation` and, first, every computation it calls (callees precede callers).
void CopyComputation(const Computation& computation, hlo::Module& into,
                     std::map<const Computation*, Computation*>& copies) {
  if (copies.count(&computation)) return;
  for (const auto& inst : computation.instructions()) {
    for (const Computation* called : inst->called_computations()) {
      CopyComputation(*called, into, copies);
    }
  }
  auto copy = std::make_unique<Computation>(computation.name());
  std::map<const Instruction*, Instruction*> instructions;
  for (const auto& inst : computation.instructions()) {
    instructions[inst.get()] = copy->AddInstruction(CopyInstruction(*inst, copies));
  }
  for (const auto& inst : computation.instructions()) {
    for (const Instruction* operand : inst->operands()) {
      instructions.at(inst.get())->AppendOperand(instructions.at(operand));
    }
  }
  copy->set_root(instructions.at(computation.root()));
  copies[&computation] = into.AddComputation(std::move(copy));
}

}  // namespace

std::unique_ptr<hlo::Module> HostStepModule(const hlo::Module& module,
                                            const hlo::Instruction& inst) {
  auto step_module = std::make_unique<hlo::Module>(module.name() + ".host." + inst.name());
  std::map<const Computation*, Computation*> copies;
  for (const Computation* called : inst.called_computations()) {
    CopyComputation(*called, *step_module, copies);
  }
  auto step = std::make_unique<Computation>("host_step");
  std::vector<Instruction*> params;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    auto param = std::make_unique<Instruction>("p" + std::to_string(i), hlo::Opcode::kParameter,
                                               inst.operand(i)->shape());
    param->set_attrs(hlo::ParameterAttrs{i});
    params.push_back(step->AddInstruction(std::move(param)));
  }
  std::unique_ptr<Instruction> copy = CopyInstruction(inst, copies);
  for (Instruction* param : params) copy->AppendOperand(param);
  step->set_root(step->AddInstruction(std::move(copy)));
  step_module->set_entry(step_module->AddComputation(std::move(step)));
  return step_module;
}

std::unique_ptr<hlo::Module> ComputationModule(const hlo::Module& module,
                                               const hlo::Computation& computation) {
  auto copy = std::make_unique<hlo::Module>(module.name() + "." + computation.name());
  std::map<const Computation*, Computation*> copies;
  CopyComputation(computation, *copy, copies);
  copy->set_entry(copies.at(&computation));
  return copy;
}

}  // namespace systolic::lowering

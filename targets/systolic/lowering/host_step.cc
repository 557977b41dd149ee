// HostStepModule (lowering.h): the module a host-fallback step runs — the instruction over fresh
// parameters, with copies of just the computations it calls (transitively), so a step of a big
// model does not carry the whole model (its constants included) along. And
// CheckHostStepsAgainst: a host step of an op without accelerator program that the target's
// description calls native is an error.
#include <map>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "compiler/ownership.h"
#include "hlo/diagnostic.h"
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
    std::string name = "p";  // appended: GCC 12 warns falsely (-Wrestrict) on "p" + string
    name += std::to_string(i);
    auto param = std::make_unique<Instruction>(std::move(name), hlo::Opcode::kParameter,
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

std::map<std::string, std::string> HostStepReasons(const hlo::Module& optimized,
                                                   const ArchConfig& config) {
  std::map<std::string, std::string> reasons;
  // Loops and conditionals carry what they call, lowered.
  std::vector<std::shared_ptr<const LoweredModule>> pending = {
      std::make_shared<const LoweredModule>(Lower(optimized, config))};
  while (!pending.empty()) {
    const std::shared_ptr<const LoweredModule> lowered = pending.back();
    pending.pop_back();
    for (const Step& step : lowered->steps) {
      if (const auto* host = std::get_if<HostStep>(&step)) {
        // A collective (and replica-id / partition-id) is the chips' exchange over their links
        // (chip_links.h), the report's owner class of its own, not work the host does for the
        // accelerator, although the host computes its values.
        if (hlo::OpcodeClass(host->module->entry()->root()->opcode()) ==
            hlo::OpClass::kCollective) {
          continue;
        }
        reasons.emplace(host->instruction, host->reason);
      } else if (const auto* loop = std::get_if<LoopStep>(&step)) {
        pending.push_back(loop->lowered_condition);
        pending.push_back(loop->lowered_body);
      } else if (const auto* branch = std::get_if<BranchStep>(&step)) {
        for (const auto& lowered_branch : branch->lowered_branches) {
          pending.push_back(lowered_branch);
        }
      }
    }
  }
  return reasons;
}

void CheckHostStepsAgainst(const hlo::Module& optimized, const LoweredModule& lowered,
                           const compiler::TargetDescription& description) {
  std::unordered_map<std::string_view, const Instruction*> by_name;  // filled when first needed
  for (const Step& step : lowered.steps) {
    const auto* host = std::get_if<HostStep>(&step);
    if (host == nullptr || !host->no_instruction) continue;
    if (by_name.empty()) {
      for (const auto& inst : optimized.entry()->instructions()) by_name[inst->name()] = inst.get();
    }
    auto found = by_name.find(host->instruction);
    if (found == by_name.end()) continue;  // not an entry instruction: nothing to compare
    const Instruction* inst = found->second;
    if (compiler::InstructionOwner(*inst, description).owner !=
        compiler::Owner::kAcceleratorNative) {
      continue;
    }
    throw hlo::Error(inst->location(),
                     "systolic lowering: instruction " + inst->name() + " (" +
                         std::string(hlo::OpcodeName(inst->opcode())) + ") runs on the host (" +
                         host->reason + "), but targets/" + description.name +
                         "/description.cc calls it native: lower it, or make the description "
                         "say host (lowering/native_ops.cc)");
  }
}

}  // namespace systolic::lowering

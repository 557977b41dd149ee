// Array constants out of fusions (fused_constants.h).
#include "targets/systolic/lowering/fused_constants.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace systolic::lowering {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

bool IsArrayConstant(const Instruction& inst) {
  return inst.opcode() == Opcode::kConstant && inst.shape().IsArray() &&
         inst.shape().ElementCount() > 1;
}

// Fused computation -> the fusions calling it from computations that are not fused.
std::map<Computation*, std::vector<std::pair<Computation*, Instruction*>>> FusionsByComputation(
    const hlo::Module& module) {
  std::set<const Computation*> fused;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kFusion) {
        for (const Computation* called : inst->called_computations()) fused.insert(called);
      }
    }
  }
  // A fused computation also called from inside a fusion keeps its constants: that caller is
  // not rewritten, so it would miss the new operand.
  std::set<const Computation*> called_from_fusions;
  for (const auto& computation : module.computations()) {
    if (!fused.count(computation.get())) continue;
    for (const auto& inst : computation->instructions()) {
      for (const Computation* called : inst->called_computations()) {
        called_from_fusions.insert(called);
      }
    }
  }
  std::map<Computation*, std::vector<std::pair<Computation*, Instruction*>>> callers;
  for (const auto& computation : module.computations()) {
    if (fused.count(computation.get())) continue;
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() != Opcode::kFusion || inst->called_computations().empty()) continue;
      Computation* called = inst->called_computations().front();
      if (called_from_fusions.count(called)) continue;
      bool has_array_constant = false;
      for (const auto& f : called->instructions()) has_array_constant |= IsArrayConstant(*f);
      if (has_array_constant) callers[called].emplace_back(computation.get(), inst.get());
    }
  }
  return callers;
}

std::string UniqueName(std::set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int n = 1; taken.count(name); ++n) name = base + "." + std::to_string(n);
  taken.insert(name);
  return name;
}

}  // namespace

std::unique_ptr<hlo::Module> OutlineFusedArrayConstants(const hlo::Module& module) {
  if (FusionsByComputation(module).empty()) return nullptr;
  std::unique_ptr<hlo::Module> out = module.Clone();
  std::set<std::string> taken;
  for (const auto& computation : out->computations()) {
    for (const auto& inst : computation->instructions()) taken.insert(inst->name());
  }
  std::set<Computation*> sort;
  for (auto& [fused, callers] : FusionsByComputation(*out)) {
    std::vector<Instruction*> constants;
    for (const auto& inst : fused->instructions()) {
      if (IsArrayConstant(*inst)) constants.push_back(inst.get());
    }
    for (Instruction* constant : constants) {
      auto parameter = std::make_unique<Instruction>(
          UniqueName(taken, constant->name() + ".param"), Opcode::kParameter,
          constant->shape());
      parameter->set_attrs(hlo::ParameterAttrs{fused->parameter_count()});
      Instruction* added = fused->AddInstruction(std::move(parameter));
      constant->ReplaceAllUsesWith(added);
      if (fused->root() == constant) fused->set_root(added);
      for (auto& [caller, fusion] : callers) {
        auto outlined = std::make_unique<Instruction>(UniqueName(taken, constant->name()),
                                                      Opcode::kConstant, constant->shape());
        outlined->set_attrs(constant->attr<hlo::ConstantAttrs>());
        fusion->AppendOperand(caller->AddInstruction(std::move(outlined)));
        sort.insert(caller);
      }
      fused->RemoveInstruction(constant);
    }
    sort.insert(fused);
  }
  for (Computation* computation : sort) computation->SortTopologically();
  return out;
}

}  // namespace systolic::lowering

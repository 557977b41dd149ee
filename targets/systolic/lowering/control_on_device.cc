// Loops and conditionals the control unit runs (control_on_device.h).
#include "targets/systolic/lowering/control_on_device.h"

#include <variant>

namespace systolic::lowering {

std::string HostNeed(const LoweredModule& module) {
  for (const Step& step : module.steps) {
    if (std::holds_alternative<AcceleratorStep>(step)) continue;
    if (const auto* host = std::get_if<HostStep>(&step)) {
      return "host step " + host->instruction + " (" + host->reason + ")";
    }
    if (const auto* loop = std::get_if<LoopStep>(&step)) {
      if (loop->on_device) continue;
      return "inner loop " + loop->instruction + " under host control";
    }
    const BranchStep& branch = std::get<BranchStep>(step);
    if (branch.on_device) continue;
    return "inner conditional " + branch.instruction + " under host control";
  }
  return "";
}

Instruction PredicateTest(uint64_t address) {
  Instruction test = MakeInstruction(Opcode::kCtrlTest);
  test.set(CtrlTestField::src, address);
  return test;
}

Instruction BranchIndexTest(uint64_t address, int64_t count) {
  Instruction test = MakeInstruction(Opcode::kCtrlIndex);
  test.set(CtrlIndexField::src, address);
  test.set(CtrlIndexField::count, static_cast<uint64_t>(count));
  return test;
}

void EndWithTest(std::vector<Step>& steps, const Instruction& test) {
  AcceleratorStep* last = steps.empty() ? nullptr : std::get_if<AcceleratorStep>(&steps.back());
  if (last == nullptr) {
    AcceleratorStep step;
    step.program.instructions = {test, MakeInstruction(Opcode::kHalt)};
    steps.emplace_back(std::move(step));
    return;
  }
  // Before the halt every program ends with: the test reads what the program's stores wrote.
  Program& program = last->program;
  const size_t at = !program.instructions.empty() &&
                            program.instructions.back().opcode == Opcode::kHalt
                        ? program.instructions.size() - 1
                        : program.instructions.size();
  program.instructions.insert(program.instructions.begin() + static_cast<std::ptrdiff_t>(at),
                              test);
  if (!program.locations.empty()) {
    const hlo::SourceLocation where = program.locations.at(at == 0 ? 0 : at - 1);
    program.locations.insert(program.locations.begin() + static_cast<std::ptrdiff_t>(at), where);
  }
}

}  // namespace systolic::lowering

// Loops the control unit runs (loop_on_device.h).
#include "targets/systolic/lowering/loop_on_device.h"

#include <variant>

namespace systolic::lowering {
namespace {

// "" when every step of `module` is an accelerator program or a loop on the device.
std::string FirstHostNeed(const LoweredModule& module) {
  for (const Step& step : module.steps) {
    if (std::holds_alternative<AcceleratorStep>(step)) continue;
    if (const auto* host = std::get_if<HostStep>(&step)) {
      return "host step " + host->instruction + " (" + host->reason + ")";
    }
    if (const auto* loop = std::get_if<LoopStep>(&step)) {
      if (loop->on_device) continue;
      return "inner loop " + loop->instruction + " under host control";
    }
    return "conditional " + std::get<BranchStep>(step).instruction + " (chosen by the host)";
  }
  return "";
}

}  // namespace

std::string HostDrivenReason(const LoweredModule& condition, const LoweredModule& body) {
  if (std::string need = FirstHostNeed(condition); !need.empty()) return "condition: " + need;
  if (std::string need = FirstHostNeed(body); !need.empty()) return "body: " + need;
  return "";
}

void EndWithPredicateTest(LoweredModule& condition) {
  Instruction test = MakeInstruction(Opcode::kCtrlTest);
  test.set(CtrlTestField::src, condition.result.at(0).address);
  AcceleratorStep* last =
      condition.steps.empty() ? nullptr : std::get_if<AcceleratorStep>(&condition.steps.back());
  if (last == nullptr) {
    AcceleratorStep step;
    step.program.instructions = {test, MakeInstruction(Opcode::kHalt)};
    condition.steps.emplace_back(std::move(step));
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

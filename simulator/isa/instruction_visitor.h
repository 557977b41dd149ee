// InstructionVisitor<Result>: one pure virtual method per row of isa.def (On<Id>, e.g. OnVAdd),
// generated from the table as Pulley's OpVisitor is. The accelerator's three readers of the
// ISA's meaning implement it — the functional semantics (functional.cc), the timing model
// (unit_timing.cc) and the liveness planner (sim_liveness.cc) — so a new ISA_INSTR row without a
// handler leaves each of them abstract and the build fails where they are instantiated, instead
// of falling into a `default:` at run time. tests/simulator/fake_isa_row_check.cmake adds such a
// row (RETARGET_ISA_FAKE_ROW) and checks that all three stop compiling.
#pragma once

#include <string>

#include "hlo/diagnostic.h"
#include "simulator/isa/isa.h"

namespace systolic {

template <class Result>
class InstructionVisitor {
 public:
  virtual ~InstructionVisitor() = default;

#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...) \
  virtual Result On##id(const Instruction& inst) = 0;
#include "simulator/isa/isa.def"

  // Calls the method of inst.opcode; an opcode outside the table is an hlo::Error.
  Result Visit(const Instruction& inst) {
    switch (inst.opcode) {
#define ISA_INSTR(id, mnemonic, opcode, unit, summary, ...) \
  case Opcode::k##id:                                       \
    return On##id(inst);
#include "simulator/isa/isa.def"
    }
    throw hlo::Error("opcode " + std::to_string(static_cast<int>(inst.opcode)) +
                     " is not an instruction of isa.def");
  }
};

}  // namespace systolic

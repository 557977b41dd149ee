// A program's data effects in program order (replay.h).
#include "simulator/replay.h"

#include <cstdint>
#include <span>

#include "hlo/diagnostic.h"
#include "simulator/dma_transfer.h"
#include "simulator/functional.h"
#include "simulator/sim_shared.h"

namespace simulator {

using systolic::ConfigRegister;
using systolic::Opcode;

bool TimingIsDataIndependent(const systolic::Program& program) {
  for (const systolic::Instruction& inst : program.instructions) {
    if (inst.opcode == Opcode::kDmaScatter) return false;
    if (inst.opcode == Opcode::kCfgLoad) {
      const auto reg = static_cast<ConfigRegister>(inst.get(systolic::CfgLoadField::reg));
      if (reg != ConfigRegister::kLoadDramOffset && reg != ConfigRegister::kStoreDramOffset) {
        return false;
      }
    }
  }
  return true;
}

void Replay(const systolic::Program& program, const systolic::ArchConfig& config,
            Memories& memories, SimStats& stats) {
  RegisterFile registers{};
  WeightBuffers weights;
  stats.test_flag.reset();
  stats.branch_index.reset();
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const systolic::Instruction& inst = program.instructions[i];
    try {
      switch (inst.opcode) {
        case Opcode::kHalt:
          return;
        case Opcode::kNop:
        case Opcode::kSemSignal:  // program order already satisfies every semaphore
        case Opcode::kSemWait:
          break;
        case Opcode::kCfgSet:
        case Opcode::kCfgLoad:
          ExecuteConfigWrite(inst, registers, memories);
          break;
        case Opcode::kCtrlTest:
        case Opcode::kCtrlIndex:
          ReadBranchCondition(inst, memories, stats);
          break;
        case Opcode::kDmaLoad:
        case Opcode::kDmaGather:
          CopyDma(DecodeDma(inst, registers, config, memories), /*dram_to_local=*/true, memories);
          break;
        case Opcode::kDmaStore:
        case Opcode::kDmaScatter:
          CopyDma(DecodeDma(inst, registers, config, memories), /*dram_to_local=*/false, memories);
          break;
        default:
          if (systolic::ExecutingUnit(inst) == systolic::Unit::kMxu) {
            ExecuteMxu(inst, config, registers, weights, memories);
          } else {
            ExecuteVector(inst, registers, memories);
          }
      }
    } catch (const hlo::Error& e) {
      throw sim::InstructionError(program, i, e.message());
    }
  }
}

}  // namespace simulator

// The data effect of each instruction (functional.h): one handler per row of isa.def
// (InstructionVisitor). The compute units' rows run their semantics (functional_mxu.cc,
// functional_vector*.cc); the DMA engines and the front end move bytes and set registers in
// their own units (sim_dma.cc, sim_unit.cc), so their rows are refused here; the register write
// of cfg.set / cfg.load is shared by the front end's units and the replay (ExecuteConfigWrite).
#include <span>
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/functional.h"
#include "simulator/functional_mxu_internal.h"
#include "simulator/functional_vector_internal.h"
#include "simulator/isa/instruction_visitor.h"

namespace simulator {
namespace {

using systolic::Instruction;
namespace vec = vector_internal;

// The matrix unit reads the architecture and the weight buffers; the vector unit neither, so
// ExecuteVector passes none (nullptr) instead of building stand-ins per instruction.
class DataEffect final : public systolic::InstructionVisitor<void> {
 public:
  DataEffect(const systolic::ArchConfig* config, const RegisterFile& registers,
             WeightBuffers* weights, Memories& memories)
      : config_(config), registers_(registers), weights_(weights), memories_(memories) {}

  void OnNop(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnHalt(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnCfgSet(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnCfgLoad(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnCtrlTest(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnCtrlIndex(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnSemSignal(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnSemWait(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnDmaLoad(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnDmaStore(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnDmaGather(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnDmaScatter(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnMxuLoadWeights(const Instruction& inst) override {
    mxu_internal::ExecuteLoadWeights(inst, *config_, registers_, *weights_, memories_);
  }
  void OnMxuMatmul(const Instruction& inst) override {
    mxu_internal::ExecuteMatmul(inst, *config_, registers_, *weights_, memories_);
  }
  void OnMxuConv(const Instruction& inst) override {
    mxu_internal::ExecuteConv(inst, *config_, registers_, *weights_, memories_);
  }
  void OnVAdd(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVSub(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVMul(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVMax(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVMin(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVCmp(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVShl(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVShra(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVShrl(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVAnd(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVOr(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVXor(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVDiv(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVRem(const Instruction& inst) override { vec::ExecuteBinary(inst, memories_); }
  void OnVSel(const Instruction& inst) override { vec::ExecuteSelect(inst, memories_); }
  void OnVMov(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVExp(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVRecip(const Instruction& inst) override {
    vec::ExecuteUnary(inst, memories_);
  }
  void OnVRsqrt(const Instruction& inst) override {
    vec::ExecuteUnary(inst, memories_);
  }
  void OnVTanh(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVSin(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVCos(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVLog(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVLog1p(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVExpm1(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVLogistic(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVErf(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVFloor(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVCeil(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVRound(const Instruction& inst) override { vec::ExecuteUnary(inst, memories_); }
  void OnVFill(const Instruction& inst) override { vec::ExecuteFill(inst, memories_); }
  void OnVIota(const Instruction& inst) override {
    vec::ExecuteIota(inst, registers_, memories_);
  }
  void OnVCvt(const Instruction& inst) override { vec::ExecuteConvert(inst, memories_); }
  void OnVRequant(const Instruction& inst) override {
    vec::ExecuteRequantize(inst, registers_, memories_);
  }
  void OnVRedSum(const Instruction& inst) override {
    vec::ExecuteReduce(inst, memories_);
  }
  void OnVRedMax(const Instruction& inst) override {
    vec::ExecuteReduce(inst, memories_);
  }
  void OnVBcast(const Instruction& inst) override {
    vec::ExecuteBroadcast(inst, memories_);
  }
  void OnVTrans(const Instruction& inst) override { vec::ExecuteTranspose(inst, memories_); }
  void OnVBitonic(const Instruction& inst) override { vec::ExecuteBitonic(inst, memories_); }

 private:
  [[noreturn]] static void NotComputeUnit(const Instruction& inst) {
    throw hlo::Error(std::string(systolic::GetInstrInfo(inst.opcode).mnemonic) +
                     " has no compute-unit data effect (its unit executes it)");
  }

  const systolic::ArchConfig* config_;
  const RegisterFile& registers_;
  WeightBuffers* weights_;
  Memories& memories_;
};

// Checks the unit first, so each entry point names what it expected.
void RequireUnit(const Instruction& inst, systolic::Unit unit, const char* what) {
  if (systolic::GetInstrInfo(inst.opcode).unit != unit) {
    throw hlo::Error(std::string(systolic::GetInstrInfo(inst.opcode).mnemonic) + " is not a " +
                     what + " instruction");
  }
}

}  // namespace

void ExecuteMxu(const Instruction& inst, const systolic::ArchConfig& config,
                const RegisterFile& registers, WeightBuffers& weights, Memories& memories) {
  RequireUnit(inst, systolic::Unit::kMxu, "matrix-unit");
  DataEffect(&config, registers, &weights, memories).Visit(inst);
}

int64_t ExecuteConfigWrite(const Instruction& inst, RegisterFile& registers, Memories& memories) {
  if (inst.opcode == systolic::Opcode::kCfgSet) {
    registers.at(inst.get(systolic::CfgSetField::reg)) =
        static_cast<uint32_t>(inst.get(systolic::CfgSetField::value));
    return 0;
  }
  if (inst.opcode != systolic::Opcode::kCfgLoad) {
    throw hlo::Error(std::string(systolic::GetInstrInfo(inst.opcode).mnemonic) +
                     " writes no configuration register");
  }
  const uint64_t src = inst.get(systolic::CfgLoadField::src);
  std::span<const uint8_t> bytes = memories.Local(src).Read(Memories::LocalOffset(src), 4);
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value |= uint32_t{bytes[i]} << (8 * i);
  registers.at(inst.get(systolic::CfgLoadField::reg)) = value;
  return 4;
}

void ExecuteVector(const Instruction& inst, const RegisterFile& registers, Memories& memories) {
  RequireUnit(inst, systolic::Unit::kVector, "vector-unit");
  DataEffect(nullptr, registers, nullptr, memories).Visit(inst);
}

}  // namespace simulator

// The data effect of each instruction (functional.h): one handler per row of isa.def
// (InstructionVisitor). The compute units' rows run their semantics (functional_mxu.cc,
// functional_vector*.cc); the DMA engines and the front end move bytes and set registers in
// their own units (sim_dma.cc, sim_unit.cc), so their rows are refused here.
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/functional.h"
#include "simulator/functional_mxu_internal.h"
#include "simulator/functional_vector_internal.h"
#include "simulator/isa/instruction_visitor.h"

namespace simulator {
namespace {

using systolic::Instruction;

class DataEffect final : public systolic::InstructionVisitor<void> {
 public:
  DataEffect(const systolic::ArchConfig& config, const RegisterFile& registers,
             WeightBuffers& weights, Memories& memories)
      : config_(config), registers_(registers), weights_(weights), memories_(memories) {}

  void OnNop(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnHalt(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnCfgSet(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnSemSignal(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnSemWait(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnDmaLoad(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnDmaStore(const Instruction& inst) override { NotComputeUnit(inst); }
  void OnMxuLoadWeights(const Instruction& inst) override {
    mxu_internal::ExecuteLoadWeights(inst, config_, registers_, weights_, memories_);
  }
  void OnMxuMatmul(const Instruction& inst) override {
    mxu_internal::ExecuteMatmul(inst, config_, registers_, weights_, memories_);
  }
  void OnMxuConv(const Instruction& inst) override {
    mxu_internal::ExecuteConv(inst, config_, registers_, weights_, memories_);
  }
  void OnVAdd(const Instruction& inst) override { Elementwise(inst); }
  void OnVSub(const Instruction& inst) override { Elementwise(inst); }
  void OnVMul(const Instruction& inst) override { Elementwise(inst); }
  void OnVMax(const Instruction& inst) override { Elementwise(inst); }
  void OnVMin(const Instruction& inst) override { Elementwise(inst); }
  void OnVCmp(const Instruction& inst) override { Elementwise(inst); }
  void OnVSel(const Instruction& inst) override { Elementwise(inst); }
  void OnVMov(const Instruction& inst) override { Elementwise(inst); }
  void OnVExp(const Instruction& inst) override { Elementwise(inst); }
  void OnVRecip(const Instruction& inst) override { Elementwise(inst); }
  void OnVRsqrt(const Instruction& inst) override { Elementwise(inst); }
  void OnVTanh(const Instruction& inst) override { Elementwise(inst); }
  void OnVFill(const Instruction& inst) override { Elementwise(inst); }
  void OnVCvt(const Instruction& inst) override { Conversion(inst); }
  void OnVRequant(const Instruction& inst) override { Conversion(inst); }
  void OnVRedSum(const Instruction& inst) override { RowOp(inst); }
  void OnVRedMax(const Instruction& inst) override { RowOp(inst); }
  void OnVBcast(const Instruction& inst) override { RowOp(inst); }

 private:
  void Elementwise(const Instruction& inst) {
    vector_internal::ExecuteElementwise(inst, memories_);
  }
  void Conversion(const Instruction& inst) {
    vector_internal::ExecuteConversion(inst, registers_, memories_);
  }
  void RowOp(const Instruction& inst) { vector_internal::ExecuteRowOp(inst, memories_); }
  [[noreturn]] static void NotComputeUnit(const Instruction& inst) {
    throw hlo::Error(std::string(systolic::GetInstrInfo(inst.opcode).mnemonic) +
                     " has no compute-unit data effect (its unit executes it)");
  }

  const systolic::ArchConfig& config_;
  const RegisterFile& registers_;
  WeightBuffers& weights_;
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
  DataEffect(config, registers, weights, memories).Visit(inst);
}

void ExecuteVector(const Instruction& inst, const RegisterFile& registers, Memories& memories) {
  RequireUnit(inst, systolic::Unit::kVector, "vector-unit");
  // The vector unit reads neither the architecture nor the weight buffers.
  static const systolic::ArchConfig kNoConfig{};
  WeightBuffers no_weights;
  DataEffect(kNoConfig, registers, no_weights, memories).Visit(inst);
}

}  // namespace simulator

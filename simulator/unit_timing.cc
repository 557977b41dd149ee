// Transaction-level costs of the compute units (unit_timing.h). The matrix unit's cycles are
// mxu_timing.h's TimeInstructionPipelined / WeightLoadCycles, whose conventions and numbers
// tests/simulator/pe_reference_test.cc checks against the processing-element model.
#include "simulator/unit_timing.h"

#include <string>

#include "hlo/diagnostic.h"
#include "simulator/isa/instruction_visitor.h"
#include "simulator/mxu_timing.h"

namespace simulator {
namespace {

using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t CeilLog2(int64_t value) {
  int64_t bits = 0;
  while ((int64_t{1} << bits) < value) ++bits;
  return bits;
}

std::string Mnemonic(const Instruction& inst) {
  return std::string(systolic::GetInstrInfo(inst.opcode).mnemonic);
}

Dtype FieldDtype(const Instruction& inst, uint64_t raw) {
  if (raw >= systolic::DtypeSymbols().size()) {
    throw hlo::Error(Mnemonic(inst) + ": " + std::to_string(raw) + " is not a dtype");
  }
  return static_cast<Dtype>(raw);
}

int64_t Bytes(int64_t elements, Dtype dtype) { return elements * systolic::DtypeBytes(dtype); }

// Adds `bytes` to the read or write counter of the memory `address` selects.
void CountAccess(UnitCost& cost, uint64_t address, int64_t bytes, bool write) {
  const bool acc = (address & systolic::kAccumulatorBit) != 0;
  int64_t& counter = acc ? (write ? cost.acc_bytes_written : cost.acc_bytes_read)
                         : (write ? cost.ub_bytes_written : cost.ub_bytes_read);
  counter += bytes;
}

ArrayShape Array(const Instruction& inst, const systolic::ArchConfig& config, uint64_t raw) {
  if (raw >= systolic::DataflowSymbols().size()) {
    throw hlo::Error(Mnemonic(inst) + ": dataflow " + std::to_string(raw) + " is not a dataflow");
  }
  return ArrayShape{config.array_rows, config.array_cols, static_cast<systolic::Dataflow>(raw)};
}

const WeightBuffers::Buffer& Loaded(const Instruction& inst, const WeightBuffers& weights,
                                    uint64_t buf) {
  const WeightBuffers::Buffer& buffer = weights.buffers[buf & 1];
  if (!buffer.loaded) {
    throw hlo::Error(Mnemonic(inst) + ": weight buffer " + std::to_string(buf & 1) +
                     " was never loaded (mxu.ldw)");
  }
  return buffer;
}

// A GEMM of m rows through the loaded tile: pipelined cycles, operands streamed from the UB
// (m x k elements: with implicit im2col every window element is read when it is used), results
// written (and, when accumulating, read) in the accumulators as 4-byte words.
UnitCost GemmCost(const ArrayShape& array, const WeightBuffers::Buffer& tile, int64_t m,
                  bool accumulate) {
  const PipelinedMxuTiming timing = TimeInstructionPipelined(array, GemmShape{m, tile.n, tile.k});
  UnitCost cost;
  cost.cycles = timing.total_cycles;
  cost.issue_interval = timing.issue_interval;
  cost.weights_hold = timing.weights_hold;
  cost.macs = timing.macs;
  cost.ub_bytes_read = Bytes(m * tile.k, tile.dtype);
  cost.acc_bytes_written = m * tile.n * 4;
  cost.acc_bytes_read = accumulate ? cost.acc_bytes_written : 0;
  return cost;
}

UnitCost LoadWeightsCost(const Instruction& inst, const systolic::ArchConfig& config) {
  using F = systolic::MxuLoadWeightsField;
  const ArrayShape array{config.array_rows, config.array_cols, config.dataflow};
  const int64_t k = static_cast<int64_t>(inst.get(F::k));
  const int64_t n = static_cast<int64_t>(inst.get(F::n));
  UnitCost cost;
  cost.cycles = WeightLoadCycles(array, k);
  cost.issue_interval = cost.cycles;
  cost.ub_bytes_read = Bytes(k * n, FieldDtype(inst, inst.get(F::dtype)));
  return cost;
}

UnitCost MatmulCost(const Instruction& inst, const systolic::ArchConfig& config,
                    const WeightBuffers& weights) {
  using F = systolic::MxuMatmulField;
  const int64_t m = static_cast<int64_t>(inst.get(F::m));
  return GemmCost(Array(inst, config, inst.get(F::dataflow)),
                  Loaded(inst, weights, inst.get(F::buf)), m, inst.get(F::acc) != 0);
}

UnitCost ConvCost(const Instruction& inst, const systolic::ArchConfig& config,
                  const WeightBuffers& weights) {
  using F = systolic::MxuConvField;
  const int64_t kh = static_cast<int64_t>(inst.get(F::kh));
  const int64_t kw = static_cast<int64_t>(inst.get(F::kw));
  const int64_t stride = static_cast<int64_t>(inst.get(F::stride));
  const int64_t in_h = static_cast<int64_t>(inst.get(F::in_h));
  const int64_t in_w = static_cast<int64_t>(inst.get(F::in_w));
  if (kh < 1 || kw < 1 || stride < 1 || in_h < kh || in_w < kw) {
    throw hlo::Error("mxu.conv: need 1 <= kh <= in_h, 1 <= kw <= in_w and stride >= 1");
  }
  const int64_t pixels = ((in_h - kh) / stride + 1) * ((in_w - kw) / stride + 1);
  return GemmCost(Array(inst, config, inst.get(F::dataflow)),
                  Loaded(inst, weights, inst.get(F::buf)), pixels, inst.get(F::acc) != 0);
}

// Streaming cost: ceil(elements / L) + the pipeline depth (+ the transcendental stages).
int64_t StreamCycles(const systolic::ArchConfig& config, int64_t elements, int64_t extra = 0) {
  return CeilDiv(elements, config.vector_lanes) + config.vector_pipeline_depth + extra;
}

UnitCost BinaryCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VAddField;  // shared layout of the binary ops
  const auto field = [&](F f) { return inst.fields[static_cast<size_t>(f)]; };
  const int64_t count = static_cast<int64_t>(field(F::count));
  const Dtype dtype = FieldDtype(inst, field(F::dtype));
  CountAccess(cost, field(F::a), Bytes(count, dtype), false);
  CountAccess(cost, field(F::b), Bytes(count, dtype), false);
  CountAccess(cost, field(F::dst),
              Bytes(count, inst.opcode == Opcode::kVCmp ? Dtype::kPred : dtype), true);
  cost.vector_element_ops = count;
  // Integer division iterates: the transcendental stages' latency.
  const bool divides = inst.opcode == Opcode::kVDiv || inst.opcode == Opcode::kVRem;
  cost.cycles = StreamCycles(config, count, divides ? config.vector_transcendental_depth : 0);
  return cost;
}

UnitCost SelectCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VSelField;
  const int64_t count = static_cast<int64_t>(inst.get(F::count));
  const Dtype dtype = FieldDtype(inst, inst.get(F::dtype));
  CountAccess(cost, inst.get(F::mask), Bytes(count, Dtype::kPred), false);
  CountAccess(cost, inst.get(F::src), Bytes(count, dtype), false);
  CountAccess(cost, inst.get(F::dst), Bytes(count, dtype), false);  // the on-false operand
  CountAccess(cost, inst.get(F::dst), Bytes(count, dtype), true);
  cost.vector_element_ops = count;
  cost.cycles = StreamCycles(config, count);
  return cost;
}

// vmov, vfloor, vceil and vround stream; the transcendental functions (exp, recip, rsqrt,
// tanh, sin, cos, log, log1p, expm1, logistic, erf) add the transcendental stages.
UnitCost UnaryCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VMovField;  // shared layout of the unary ops
  const auto field = [&](F f) { return inst.fields[static_cast<size_t>(f)]; };
  const int64_t count = static_cast<int64_t>(field(F::count));
  const Dtype dtype = FieldDtype(inst, field(F::dtype));
  CountAccess(cost, field(F::src), Bytes(count, dtype), false);
  CountAccess(cost, field(F::dst), Bytes(count, dtype), true);
  cost.vector_element_ops = count;
  const bool plain = inst.opcode == Opcode::kVMov || inst.opcode == Opcode::kVFloor ||
                     inst.opcode == Opcode::kVCeil || inst.opcode == Opcode::kVRound;
  cost.cycles = StreamCycles(config, count, plain ? 0 : config.vector_transcendental_depth);
  return cost;
}

// vfill and viota: `count` elements of `dtype` written at `dst`, nothing read.
UnitCost WriteOnlyCost(uint64_t dst, uint64_t count_field, uint64_t dtype_field,
                       const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  const int64_t count = static_cast<int64_t>(count_field);
  CountAccess(cost, dst, Bytes(count, FieldDtype(inst, dtype_field)), true);
  cost.vector_element_ops = count;
  cost.cycles = StreamCycles(config, count);
  return cost;
}

UnitCost FillCost(const Instruction& inst, const systolic::ArchConfig& config) {
  using F = systolic::VFillField;
  return WriteOnlyCost(inst.get(F::dst), inst.get(F::count), inst.get(F::dtype), inst, config);
}

UnitCost IotaCost(const Instruction& inst, const systolic::ArchConfig& config) {
  using F = systolic::VIotaField;
  return WriteOnlyCost(inst.get(F::dst), inst.get(F::count), inst.get(F::dtype), inst, config);
}

UnitCost ConvertCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VCvtField;  // vrequant shares the layout
  const auto field = [&](F f) { return inst.fields[static_cast<size_t>(f)]; };
  const int64_t count = static_cast<int64_t>(field(F::count));
  CountAccess(cost, field(F::src), Bytes(count, FieldDtype(inst, field(F::src_type))), false);
  CountAccess(cost, field(F::dst), Bytes(count, FieldDtype(inst, field(F::dst_type))), true);
  cost.vector_element_ops = count;
  cost.cycles = StreamCycles(config, count);
  return cost;
}

UnitCost ReduceCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VRedSumField;  // vredmax shares the layout
  const auto field = [&](F f) { return inst.fields[static_cast<size_t>(f)]; };
  const int64_t rows = static_cast<int64_t>(field(F::rows));
  const int64_t cols = static_cast<int64_t>(field(F::cols));
  const Dtype dtype = FieldDtype(inst, field(F::dtype));
  CountAccess(cost, field(F::src), Bytes(rows * cols, dtype), false);
  CountAccess(cost, field(F::dst), Bytes(rows, dtype), true);
  cost.vector_element_ops = rows * cols;
  // Each row enters L elements per cycle; the adder tree finishes the last row.
  cost.cycles = rows * CeilDiv(cols, config.vector_lanes) + CeilLog2(config.vector_lanes) +
                config.vector_pipeline_depth;
  return cost;
}

UnitCost BroadcastCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VBcastField;
  const int64_t rows = static_cast<int64_t>(inst.get(F::rows));
  const int64_t cols = static_cast<int64_t>(inst.get(F::cols));
  const Dtype dtype = FieldDtype(inst, inst.get(F::dtype));
  CountAccess(cost, inst.get(F::src), Bytes(inst.get(F::per_row) ? rows : cols, dtype), false);
  CountAccess(cost, inst.get(F::dst), Bytes(rows * cols, dtype), true);
  cost.vector_element_ops = rows * cols;
  cost.cycles = StreamCycles(config, rows * cols);
  return cost;
}

// vtrans: rows x cols elements read and written, L a cycle (the transpose unit's lanes).
UnitCost TransposeCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VTransField;
  const int64_t count = static_cast<int64_t>(inst.get(F::rows) * inst.get(F::cols));
  const Dtype dtype = FieldDtype(inst, inst.get(F::dtype));
  CountAccess(cost, inst.get(F::src), Bytes(count, dtype), false);
  CountAccess(cost, inst.get(F::dst), Bytes(count, dtype), true);
  cost.vector_element_ops = count;
  cost.cycles = StreamCycles(config, count);
  return cost;
}

// vbitonic: the keys (and the payload) read and written once, count/2 comparisons, L lanes.
UnitCost BitonicCost(const Instruction& inst, const systolic::ArchConfig& config) {
  UnitCost cost;
  using F = systolic::VBitonicField;
  const auto count = static_cast<int64_t>(inst.get(F::count));
  const Dtype dtype = FieldDtype(inst, inst.get(F::dtype));
  CountAccess(cost, inst.get(F::keys), Bytes(count, dtype), false);
  CountAccess(cost, inst.get(F::keys), Bytes(count, dtype), true);
  if (inst.get(F::has_payload) != 0) {
    CountAccess(cost, inst.get(F::payload), Bytes(count, Dtype::kS32), false);
    CountAccess(cost, inst.get(F::payload), Bytes(count, Dtype::kS32), true);
  }
  cost.vector_element_ops = count;
  cost.cycles = StreamCycles(config, count);
  return cost;
}

// One handler per row of isa.def: the compute units' rows have a cost here; the DMA engines'
// and the front end's are timed by their units (sim_dma.cc, sim_unit.cc) and are refused.
class CostOfInstruction final : public systolic::InstructionVisitor<UnitCost> {
 public:
  CostOfInstruction(const systolic::ArchConfig& config, const WeightBuffers& weights)
      : config_(config), weights_(weights) {}

  UnitCost OnNop(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnHalt(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnCfgSet(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnCfgLoad(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnCtrlTest(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnCtrlIndex(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnSemSignal(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnSemWait(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnDmaLoad(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnDmaStore(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnDmaGather(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnDmaScatter(const Instruction& inst) override { return NotComputeUnit(inst); }
  UnitCost OnMxuLoadWeights(const Instruction& inst) override {
    return LoadWeightsCost(inst, config_);
  }
  UnitCost OnMxuMatmul(const Instruction& inst) override {
    return MatmulCost(inst, config_, weights_);
  }
  UnitCost OnMxuConv(const Instruction& inst) override { return ConvCost(inst, config_, weights_); }
  UnitCost OnVAdd(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVSub(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVMul(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVMax(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVMin(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVCmp(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVShl(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVShra(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVShrl(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVAnd(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVOr(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVXor(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVDiv(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVRem(const Instruction& inst) override { return Vector(BinaryCost(inst, config_)); }
  UnitCost OnVSel(const Instruction& inst) override { return Vector(SelectCost(inst, config_)); }
  UnitCost OnVMov(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVExp(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVRecip(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVRsqrt(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVTanh(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVSin(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVCos(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVLog(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVLog1p(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVExpm1(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVLogistic(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVErf(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVFloor(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVCeil(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVRound(const Instruction& inst) override { return Vector(UnaryCost(inst, config_)); }
  UnitCost OnVFill(const Instruction& inst) override { return Vector(FillCost(inst, config_)); }
  UnitCost OnVIota(const Instruction& inst) override { return Vector(IotaCost(inst, config_)); }
  UnitCost OnVCvt(const Instruction& inst) override { return Vector(ConvertCost(inst, config_)); }
  UnitCost OnVRequant(const Instruction& inst) override {
    return Vector(ConvertCost(inst, config_));
  }
  UnitCost OnVRedSum(const Instruction& inst) override { return Vector(ReduceCost(inst, config_)); }
  UnitCost OnVRedMax(const Instruction& inst) override { return Vector(ReduceCost(inst, config_)); }
  UnitCost OnVBitonic(const Instruction& inst) override {
    return Vector(BitonicCost(inst, config_));
  }
  UnitCost OnVTrans(const Instruction& inst) override {
    return Vector(TransposeCost(inst, config_));
  }
  UnitCost OnVBcast(const Instruction& inst) override {
    return Vector(BroadcastCost(inst, config_));
  }

 private:
  // The vector unit takes one instruction at a time: it issues the next when this one is done.
  static UnitCost Vector(UnitCost cost) {
    cost.issue_interval = cost.cycles;
    return cost;
  }
  static UnitCost NotComputeUnit(const Instruction& inst) {
    throw hlo::Error(Mnemonic(inst) + " is not a compute-unit instruction (mxu or vector)");
  }

  const systolic::ArchConfig& config_;
  const WeightBuffers& weights_;
};

}  // namespace

UnitCost ComputeCost(const Instruction& inst, const systolic::ArchConfig& config,
                     const RegisterFile& registers, const WeightBuffers& weights) {
  (void)registers;  // strides change addresses, not cycles or byte counts
  return CostOfInstruction(config, weights).Visit(inst);
}

}  // namespace simulator

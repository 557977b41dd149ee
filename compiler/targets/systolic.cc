// The `systolic` target: the TPU-v1-like accelerator of DESIGN.md — a 256x256 weight-stationary
// matrix unit (MXU), a 256-lane vector unit for elementwise/reduction/activation work, a 24 MiB
// unified buffer and DDR3 behind a DMA engine, driven by a host over PCIe.
//
// What runs where (the design's choices):
//   * dot / convolution: native on the MXU for s8, bf16 and f32; other types fall back to the
//     host.
//   * elementwise, reductions (reduce, reduce-window), batch-norm-inference and data movement:
//     native on the vector unit / DMA engine, for the types the vector unit holds (no 64-bit
//     types: s64/u64/f64 fall back to the host).
//   * gather, scatter, select-and-scatter, sort, topk, map, rng and every custom-call: host
//     fallback (data-dependent addressing and comparators are not in the CISC ISA).
// Sources of the numbers: Jouppi et al., "In-Datacenter Performance Analysis of a Tensor
// Processing Unit", ISCA 2017: 256x256 8-bit MACs at 700 MHz = 92 TOPS; 24 MiB unified buffer,
// 4 MiB accumulators; 8 GiB DDR3-2133 at 34 GB/s; PCIe Gen3 x16 host link (~14 GB/s usable);
// 28 W idle, 40 W busy. bf16 at 1/4 and f32 at 1/16 of the int8 MAC rate are Retarget's own
// assumption (multi-pass use of 8-bit multipliers), as are the vector unit's width (256 lanes,
// one op per lane per cycle), the ~10 us per host-issued instruction batch, and the energy split
// of the 40 W. The price stands in with Google Cloud TPU v5e's on-demand $1.20 per chip-hour
// (cloud.google.com/tpu/pricing); TPU v1 was never rented.
#include "compiler/targets/target_instances.h"

namespace compiler::targets_internal {

using hlo::FusionKind;
using hlo::OpClass;
using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

// Element types the vector unit holds: the ISA's dtypes (targets/systolic/isa.def ISA_DTYPE);
// 16-bit and unsigned 32-bit integers have no vector-unit type, so the lowering sends them to
// the host.
const std::set<PrimitiveType>& VectorTypes() {
  static const std::set<PrimitiveType> types = {
      PrimitiveType::kPred, PrimitiveType::kS8,   PrimitiveType::kS32, PrimitiveType::kU8,
      PrimitiveType::kF16,  PrimitiveType::kBF16, PrimitiveType::kF32};
  return types;
}

OpRule Native(std::set<PrimitiveType> types) {
  return OpRule{OpHandling::kNative, "", std::move(types), OpHandling::kHostFallback};
}
OpRule HostFallback() {
  return OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback};
}

// The rule of one opcode, by its class in hlo/opcodes.def plus the exceptions listed above.
std::optional<OpRule> RuleFor(Opcode op) {
  switch (op) {
    case Opcode::kDot:
    case Opcode::kConvolution:
      return Native({PrimitiveType::kS8, PrimitiveType::kBF16, PrimitiveType::kF32});
    case Opcode::kGather:
    case Opcode::kScatter:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kMap:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kCustomCall:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormTraining:
      return HostFallback();
    default:
      break;  // decided by the op class below
  }
  switch (hlo::OpcodeClass(op)) {
    case OpClass::kElementwiseUnary:
    case OpClass::kElementwiseBinary:
    case OpClass::kElementwiseTernary:
    case OpClass::kReduction:
    case OpClass::kContraction:  // batch-norm-inference: a vector-unit normalization
      return Native(VectorTypes());
    case OpClass::kDataMovement:
    case OpClass::kControl:
    case OpClass::kCollective:  // ownership marks these kCollective (supports_collectives=false)
    case OpClass::kOther:
      return std::nullopt;  // default_handling: native (DMA, sequencer, constants)
  }
  return std::nullopt;
}

}  // namespace

TargetDescription MakeSystolicTarget() {
  TargetDescription t;
  t.name = "systolic";
  t.description = "TPU-v1-like systolic array: 256x256 MXU, 256-lane vector unit, 24 MiB SRAM";
  t.default_handling = OpHandling::kNative;
  for (int i = 0; i < hlo::OpcodeCount(); ++i) {
    Opcode op = static_cast<Opcode>(i);
    if (std::optional<OpRule> rule = RuleFor(op)) t.op_rules[op] = *rule;
  }
  // The host runs TopK for the accelerator; every other custom call is unknown (unsupported).
  t.custom_calls["TopK"] = HostFallback();
  t.supports_collectives = false;

  t.fusion_kinds = {FusionKind::kLoop, FusionKind::kInput, FusionKind::kOutput};
  // TPU v1's activation pipeline applies a nonlinearity (ReLU, sigmoid, tanh) and the bias /
  // scale / requantizing convert to accumulator rows on their way back to the unified buffer.
  t.contraction_epilogues = {Epilogue::kBiasAdd, Epilogue::kScale, Epilogue::kRelu,
                             Epilogue::kConvert};
  t.max_fusion_instructions = 32;  // vector-unit programs are short
  t.max_duplication_factor = 1.0;  // SRAM is the scarce resource: never recompute
  t.multi_output_fusion = false;
  // Weight-stationary MXU: NHWC activations, HWIO weights (rows of the weight tile = input
  // features), like the TPU's own convolution layout.
  t.preferred_conv_dim_labels = "b01f_01io->b01f";
  t.prefers_row_major = true;

  t.device_memory_bytes = int64_t{8} << 30;    // 8 GiB DDR3
  t.on_chip_memory_bytes = int64_t{24} << 20;  // unified buffer
  t.alignment_bytes = 256;                     // one unified-buffer row of 256 bytes

  constexpr double kInt8 = 256.0 * 256.0 * 2 * 700e6;  // 91.75 TOPS
  t.peak.matrix_ops_per_second = {{PrimitiveType::kS8, kInt8},
                                  {PrimitiveType::kBF16, kInt8 / 4},
                                  {PrimitiveType::kF32, kInt8 / 16}};
  t.peak.vector_ops_per_second = 256 * 700e6;  // 179.2 Gop/s
  t.peak.memory_bytes_per_second = 34e9;
  t.peak.host_link_bytes_per_second = 14e9;
  t.peak.kernel_launch_seconds = 10e-6;

  t.energy.joules_per_flop = 40.0 / kInt8;  // ~0.44 pJ: the busy power over the MAC rate
  t.energy.joules_per_vector_op = 2e-12;
  t.energy.joules_per_dram_byte = 20e-12 * 8;  // DDR3, ~20 pJ/bit
  t.energy.idle_watts = 28;
  t.price_per_hour_usd = 1.20;
  return t;
}

}  // namespace compiler::targets_internal

// The `systolic` target: the TPU-v1-like accelerator of DESIGN.md — a 256x256 weight-stationary
// matrix unit (MXU), a 256-lane vector unit for elementwise/reduction/activation work, a 24 MiB
// unified buffer and DDR3 behind a DMA engine, driven by a host over PCIe.
//
// What runs where: what targets/systolic/lowering/ runs as accelerator instructions (TryNative
// and the row-op table row_op_table.cc), everything else a host step. One exhaustive switch
// below (no `default:`), so a new opcode fails to compile until its rule is decided here.
//   * dot / convolution: the MXU, for s8, bf16 and f32 operands (tiling.cc, emit_conv.cc).
//   * elementwise ops with a vector-unit instruction, per element type (row_op_table.cc):
//     add/subtract/multiply/maximum/minimum/clamp on every vector type but pred; exponential,
//     tanh, rsqrt, divide, sqrt on floats; negate/abs on signed types; and/or/xor/not on pred;
//     compare and select on every vector type; convert from the numeric vector types.
//   * reduce (sum from 0 or max from -inf), broadcast, transpose: vector unit / DMA; reshape,
//     bitcast and copy are aliases of their operand's DRAM bytes (no instruction at all).
//   * every other op is a host step of the lowering (data-dependent addressing, comparators,
//     random numbers, transcendental functions, integer bit operations, slicing and padding),
//     with the reason in TargetDescription::host_fallback_details.
// Conditions the rule format cannot express (it keys on the opcode and ONE element type, the
// operand's for convert, compare, reduce and dot) are left on the common side: convert to a
// narrower integer (f32->s32 truncates in HLO, rounds in vcvt), compare with TOTALORDER, grouped
// or dilated convolutions, a transpose inside a loop fusion (the DMA transposes only unfused
// ones), reduce other than a sum/max over the last or all leading dimensions, broadcasts along a
// leading dimension, and operands that do not fit the unified buffer. The tour test lists the
// one its examples hit (KnownSystolicNativeGaps); scripts/systolic_owner_agreement.sh measures
// all of them on real models (docs/ownership.md).
// Sources of the numbers: Jouppi et al., "In-Datacenter Performance Analysis of a Tensor
// Processing Unit", ISCA 2017: 256x256 8-bit MACs at 700 MHz = 92 TOPS; 24 MiB unified buffer,
// 4 MiB accumulators; 8 GiB DDR3-2133 at 34 GB/s; PCIe Gen3 x16 host link (~14 GB/s usable);
// 28 W idle, 40 W busy. bf16 at 1/4 and f32 at 1/16 of the int8 MAC rate are Retarget's own
// assumption (multi-pass use of 8-bit multipliers), as are the vector unit's width (256 lanes,
// one op per lane per cycle), the ~10 us per host-issued instruction batch, and the energy split
// of the 40 W. The price stands in with Google Cloud TPU v5e's on-demand $1.20 per chip-hour
// (cloud.google.com/tpu/pricing); TPU v1 was never rented.
#include "targets/systolic/description.h"

namespace targets {
namespace {

using compiler::Epilogue;
using compiler::OpHandling;
using compiler::OpRule;
using compiler::TargetDescription;

using hlo::FusionKind;
using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

using Types = std::set<PrimitiveType>;

// Element types the vector unit holds: the ISA's dtypes (simulator/isa/isa.def ISA_DTYPE,
// lowering/row_op_table.cc IsaDtype); 16-bit and 64-bit integers, u32 and f64 have no
// vector-unit type, so the lowering sends them to the host.
const Types kVector = {PrimitiveType::kPred, PrimitiveType::kS8,   PrimitiveType::kS32,
                       PrimitiveType::kU8,   PrimitiveType::kF16,  PrimitiveType::kBF16,
                       PrimitiveType::kF32};
const Types kNumeric = {PrimitiveType::kS8,  PrimitiveType::kS32,  PrimitiveType::kU8,
                        PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32};
const Types kSigned = {PrimitiveType::kS8, PrimitiveType::kS32, PrimitiveType::kF16,
                       PrimitiveType::kBF16, PrimitiveType::kF32};
const Types kFloat = {PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32};
const Types kPred = {PrimitiveType::kPred};
const Types kMatrix = {PrimitiveType::kS8, PrimitiveType::kBF16, PrimitiveType::kF32};
const Types kAll = {};  // every element type (aliases and DMA moves copy bytes)

// An opcode's rule, and why the host runs it (TargetDescription::host_fallback_details).
struct Rule {
  OpRule rule;
  std::string why;
};
Rule Native(const Types& types) {
  return {OpRule{OpHandling::kNative, "", types, OpHandling::kHostFallback}, ""};
}
Rule Host(std::string why) {
  return {OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback}, std::move(why)};
}

// The rule of one opcode. nullopt: no code is generated for it at all (ownership says no-code
// or collective before asking), so default_handling answers.
std::optional<Rule> RuleFor(Opcode op) {
  const std::string name(hlo::OpcodeName(op));
  const std::string no_vector_op = "no vector-unit instruction for " + name;
  const std::string no_dma = "the lowering has no DMA or vector-unit program for " + name;
  switch (op) {
    // No code (GeneratesNoCode), collectives (kCollective), control flow run by the host
    // sequencer with its bodies lowered separately: the ownership analysis never asks.
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement: case Opcode::kAfterAll: case Opcode::kOptimizationBarrier:
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall: case Opcode::kFusion:
    case Opcode::kPartitionId: case Opcode::kReplicaId: case Opcode::kAllGather:
    case Opcode::kAllReduce: case Opcode::kAllToAll: case Opcode::kCollectivePermute:
    case Opcode::kReduceScatter:
      return std::nullopt;
    // The matrix unit.
    case Opcode::kDot: case Opcode::kConvolution:
      return Native(kMatrix);
    // The vector unit, per lowering/row_op_table.cc.
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kMaximum:
    case Opcode::kMinimum: case Opcode::kClamp:
      return Native(kNumeric);  // pred arithmetic has no vector instruction
    case Opcode::kExp: case Opcode::kTanh: case Opcode::kRsqrt: case Opcode::kDivide:
    case Opcode::kSqrt:
      return Native(kFloat);
    case Opcode::kNegate: case Opcode::kAbs:
      return Native(kSigned);
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: case Opcode::kNot:
      return Native(kPred);  // pred as bytes 0/1: min, max, not-equal; no integer bit ops
    case Opcode::kCompare: case Opcode::kSelect:
      return Native(kVector);
    case Opcode::kConvert:  // keyed on the operand type; see the file comment
      return Native(kNumeric);
    // The int8 requantize idiom (scale, round-nearest-even, clamp, convert to s8) is one vrequant
    // (lowering/requantize_pattern.cc), so its rounding must stay fusible with the native ops
    // around it; a round-nearest-even outside that idiom runs on the host (the optimistic side,
    // like convert: a rule cannot see the context).
    case Opcode::kRoundNearestEven:
      return Native(kFloat);
    case Opcode::kReduce:  // sum from 0 or max from -inf (vredsum / vredmax / column vadd)
      return Native(kNumeric);
    case Opcode::kBroadcast:
      return Native(kVector);
    case Opcode::kTranspose: case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kCopy:
      return Native(kAll);
    // Elementwise ops the vector unit has no instruction for.
    case Opcode::kBitcastConvert: case Opcode::kCbrt: case Opcode::kCeil: case Opcode::kClz:
    case Opcode::kCos: case Opcode::kErf: case Opcode::kExpm1: case Opcode::kFloor:
    case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kPopulationCount: case Opcode::kReducePrecision: case Opcode::kRoundNearestAfz:
    case Opcode::kSign: case Opcode::kSin: case Opcode::kTan:
    case Opcode::kAtan2: case Opcode::kPower: case Opcode::kRemainder: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
      return Host(no_vector_op);
    // Data movement and windows the lowering does not program.
    case Opcode::kIota: case Opcode::kConcatenate: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kPad: case Opcode::kReverse: case Opcode::kSlice:
    case Opcode::kReduceWindow:
      return Host(no_dma);
    // Data-dependent addressing and comparators are not in the CISC ISA.
    case Opcode::kGather: case Opcode::kScatter: case Opcode::kSelectAndScatter:
      return Host("data-dependent addressing is not in the accelerator's ISA");
    case Opcode::kSort: case Opcode::kTopK: case Opcode::kMap:
      return Host("the vector unit cannot run a called comparator or computation");
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
      return Host("the accelerator has no random-number generator");
    case Opcode::kCustomCall:
      return Host("custom calls run on the host (custom_calls lists the known ones)");
    // batch-norm-expander rewrites all three into elementwise ops and reductions before the
    // lowering; unexpanded (an analysis of an unoptimized module), inference is the vector
    // unit's normalization, training and grad need statistics passes the ISA does not chain.
    case Opcode::kBatchNormInference:
      return Native(kFloat);
    case Opcode::kBatchNormGrad: case Opcode::kBatchNormTraining:
      return Host("no vector-unit program for " + name + " (expanded by batch-norm-expander)");
  }
  return std::nullopt;
}

}  // namespace

TargetDescription MakeSystolicDescription() {
  TargetDescription t;
  t.name = "systolic";
  t.description = "TPU-v1-like systolic array: 256x256 MXU, 256-lane vector unit, 24 MiB SRAM";
  // Every opcode with code has a rule (RuleFor); the rest never reach HandlingFor.
  t.default_handling = OpHandling::kHostFallback;
  for (int i = 0; i < hlo::OpcodeCount(); ++i) {
    Opcode op = static_cast<Opcode>(i);
    if (std::optional<Rule> rule = RuleFor(op)) {
      t.op_rules[op] = rule->rule;
      if (!rule->why.empty()) t.host_fallback_details[op] = rule->why;
    }
  }
  // The host runs TopK for the accelerator; every other custom call is unknown (unsupported).
  t.custom_calls["TopK"] = Host("").rule;
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
  t.peak.host_fallback_link_only = true;  // targets/systolic/systolic_backend.cc, RunHost

  t.energy.joules_per_flop = 40.0 / kInt8;  // ~0.44 pJ: the busy power over the MAC rate
  t.energy.joules_per_vector_op = 2e-12;
  t.energy.joules_per_dram_byte = 20e-12 * 8;  // DDR3, ~20 pJ/bit
  t.energy.idle_watts = 28;
  t.price_per_hour_usd = 1.20;
  return t;
}

}  // namespace

const compiler::TargetDescription& SystolicDescription() {
  static const compiler::TargetDescription description = MakeSystolicDescription();
  return description;
}

}  // namespace targets

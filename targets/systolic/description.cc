// The `systolic` target: the TPU-v1-like accelerator of DESIGN.md — a 256x256 weight-stationary
// matrix unit (MXU), a 256-lane vector unit for elementwise/reduction/activation work, a 24 MiB
// unified buffer and DDR3 behind a DMA engine, driven by a host over PCIe.
//
// What runs where is the lowering's own answer, not a second statement of it: the rules are
// built from targets/systolic/lowering/native_ops.h (per opcode, the element types the row-op
// table, vcvt and the matrix unit take; per instruction, what one element type cannot decide:
// a convert vcvt does not compute, a total-order compare, a rounding outside the requantize
// idiom). In short:
//   * dot / convolution: the MXU, for s8, bf16 and f32 operands (tiling.cc, emit_conv.cc).
//   * elementwise ops with a vector-unit instruction, per element type (row_op_table.cc);
//     reduce (sum from 0 or max from -inf), broadcast, transpose: vector unit / DMA; reshape,
//     bitcast and copy are aliases of their operand's DRAM bytes (no instruction at all).
//   * every other op is a host step of the lowering (data-dependent addressing, comparators,
//     random numbers, transcendental functions other than exp, tanh and rsqrt, slicing and
//     padding), with the reason in TargetDescription::host_fallback_details.
// What depends on shapes, fusion context and unified-buffer capacity stays Lower's alone and
// the report optimistic there: grouped or dilated convolutions, a transpose inside a loop
// fusion, reduce over middle dimensions, broadcasts along a leading dimension, operands that do
// not fit the unified buffer. scripts/systolic_owner_agreement.sh measures those on real models
// (docs/ownership.md); the backend fails loudly when a host step has a reason the description
// should have known (systolic_backend.cc, CheckHostStepsAgainstDescription).
// Sources of the numbers: Jouppi et al., "In-Datacenter Performance Analysis of a Tensor
// Processing Unit", ISCA 2017: 256x256 8-bit MACs at 700 MHz = 92 TOPS; 24 MiB unified buffer,
// 4 MiB accumulators; 8 GiB DDR3-2133 at 34 GB/s; PCIe Gen3 x16 host link (~14 GB/s usable);
// 28 W idle, 40 W busy. bf16 at 1/4 and f32 at 1/16 of the int8 MAC rate are Retarget's own
// assumption (multi-pass use of 8-bit multipliers), as are the vector unit's width (256 lanes,
// one op per lane per cycle), the ~10 us per host-issued instruction batch, and the energy split
// of the 40 W. The price stands in with Google Cloud TPU v5e's on-demand $1.20 per chip-hour
// (cloud.google.com/tpu/pricing); TPU v1 was never rented.
#include "targets/systolic/description.h"

#include "targets/systolic/lowering/native_ops.h"

namespace targets {
namespace {

using compiler::Epilogue;
using compiler::OpHandling;
using compiler::OpRule;
using compiler::TargetDescription;

using hlo::FusionKind;
using hlo::Opcode;
using hlo::PrimitiveType;

TargetDescription MakeSystolicDescription() {
  TargetDescription t;
  t.name = "systolic";
  t.description = "TPU-v1-like systolic array: 256x256 MXU, 256-lane vector unit, 24 MiB SRAM";
  // Every opcode with code has a rule, the lowering's own answer (native_ops.h); the rest never
  // reach HandlingFor.
  t.default_handling = OpHandling::kHostFallback;
  for (int i = 0; i < hlo::OpcodeCount(); ++i) {
    const Opcode op = static_cast<Opcode>(i);
    std::optional<systolic::lowering::OpcodeSupport> support = systolic::lowering::SupportFor(op);
    if (!support) continue;
    if (support->runs_natively()) {
      t.op_rules[op] = OpRule{OpHandling::kNative, "", support->types, OpHandling::kHostFallback};
    } else {
      t.op_rules[op] = OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback};
      t.host_fallback_details[op] = support->host_reason;
    }
  }
  t.instruction_host_reason = systolic::lowering::IntrinsicHostReason;
  t.instruction_in_native_idiom = systolic::lowering::InNativeIdiom;
  t.host_element_types = compiler::ComplexAndNarrowTypes();
  t.host_element_types_detail = "the accelerator holds no values of the type; a host step runs it";
  // The host runs TopK for the accelerator; every other custom call is unknown (unsupported).
  t.custom_calls["TopK"] = OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback};
  t.supports_collectives = false;

  t.fusion_kinds = {FusionKind::kLoop, FusionKind::kInput, FusionKind::kOutput};
  // TPU v1's activation pipeline applies a nonlinearity (ReLU, sigmoid, tanh) and the bias /
  // scale / requantizing convert to accumulator rows on their way back to the unified buffer.
  t.contraction_epilogues = {Epilogue::kBiasAdd, Epilogue::kScale, Epilogue::kRelu,
                             Epilogue::kConvert};
  t.max_fusion_instructions = 32;  // vector-unit programs are short
  t.max_duplication_factor = 1.0;  // SRAM is the scarce resource: never recompute
  t.multi_output_fusion = false;
  // Slice, concatenate, pad and the dynamic slices are DMA programs of their own, iota viota
  // tiles stored by DMA (emit_block_copy.h), row gathers and scatters index-driven DMA
  // (emit_gather.h, emit_scatter.h), a reduce-window strided boxes folded on the vector unit
  // (emit_reduce_window.h), sorts and top-k the vector unit's bitonic network (emit_sort.h),
  // transposes strided DMA or vtrans tiles (emit_data_movement.h): a row program has no form
  // for a transpose, so one fused with elementwise work would send that work to the host.
  t.unfused_opcodes = {Opcode::kSlice,        Opcode::kConcatenate,
                       Opcode::kPad,          Opcode::kIota,
                       Opcode::kDynamicSlice, Opcode::kDynamicUpdateSlice,
                       Opcode::kGather,       Opcode::kScatter,
                       Opcode::kReduceWindow, Opcode::kSort,
                       Opcode::kTopK,         Opcode::kTranspose,
                       Opcode::kReverse};
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

compiler::Interconnect ChipLinks(const systolic::ArchConfig& config) {
  compiler::Interconnect links;
  if (config.link_bandwidth_gbps <= 0) return links;
  links.name = "chip-to-chip links (" + std::string(systolic::LinkTopologyName(config.link_topology)) +
               ")";
  links.bytes_per_second = config.link_bandwidth_gbps * 1e9;
  links.step_latency_seconds = config.link_latency_ns * 1e-9;
  links.hop_seconds = config.link_hop_ns * 1e-9;
  links.source = "the configuration's link.* keys";
  switch (config.link_topology) {
    case systolic::LinkTopology::kRing: links.topology = compiler::Topology::kRing; break;
    case systolic::LinkTopology::kTorus2d: links.topology = compiler::Topology::kTorus2d; break;
    case systolic::LinkTopology::kTorus3d: links.topology = compiler::Topology::kTorus3d; break;
    case systolic::LinkTopology::kSwitch: links.topology = compiler::Topology::kSwitch; break;
  }
  return links;
}

}  // namespace targets

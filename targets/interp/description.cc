// The `interp` target: hlo/'s reference evaluator. It executes every opcode itself (everything
// is "generated"), calls no library and fuses nothing, so its pipeline stays close to the input
// and serves as the numeric truth the other targets are compared with.
//
// The rates are a rough order of magnitude for the evaluator's single-threaded loops on the build
// machine's CPU (no SIMD, f32/f64 accumulation); they exist so that cost-model arithmetic is
// defined on every target, not to predict interpreter run times.
#include "targets/interp/description.h"

namespace targets {
namespace {

using compiler::OpHandling;
using compiler::OpRule;
using compiler::TargetDescription;

using hlo::PrimitiveType;

TargetDescription MakeInterpDescription() {
  TargetDescription t;
  t.name = "interp";
  t.description = "reference interpreter (hlo/evaluator): every op generated, no fusion";
  t.default_handling = OpHandling::kGenerated;
  // hlo::RegisterBuiltinCustomCalls ships "TopK" (hlo/evaluator.h); nothing else is known.
  t.custom_calls["TopK"] = OpRule{OpHandling::kGenerated, "", {}, OpHandling::kGenerated};
  t.supports_collectives = false;  // single device: the evaluator runs them as one replica only

  t.fusion_kinds = {};  // no fusion: the interpreter evaluates op by op
  t.contraction_epilogues = {};
  t.multi_output_fusion = false;
  t.preferred_conv_dim_labels = "";  // any dim_labels: the evaluator works on logical indices
  t.prefers_row_major = true;

  // Same host as the cpu target: an 8 GiB slice (see targets/cpu.cc), 4 MiB of L2.
  t.device_memory_bytes = int64_t{8} << 30;
  t.on_chip_memory_bytes = int64_t{4} << 20;
  t.alignment_bytes = 64;

  // Order of magnitude of the evaluator's scalar loops on one core (~1 op per few ns).
  t.peak.matrix_ops_per_second = {{PrimitiveType::kF32, 2e9},
                                  {PrimitiveType::kBF16, 1e9},
                                  {PrimitiveType::kF64, 2e9},
                                  {PrimitiveType::kS8, 1e9}};
  t.peak.vector_ops_per_second = 0.3e9;
  t.peak.memory_bytes_per_second = 10e9;
  t.peak.host_link_bytes_per_second = 10e9;  // it is the host
  t.peak.kernel_launch_seconds = 0;          // one virtual call per instruction

  // One core of the cpu target (targets/cpu.cc), busy at a fraction of its peak.
  t.energy.joules_per_flop = 5.5 / 2e9;
  t.energy.joules_per_vector_op = 5.5 / 0.3e9;
  t.energy.joules_per_dram_byte = 120e-12;
  t.energy.idle_watts = 1.5;
  t.price_per_hour_usd = 0.1008 / 2;  // one vCPU of the cpu target's instance
  return t;
}

}  // namespace

const compiler::TargetDescription& InterpDescription() {
  static const compiler::TargetDescription description = MakeInterpDescription();
  return description;
}

}  // namespace targets

// The `cpu` target: LLVM code generation for x86-64 with AVX-512, GEMM and convolution through
// hand-written AVX-512 micro-kernels (targets/cpu/gemm*.cc, "retarget-sgemm": measured faster
// than Eigen and on par with OpenBLAS on this machine, docs/perf.md), in the place XLA:CPU calls
// Eigen. Hand-written, CPU-specific code is not carried across by a compiler, so these calls are
// owned by a library like Eigen would be. Modelled on the machine this project builds on.
//
// Sources of the numbers (the machine is a 2-vCPU KVM guest; `lscpu`):
//   * CPU: "Intel(R) Xeon(R) Processor", family 6 model 207 (0xCF = 5th-gen Xeon Scalable,
//     Emerald Rapids), 2 cores x 1 thread, TSC 2.3 GHz (BogoMIPS 4599.99 = 2 x TSC), flags
//     avx512f, avx512_bf16, avx512_vnni, avx512_fp16; no AMX exposed to the guest.
//     L2 2 MiB per core, L3 260 MiB shared with other tenants.
//   * Peak FLOP/s: 2 cores x 2 AVX-512 FMA ports x 16 f32 lanes x 2 FLOP x 2.3 GHz
//     = 294.4 GFLOP/s f32 (Intel's optimization manual: two 512-bit FMA units on Xeon Scalable
//     "Platinum/Gold 6xxx"-class cores); f64 half of that; int8 through VNNI (vpdpbusd: 64 MACs
//     per 512-bit op) = 4x the f32 rate. bf16 dots go through the f32 GEMM, so bf16 is counted at
//     the f32 rate (the AVX512_BF16 dot-product instructions would double it; the GEMM does not
//     use them).
//   * Vector (elementwise) rate: 2 cores x 2 ports x 16 lanes x 2.3 GHz = 147.2 Gop/s.
//   * Memory bandwidth: the socket has 8 x DDR5-5600 channels (358 GB/s, Intel ARK for Xeon
//     Platinum 8592+) shared by all tenants; one core sustains roughly 15 GB/s (bounded by its
//     outstanding L2 misses), so a 2-core slice is modelled at 30 GB/s. An estimate, not measured.
//   * Price: AWS EC2 m7i.large (2 vCPU, 8 GiB, Xeon Scalable 4th gen, the closest on-demand
//     2-vCPU pair), us-east-1 Linux on-demand $0.1008/hour (aws.amazon.com/ec2/pricing).
//   * Energy: Xeon Platinum 8592+ TDP 350 W over 64 cores ~ 5.5 W per busy core (Intel ARK);
//     DDR5 access ~15 pJ/bit (O'Connor et al., "Fine-Grained DRAM", MICRO 2017, Fig. 1 order of
//     magnitude for DDR-class DRAM).
#include "targets/cpu/description.h"

namespace targets {
namespace {

using compiler::Epilogue;
using compiler::OpHandling;
using compiler::OpRule;
using compiler::TargetDescription;

using hlo::FusionKind;
using hlo::Opcode;
using hlo::PrimitiveType;

TargetDescription MakeCpuDescription() {
  TargetDescription t;
  t.name = "cpu";
  t.description = "x86-64 AVX-512 CPU: LLVM codegen, dot/convolution through retarget-sgemm";
  t.default_handling = OpHandling::kGenerated;

  // The f32 GEMM serves dot and convolution (targets/cpu/contraction_thunks.cc); bf16 and f16
  // operands are converted to f32 around the call. Other types get generated loops.
  const std::set<PrimitiveType> gemm_types = {PrimitiveType::kF32, PrimitiveType::kBF16,
                                              PrimitiveType::kF16};
  t.op_rules[Opcode::kDot] =
      OpRule{OpHandling::kLibrary, "retarget-sgemm", gemm_types, OpHandling::kGenerated};
  t.op_rules[Opcode::kConvolution] =
      OpRule{OpHandling::kLibrary, "retarget-sgemm", gemm_types, OpHandling::kGenerated};

  // Ops the code generator has no form for: the cpu backend runs them on the reference
  // evaluator (targets/cpu thunk_builder.cc Fallback, listed in the fallbacks.txt artifact;
  // checked per opcode by tests/tour step 10c). That is not compiled code, so they are host
  // fallbacks here (the host is the CPU itself; the cost model's host link is a memory copy).
  for (Opcode op : {Opcode::kMap, Opcode::kRng, Opcode::kRngBitGenerator,
                    Opcode::kRngGetAndUpdateState}) {
    t.op_rules[op] = OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback};
    t.host_fallback_details[op] = "no generated form; the reference evaluator runs it";
  }

  // The types the LLVM emitters have no form for run on the reference evaluator too (complex
  // arithmetic, fft, the 8-/4-bit floats and s4/u4; XLA:CPU computes them natively).
  t.host_element_types = compiler::ComplexAndNarrowTypes();
  t.host_element_types_detail = "no generated form for the type; the reference evaluator runs it";
  for (Opcode op : {Opcode::kReal, Opcode::kImag, Opcode::kComplex, Opcode::kFft}) {
    t.op_rules[op] = OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback};
    t.host_fallback_details[op] =
        "complex values have no generated form; the reference evaluator runs it";
  }
  t.custom_calls["__onednn$layernorm"] =
      OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback};

  // XLA:CPU lowers the "TopK" custom call to a runtime function it ships; our codegen emits it.
  t.custom_calls["TopK"] = OpRule{OpHandling::kGenerated, "", {}, OpHandling::kGenerated};
  t.supports_collectives = false;  // single process, single device

  t.fusion_kinds = {FusionKind::kLoop, FusionKind::kInput, FusionKind::kOutput};
  // The GEMM's per-block epilogue applies a bias, a scale and a ReLU while the tile is hot.
  t.contraction_epilogues = {Epilogue::kBiasAdd, Epilogue::kScale, Epilogue::kRelu};
  // An elementwise chain of a hundred ops is still one streaming loop for LLVM (JAX's exact
  // GELU is ~70 arithmetic ops); split in two it streams its data twice.
  t.max_fusion_instructions = 128;
  t.max_duplication_factor = 1.5;
  t.multi_output_fusion = false;
  t.gemm_reads_transposed_operands = true;  // Sgemm's trans_a / trans_b (thunk_builder.cc)
  // The convolution runtime (targets/cpu/conv.cc) is NHWC input, HWIO kernel, NHWC output.
  t.preferred_conv_dim_labels = "b01f_01io->b01f";
  t.prefers_row_major = true;

  t.device_memory_bytes = int64_t{8} << 30;   // m7i.large: 8 GiB
  t.on_chip_memory_bytes = int64_t{4} << 20;  // 2 x 2 MiB L2
  t.alignment_bytes = 64;                     // one cache line = one AVX-512 vector

  constexpr double kF32 = 2 * 2 * 16 * 2 * 2.3e9;  // 294.4 GFLOP/s
  t.peak.matrix_ops_per_second = {{PrimitiveType::kF32, kF32},    {PrimitiveType::kBF16, kF32},
                                  {PrimitiveType::kF16, kF32},    {PrimitiveType::kF64, kF32 / 2},
                                  {PrimitiveType::kS8, kF32 * 4}, {PrimitiveType::kS32, kF32 / 2}};
  t.peak.vector_ops_per_second = 2 * 2 * 16 * 2.3e9;  // 147.2 Gop/s
  t.peak.memory_bytes_per_second = 30e9;
  t.peak.host_link_bytes_per_second = 30e9;  // the CPU is the host: a "transfer" is a copy
  t.peak.kernel_launch_seconds = 1e-6;       // a runtime call plus thread-pool dispatch
  // Devices of a multi-device run are threads of one process: a collective copies through
  // shared memory (each byte read and written once: half the memory bandwidth), and a ring step
  // is a thread hand-off.
  t.interconnect = {"shared memory (threads of one process)", 15e9, 5e-6,
                    "half the memory bandwidth above; 5 us per step assumed (a condition-variable "
                    "wake-up), not measured"};

  constexpr double kBusyWatts = 2 * 5.5;
  t.energy.joules_per_flop = kBusyWatts / kF32;                       // ~37 pJ
  t.energy.joules_per_vector_op = kBusyWatts / (2 * 2 * 16 * 2.3e9);  // ~75 pJ
  t.energy.joules_per_dram_byte = 15e-12 * 8;
  t.energy.idle_watts = 3;
  t.price_per_hour_usd = 0.1008;
  return t;
}

}  // namespace

const compiler::TargetDescription& CpuDescription() {
  static const compiler::TargetDescription description = MakeCpuDescription();
  return description;
}

}  // namespace targets

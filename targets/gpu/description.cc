// The `gpu` target: NVIDIA H200 (SXM). LLVM NVPTX code generation for fused kernels, dot through
// cuBLASLt (with its epilogues), convolution through cuDNN — the split XLA:GPU makes.
//
// Sources of the numbers:
//   * NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200, SXM column):
//     141 GB HBM3e at 4.8 TB/s; FP64 34 TFLOPS, FP64 Tensor Core 67 TFLOPS, FP32 67 TFLOPS,
//     TF32 Tensor Core 989 TFLOPS*, BF16/FP16 Tensor Core 1,979 TFLOPS*, INT8 Tensor Core
//     3,958 TOPS* (* with 2:4 sparsity; dense is half: 989 / 1,979); max TDP 700 W; PCIe Gen5
//     128 GB/s (both directions together).
//   * f32 dots are counted at the non-tensor FP32 rate: Retarget's f32 semantics are exact f32
//     (no TF32 rounding) unless a pass proves the precision config allows it.
//   * Elementwise rate: 132 SMs x 128 FP32 lanes x 1.98 GHz boost = 33.5 Gop/s x 1000 (the FP32
//     67 TFLOPS figure counts an FMA as two operations).
//   * L2: 50 MB on GH100 (NVIDIA Hopper architecture whitepaper). cudaMalloc aligns to 256 bytes.
//   * Kernel launch: ~3 us per kernel/library call (an estimate of CUDA launch overhead; CUDA
//     graphs lower it).
//   * Energy: 700 W TDP spread over the dense BF16 rate (~0.7 pJ/FLOP) and the FP32 rate; HBM
//     ~4 pJ/bit (O'Connor et al., MICRO 2017, HBM2 3.9 pJ/bit); idle ~75 W (an estimate).
//   * Price: on-demand H200 SXM rental, $4.54 per GPU-hour (spheron.network, March 2026); the
//     hyperscaler range is $4.50-7.00 (mercatus-ai.com/blog/cloud-gpu-pricing, May 2026).
#include "targets/gpu/description.h"

#include "compiler/cost_model.h"
#include "targets/gpu/codegen/op_lowering.h"

namespace targets {
namespace {

using compiler::Epilogue;
using compiler::OpHandling;
using compiler::OpRule;
using compiler::TargetDescription;

using hlo::FusionKind;
using hlo::Opcode;
using hlo::PrimitiveType;

TargetDescription MakeGpuDescription() {
  TargetDescription t;
  t.name = "gpu";
  t.description = "NVIDIA H200: NVPTX codegen, dot through cuBLASLt, convolution through cuDNN";
  t.default_handling = OpHandling::kGenerated;

  // cuBLASLt takes the f16/bf16/f32/f64 GEMMs (one type throughout: dot-expander widens the
  // operands of mixed-precision dots). Integer dots (s8 x s8 -> s32 included; cuBLASLt's int8
  // IMMA path is not used yet) are a generated kernel: dot-expander rewrites them as a
  // multiply-reduce that input fusion makes one kernel. cuDNN's convolutions cover the
  // floating-point types; there is no generated convolution kernel, so an integer convolution
  // does not compile for the GPU (the report counts it as not carried across).
  t.op_rules[Opcode::kDot] = OpRule{OpHandling::kLibrary,
                                    "cuBLASLt",
                                    {PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32,
                                     PrimitiveType::kF64},
                                    OpHandling::kGenerated};
  t.op_rules[Opcode::kConvolution] =
      OpRule{OpHandling::kLibrary,
             "cuDNN",
             {PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32, PrimitiveType::kF64},
             OpHandling::kHostFallback};

  // Ops the GPU code generator has no lowering for (targets/gpu/codegen/op_lowering.h, the
  // table it dispatches on; compiling them fails naming the instruction). The GPU target has no
  // host fallback. Of the ownership vocabulary (docs/ownership.md) the one owner that says "this
  // target does not run it" for an op that is not a custom call is host-fallback, and the report
  // counts it as not carried across: the honest reading, since the host (or a new GPU kernel)
  // has to do that work. The detail says that the compile fails rather than falls back.
  // Opcodes the ownership analysis never asks about (no code, collectives, control flow) keep
  // the default.
  for (int i = 0; i < hlo::OpcodeCount(); ++i) {
    const Opcode op = static_cast<Opcode>(i);
    const hlo::OpClass op_class = hlo::OpcodeClass(op);
    if (gpu::codegen::LoweringOf(op) != gpu::codegen::OpLowering::kNone ||
        compiler::GeneratesNoCode(op) || op_class == hlo::OpClass::kCollective ||
        op_class == hlo::OpClass::kControl) {
      continue;
    }
    t.op_rules[op] = OpRule{OpHandling::kHostFallback, "", {}, OpHandling::kHostFallback};
    t.host_fallback_details[op] =
        "no GPU kernel yet, and the gpu target has no host fallback (compiling it fails)";
  }

  // Custom-call targets XLA:GPU emits after its own library rewrites, TopK, which XLA:GPU
  // implements with its own kernel, and the XLA FFI targets NVIDIA TransformerEngine's JAX
  // extension registers (transformer_engine/jax/csrc/extensions/pybind.cc, Registrations():
  // fused attention, GEMM, normalizations; older releases name the norms layernorm/rmsnorm).
  // TransformerEngine ships CUDA kernels only, so its calls are library-owned on this target and
  // unknown to every other one: the portability report names them GPU-only (kernel-locked) and
  // never counts them as carried across. Retarget's own GPU code generator does not link
  // TransformerEngine and still refuses them with an error naming the instruction.
  const OpRule cublas{OpHandling::kLibrary, "cuBLAS", {}, OpHandling::kLibrary};
  const OpRule cublaslt{OpHandling::kLibrary, "cuBLASLt", {}, OpHandling::kLibrary};
  const OpRule cudnn{OpHandling::kLibrary, "cuDNN", {}, OpHandling::kLibrary};
  const OpRule transformer_engine{OpHandling::kLibrary, "TransformerEngine", {},
                                  OpHandling::kLibrary};
  t.custom_calls["__cublas$gemm"] = cublas;
  t.custom_calls["__cublas$lt$matmul"] = cublaslt;
  t.custom_calls["__cublas$lt$matmul$f8"] = cublaslt;
  t.custom_calls["__cudnn$convForward"] = cudnn;
  t.custom_calls["__cudnn$convBiasActivationForward"] = cudnn;
  t.custom_calls["__cudnn$fmha"] = cudnn;
  t.custom_calls["TopK"] = OpRule{OpHandling::kGenerated, "", {}, OpHandling::kGenerated};
  for (const char* name :
       {"te_fused_attn_forward_ffi", "te_fused_attn_backward_ffi", "te_gemm_ffi",
        "te_norm_forward_ffi", "te_norm_backward_ffi", "te_layernorm_forward_ffi",
        "te_layernorm_backward_ffi", "te_rmsnorm_forward_ffi", "te_rmsnorm_backward_ffi"}) {
    t.custom_calls[name] = transformer_engine;
  }
  t.host_element_types = compiler::ComplexAndNarrowTypes();
  t.host_element_types_detail =
      "no GPU kernel for the type yet, and the gpu target has no host fallback (compiling it "
      "fails)";
  // Collectives compile to NCCL steps (gpu_compiler_collectives.cc); the ownership analysis
  // keeps them a class of their own on every target, costed over `interconnect`.
  t.supports_collectives = false;

  t.fusion_kinds = {FusionKind::kLoop, FusionKind::kInput, FusionKind::kOutput};
  // cuBLASLt epilogues: CUBLASLT_EPILOGUE_BIAS, _RELU(_BIAS), _GELU(_BIAS); scale via alpha.
  t.contraction_epilogues = {Epilogue::kBiasAdd, Epilogue::kRelu, Epilogue::kGelu,
                             Epilogue::kScale};
  t.max_fusion_instructions = 64;
  t.max_duplication_factor = 1.5;
  t.multi_output_fusion = true;
  // Tensor-core convolutions in cuDNN want NHWC activations and KRSC (o01i) filters.
  t.preferred_conv_dim_labels = "b01f_o01i->b01f";
  t.prefers_row_major = true;

  t.device_memory_bytes = int64_t{141'000'000'000};
  t.on_chip_memory_bytes = int64_t{50} << 20;
  t.alignment_bytes = 256;

  t.peak.matrix_ops_per_second = {{PrimitiveType::kBF16, 989e12},
                                  {PrimitiveType::kF16, 989e12},
                                  {PrimitiveType::kF32, 67e12},
                                  {PrimitiveType::kF64, 67e12},
                                  {PrimitiveType::kS8, 1979e12}};
  t.peak.vector_ops_per_second = 33.5e12;
  t.peak.memory_bytes_per_second = 4.8e12;
  t.peak.host_link_bytes_per_second = 64e9;  // PCIe Gen5 x16, one direction
  t.peak.kernel_launch_seconds = 3e-6;
  // NVLink 4 on the H100/H200 SXM: 900 GB/s per GPU, both directions together.
  t.interconnect = {"NVLink 4", 450e9, 2e-6,
                    "NVIDIA H100/H200 SXM datasheets: NVLink 900 GB/s per GPU (450 GB/s each "
                    "way); 2 us per ring step assumed, not measured (no multi-GPU machine)"};

  t.energy.joules_per_flop = 700.0 / 989e12;
  t.energy.joules_per_vector_op = 700.0 / 33.5e12;
  t.energy.joules_per_dram_byte = 4e-12 * 8;
  t.energy.idle_watts = 75;
  t.price_per_hour_usd = 4.54;
  return t;
}

}  // namespace

const compiler::TargetDescription& GpuDescription() {
  static const compiler::TargetDescription description = MakeGpuDescription();
  return description;
}

}  // namespace targets

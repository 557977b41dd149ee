// Library steps of the GPU code generator (see gpu_compiler.h): dots as cuBLASLt matmuls,
// convolutions as cuDNN steps between permuting copies, and fusions built around either one
// (kOutput, and kCustom fusions another compiler formed around a dot or convolution) as the
// library step followed, when the library cannot fuse the rest, by a generated epilogue kernel.
#include <optional>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/conv_lowering.h"
#include "targets/gpu/codegen/epilogue_matching.h"
#include "targets/gpu/codegen/gpu_compiler_internal.h"
#include "targets/gpu/codegen/matmul_lowering.h"

namespace gpu::codegen::internal {

namespace {

bool IsLibraryOp(const Instruction& inst) {
  return inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution;
}

// Reads `source` at the index whose dimension to_source[d] is the target's dimension d: the
// generator of a permuting copy (HLO layout <-> cuDNN's NCHW / KCRS / NKPQ).
GeneratorFactory PermutingCopy(std::vector<int64_t> target_dim_of_source) {
  return [target_dim_of_source](llvm_codegen::ElementalEmitter&,
                                std::vector<llvm_codegen::ElementGenerator> loads) {
    llvm_codegen::ElementGenerator read = loads.at(0);
    return std::vector<llvm_codegen::ElementGenerator>{
        [read, target_dim_of_source](const llvm_codegen::IrIndex& index) {
          llvm_codegen::IrIndex source(target_dim_of_source.size());
          for (size_t d = 0; d < source.size(); ++d)
            source[d] = index.at(static_cast<size_t>(target_dim_of_source[d]));
          return read(source);
        }};
  };
}

// The inverse of a permutation given as "position i holds dimension p[i]".
std::vector<int64_t> Inverse(const std::vector<int64_t>& p) {
  std::vector<int64_t> inverse(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    inverse[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inverse;
}

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace

void ArtifactBuilder::LowerConvolution(const Instruction& conv) {
  LowerConvolutionInto(conv, conv, conv.name(), ArraySlice(*conv.operand(0)),
                       ArraySlice(*conv.operand(1)), ArraySlice(conv));
  AddOwner(conv, "cuDNN");
}

// convolution -> [permute input to NCHW] [permute filter to KCRS] cudnn_conv [NKPQ -> result].
// `conv` may sit inside a fusion (`owner`): its operands' shapes are then the parameters'.
void ArtifactBuilder::LowerConvolutionInto(const Instruction& conv, const Instruction& owner,
                                           const std::string& step_name, gpu::Slice input,
                                           gpu::Slice filter, gpu::Slice result) {
  auto planned = PlanConvolution(conv);
  if (auto* reason = std::get_if<std::string>(&planned)) Unsupported(owner, *reason);
  ConvPlan& plan = std::get<ConvPlan>(planned);
  const int64_t bytes = hlo::ByteSize(conv.shape().type);
  // An operand in cuDNN's order: its own slice when already there, else a permuted copy.
  auto in_cudnn_order = [&](const Instruction& operand, gpu::Slice slice,
                            const std::vector<int64_t>& hlo_dims,
                            const std::vector<int64_t>& cudnn_dims, const char* what) {
    if (IsIdentity(hlo_dims) && operand.shape().HasDefaultLayout()) return slice;
    hlo::Shape shape = hlo::Shape::Array(operand.shape().type, cudnn_dims);
    gpu::Slice scratch = ScratchSlice(static_cast<uint64_t>(shape.ElementCount() * bytes));
    // cuDNN dim i is HLO dim hlo_dims[i]: the HLO index has, at hlo_dims[i], the target's i.
    AddLoopKernel(owner, step_name + "." + what, {operand.shape()}, {slice}, {shape}, {scratch},
                  PermutingCopy(Inverse(hlo_dims)));
    return scratch;
  };
  plan.call.input =
      in_cudnn_order(*conv.operand(0), input, plan.input_dims, plan.call.input_dims, "to_nchw");
  plan.call.filter =
      in_cudnn_order(*conv.operand(1), filter, plan.filter_dims, plan.call.filter_dims, "to_kcrs");
  const bool output_in_order = IsIdentity(plan.output_dims) && conv.shape().HasDefaultLayout();
  plan.call.output = output_in_order
                         ? result
                         : ScratchSlice(static_cast<uint64_t>(conv.shape().ElementCount() * bytes));
  steps_->push_back({step_name, plan.call});
  if (output_in_order) return;
  hlo::Shape nkpq = hlo::Shape::Array(conv.shape().type, plan.call.output_dims);
  // The HLO result at index o reads NKPQ at (o[output_dims[0]], o[output_dims[1]], ...).
  AddLoopKernel(owner, step_name + ".from_nkpq", {nkpq}, {plan.call.output}, {conv.shape()},
                {result}, PermutingCopy(plan.output_dims));
}

// A fusion around one dot or convolution. Epilogues cuBLASLt has (epilogue_matching.h) go into
// the matmul itself; otherwise the library step writes a scratch slice and the fused computation
// then runs as a loop kernel that reads the library op's value from it (XLA:GPU does the same
// for convolutions whose epilogue cuDNN cannot fuse).
void ArtifactBuilder::LowerOutputFusion(const Instruction& fusion) {
  const hlo::Computation& fused = *fusion.called_computations().at(0);
  const Instruction* library_op = nullptr;
  for (const auto& inst : fused.instructions())
    if (IsLibraryOp(*inst)) {
      if (library_op != nullptr)
        Unsupported(fusion, "a fusion with two dots or convolutions (" + library_op->name() +
                                ", " + inst->name() + ")");
      library_op = inst.get();
    }
  if (library_op == nullptr) Unsupported(fusion, "an output fusion without a dot or convolution");
  for (int i = 0; i < 2; ++i)
    if (library_op->operand(i)->opcode() != Opcode::kParameter)
      Unsupported(fusion, "the " + std::string(hlo::OpcodeName(library_op->opcode())) +
                              "'s operands are computed inside the fusion");
  auto operand_slice = [&](int i) {
    const int64_t number = library_op->operand(i)->attr<hlo::ParameterAttrs>().number;
    return ArraySlice(*fusion.operand(number));
  };
  const uint64_t library_bytes = static_cast<uint64_t>(library_op->shape().ElementCount()) *
                                 static_cast<uint64_t>(hlo::ByteSize(library_op->shape().type));

  bool epilogue_in_library = false;
  gpu::Slice value;  // where the library op's result lands
  if (library_op->opcode() == Opcode::kDot) {
    // cuBLASLt's f64 matmuls take no epilogue: an f64 fusion's epilogue is a kernel of its own.
    const std::optional<MatchedEpilogue> epilogue =
        library_op->shape().type == hlo::PrimitiveType::kF64
            ? std::nullopt
            : MatchCublasLtEpilogue(fused, *library_op);
    epilogue_in_library = epilogue.has_value();
    value = epilogue ? ArraySlice(fusion) : ScratchSlice(library_bytes);
    auto lowered = LowerDotToMatmul(*library_op, operand_slice(0), operand_slice(1), value);
    if (auto* reason = std::get_if<std::string>(&lowered)) Unsupported(fusion, *reason);
    gpu::MatmulCall call = std::get<gpu::MatmulCall>(lowered);
    if (epilogue) {
      call.epilogue = epilogue->epilogue;
      if (epilogue->bias_parameter >= 0)
        call.bias = ArraySlice(*fusion.operand(epilogue->bias_parameter));
    }
    steps_->push_back({fusion.name() + ".matmul", call});
    AddOwner(fusion, "cuBLASLt");
  } else {
    epilogue_in_library = fused.root() == library_op && fusion.shape().IsArray();
    value = epilogue_in_library ? ArraySlice(fusion) : ScratchSlice(library_bytes);
    LowerConvolutionInto(*library_op, fusion, fusion.name() + ".conv", operand_slice(0),
                         operand_slice(1), value);
    AddOwner(fusion, "cuDNN");
  }
  if (epilogue_in_library) return;

  // The epilogue kernel: the fusion's operands, then the scratch holding the library op's value.
  std::vector<const Instruction*> operands(fusion.operands().begin(), fusion.operands().end());
  std::vector<gpu::Slice> slices;
  for (const Instruction* operand : operands) slices.push_back(ArraySlice(*operand));
  operands.push_back(library_op);
  slices.push_back(value);
  AddKernel(
      fusion, operands, slices,
      [&fused, library_op](llvm_codegen::ElementalEmitter& emitter,
                           std::vector<llvm_codegen::ElementGenerator> loads) {
        std::map<const Instruction*, llvm_codegen::ElementGenerator> generators;
        for (const auto& owned : fused.instructions()) {
          const Instruction* inst = owned.get();
          if (inst == library_op) {
            generators[inst] = loads.back();
          } else if (inst->opcode() == Opcode::kParameter) {
            generators[inst] =
                loads.at(static_cast<size_t>(inst->attr<hlo::ParameterAttrs>().number));
          } else {
            std::vector<llvm_codegen::ElementGenerator> inputs;
            for (const Instruction* operand : inst->operands())
              inputs.push_back(generators.at(operand));
            generators[inst] = emitter.MakeGenerator(*inst, std::move(inputs));
          }
        }
        return std::vector<llvm_codegen::ElementGenerator>{generators.at(fused.root())};
      },
      /*record_owner=*/false);
}

}  // namespace gpu::codegen::internal

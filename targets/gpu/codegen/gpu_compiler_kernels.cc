// Kernel and library steps of the GPU code generator (see gpu_compiler.h): loop kernels, row
// kernels, kOutput fusions as a cuBLASLt matmul (+ epilogue or epilogue kernel), convolutions
// as cuDNN steps between permuting copies.
#include <optional>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/conv_lowering.h"
#include "targets/gpu/codegen/epilogue_matching.h"
#include "targets/gpu/codegen/gpu_compiler_internal.h"
#include "targets/gpu/codegen/matmul_lowering.h"
#include "targets/gpu/codegen/row_kernel.h"

namespace gpu_codegen::internal {

void ArtifactBuilder::AddKernel(const Instruction& inst, std::vector<const Instruction*> operands,
                                std::vector<gpu::Slice> operand_slices,
                                const GeneratorFactory& factory, bool record_owner) {
  std::vector<hlo::Shape> operand_shapes, output_shapes;
  for (const Instruction* operand : operands) {
    if (!operand->shape().IsArray()) Unsupported(inst, "a tuple operand of a kernel");
    operand_shapes.push_back(operand->shape());
  }
  CollectLeafShapes(inst.shape(), output_shapes);
  for (const hlo::Shape& output : output_shapes)
    if (output.dims != output_shapes[0].dims) Unsupported(inst, "outputs of different shapes");
  if (record_owner) AddOwner(inst, "generated-kernel");
  AddLoopKernel(inst, inst.name(), std::move(operand_shapes), std::move(operand_slices),
                std::move(output_shapes), Slices(inst), factory);
}

void ArtifactBuilder::AddLoopKernel(const Instruction& inst, const std::string& step_name,
                                    std::vector<hlo::Shape> operand_shapes,
                                    std::vector<gpu::Slice> operand_slices,
                                    std::vector<hlo::Shape> output_shapes,
                                    std::vector<gpu::Slice> output_slices,
                                    const GeneratorFactory& factory) {
  LoopKernelSpec spec;
  spec.entry = KernelSymbol(llvm_module_, step_name);
  spec.operands = std::move(operand_shapes);
  spec.outputs = std::move(output_shapes);
  for (const gpu::Slice& slice : operand_slices) {
    bool aliases = false;
    for (const gpu::Slice& out : output_slices)
      aliases = aliases ||
                (slice.offset < out.offset + out.bytes && out.offset < slice.offset + slice.bytes);
    spec.operand_may_alias_output.push_back(aliases);
  }
  LoopKernelPlan plan;
  try {
    plan = EmitLoopKernel(llvm_module_, spec, factory);
  } catch (const hlo::Error& error) {
    throw hlo::Error(inst.location(), "gpu backend cannot compile instruction " + Describe(inst) +
                                          ": " + error.message());
  }
  if (plan.work_items == 0) return;  // nothing to compute: no launch
  const LaunchDimensions dims = ChooseLaunchDimensions(plan.work_items, options_.device);
  gpu::KernelLaunch launch;
  launch.module = kPtxModule;
  launch.entry = spec.entry;
  launch.grid = {dims.grid, 1, 1};
  launch.block = {dims.block, 1, 1};
  for (const gpu::Slice& slice : operand_slices)
    launch.args.push_back({gpu::KernelArg::Kind::kBuffer, slice});
  for (const gpu::Slice& slice : output_slices)
    launch.args.push_back({gpu::KernelArg::Kind::kBuffer, slice});
  result_.artifact.manifest.steps.push_back({step_name, std::move(launch)});
  KernelRecord record;
  record.instruction = inst.name();
  record.entry = spec.entry;
  record.kind = "loop";
  record.elements_per_thread = plan.elements_per_thread;
  record.grid = dims.grid;
  record.block = dims.block;
  result_.kernels.push_back(record);
}

// Fusions around row reductions: one warp per row with shuffles (row_kernel.h).
bool ArtifactBuilder::TryRowKernel(const Instruction& fusion) {
  const hlo::Computation& fused = *fusion.called_computations().at(0);
  std::optional<RowKernelPlan> plan = PlanRowKernel(fused);
  if (!plan || !fusion.shape().IsArray()) return false;
  const std::string entry = KernelSymbol(llvm_module_, fusion.name());
  std::vector<hlo::Shape> operand_shapes;
  gpu::KernelLaunch launch;
  for (const Instruction* operand : fusion.operands()) {
    operand_shapes.push_back(operand->shape());
    launch.args.push_back({gpu::KernelArg::Kind::kBuffer, ArraySlice(*operand)});
  }
  launch.args.push_back({gpu::KernelArg::Kind::kBuffer, ArraySlice(fusion)});
  try {
    EmitRowKernel(llvm_module_, entry, fused, *plan, operand_shapes);
  } catch (const hlo::Error& error) {
    throw hlo::Error(fusion.location(), "gpu backend cannot compile instruction " +
                                            Describe(fusion) + ": " + error.message());
  }
  AddOwner(fusion, "generated-kernel");
  if (plan->rows == 0) return true;
  const LaunchDimensions dims = ChooseRowLaunchDimensions(plan->rows, options_.device);
  launch.module = kPtxModule;
  launch.entry = entry;
  launch.grid = {dims.grid, 1, 1};
  launch.block = {dims.block, 1, 1};
  result_.artifact.manifest.steps.push_back({fusion.name(), std::move(launch)});
  KernelRecord record;
  record.instruction = fusion.name();
  record.entry = entry;
  record.kind = "row-reduction";
  record.grid = dims.grid;
  record.block = dims.block;
  result_.kernels.push_back(record);
  return true;
}

// dot + epilogue. Epilogues cuBLASLt has (epilogue_matching.h) go into the matmul itself;
// otherwise the matmul writes a scratch slice and the fused computation then runs as a loop
// kernel that reads the dot's value from it.
void ArtifactBuilder::LowerOutputFusion(const Instruction& fusion) {
  const hlo::Computation& fused = *fusion.called_computations().at(0);
  const Instruction* dot = nullptr;
  for (const auto& inst : fused.instructions())
    if (inst->opcode() == Opcode::kDot) {
      if (dot != nullptr) Unsupported(fusion, "an output fusion with two dots");
      dot = inst.get();
    }
  if (dot == nullptr)
    Unsupported(fusion,
                "an output fusion without a dot (convolution output fusions need the "
                "cuDNN lowering, not written yet)");
  for (int i = 0; i < 2; ++i)
    if (dot->operand(i)->opcode() != Opcode::kParameter)
      Unsupported(fusion, "the dot's operands are computed inside the fusion");
  auto operand_slice = [&](int i) {
    const int64_t number = dot->operand(i)->attr<hlo::ParameterAttrs>().number;
    return ArraySlice(*fusion.operand(number));
  };
  const uint64_t dot_bytes = static_cast<uint64_t>(dot->shape().ElementCount()) *
                             static_cast<uint64_t>(hlo::ByteSize(dot->shape().type));
  const std::optional<MatchedEpilogue> epilogue = MatchCublasLtEpilogue(fused, *dot);
  gpu::Slice scratch = epilogue ? ArraySlice(fusion) : gpu::Slice{arena_top_, dot_bytes};
  if (!epilogue) arena_top_ = AlignUp(arena_top_ + dot_bytes);
  auto lowered = LowerDotToMatmul(*dot, operand_slice(0), operand_slice(1), scratch);
  if (auto* reason = std::get_if<std::string>(&lowered)) Unsupported(fusion, *reason);
  gpu::MatmulCall call = std::get<gpu::MatmulCall>(lowered);
  if (epilogue) {
    call.epilogue = epilogue->epilogue;
    if (epilogue->bias_parameter >= 0)
      call.bias = ArraySlice(*fusion.operand(epilogue->bias_parameter));
  }
  result_.artifact.manifest.steps.push_back({fusion.name() + ".matmul", call});
  AddOwner(fusion, "cuBLASLt");
  if (epilogue) return;

  // The epilogue kernel: the fusion's operands, then the scratch holding the dot's value.
  std::vector<const Instruction*> operands(fusion.operands().begin(), fusion.operands().end());
  std::vector<gpu::Slice> slices;
  for (const Instruction* operand : operands) slices.push_back(ArraySlice(*operand));
  operands.push_back(dot);
  slices.push_back(scratch);
  AddKernel(
      fusion, operands, slices,
      [&fused, dot](llvm_codegen::ElementalEmitter& emitter,
                    std::vector<llvm_codegen::ElementGenerator> loads) {
        std::map<const Instruction*, llvm_codegen::ElementGenerator> generators;
        for (const auto& owned : fused.instructions()) {
          const Instruction* inst = owned.get();
          if (inst == dot) {
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

namespace {

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

// convolution -> [permute input to NCHW] [permute filter to KCRS] cudnn_conv [NKPQ -> result].
void ArtifactBuilder::LowerConvolution(const Instruction& conv) {
  auto planned = PlanConvolution(conv);
  if (auto* reason = std::get_if<std::string>(&planned)) Unsupported(conv, *reason);
  ConvPlan& plan = std::get<ConvPlan>(planned);
  const int64_t bytes = hlo::ByteSize(conv.shape().type);
  // An operand in cuDNN's order: its own slice when already there, else a permuted copy.
  auto in_cudnn_order = [&](const Instruction& operand, const std::vector<int64_t>& hlo_dims,
                            const std::vector<int64_t>& cudnn_dims, const char* what) {
    if (IsIdentity(hlo_dims) && operand.shape().HasDefaultLayout()) return ArraySlice(operand);
    hlo::Shape shape = hlo::Shape::Array(operand.shape().type, cudnn_dims);
    gpu::Slice scratch = ScratchSlice(static_cast<uint64_t>(shape.ElementCount() * bytes));
    // cuDNN dim i is HLO dim hlo_dims[i]: the HLO index has, at hlo_dims[i], the target's i.
    AddLoopKernel(conv, conv.name() + "." + what, {operand.shape()}, {ArraySlice(operand)}, {shape},
                  {scratch}, PermutingCopy(Inverse(hlo_dims)));
    return scratch;
  };
  plan.call.input =
      in_cudnn_order(*conv.operand(0), plan.input_dims, plan.call.input_dims, "to_nchw");
  plan.call.filter =
      in_cudnn_order(*conv.operand(1), plan.filter_dims, plan.call.filter_dims, "to_kcrs");
  const gpu::Slice result = ArraySlice(conv);
  const bool output_in_order = IsIdentity(plan.output_dims) && conv.shape().HasDefaultLayout();
  plan.call.output = output_in_order
                         ? result
                         : ScratchSlice(static_cast<uint64_t>(conv.shape().ElementCount() * bytes));
  result_.artifact.manifest.steps.push_back({conv.name(), plan.call});
  AddOwner(conv, "cuDNN");
  if (output_in_order) return;
  hlo::Shape nkpq = hlo::Shape::Array(conv.shape().type, plan.call.output_dims);
  // The HLO result at index o reads NKPQ at (o[output_dims[0]], o[output_dims[1]], ...).
  AddLoopKernel(conv, conv.name() + ".from_nkpq", {nkpq}, {plan.call.output}, {conv.shape()},
                {result}, PermutingCopy(plan.output_dims));
}

}  // namespace gpu_codegen::internal

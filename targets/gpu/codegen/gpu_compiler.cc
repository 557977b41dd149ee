// The GPU code generator's driver (see gpu_compiler.h): arena layout from buffer assignment,
// the walk over the entry schedule, PTX emission and ptxas. Kernel and matmul steps are built in
// gpu_compiler_kernels.cc.
#include "targets/gpu/codegen/gpu_compiler.h"

#include <algorithm>
#include <map>

#include "compiler/cost_model.h"
#include "compiler/memory/buffer_assignment.h"
#include "compiler/memory/value_sizes.h"
#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "hlo/custom_call_targets.h"
#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/gpu_compiler_internal.h"
#include "targets/gpu/codegen/matmul_lowering.h"
#include "targets/gpu/codegen/nvptx_target.h"
#include "targets/gpu/codegen/op_lowering.h"
#include "targets/gpu/description.h"

namespace gpu::codegen {
namespace internal {

std::vector<const Instruction*> ArtifactBuilder::LayOut(
    const hlo::Computation& computation,
    const std::map<const Instruction*, std::vector<gpu::Slice>>& bound,
    const compiler::BufferAssignment* given) {
  std::optional<compiler::BufferAssignment> own;
  if (given == nullptr) {
    own.emplace(compiler::AssignBuffers(computation, targets::GpuDescription()));
  }
  const compiler::BufferAssignment& assignment = given != nullptr ? *given : *own;
  // A computation called twice (two conditionals sharing a branch) is laid out anew each time:
  // nothing of the previous layout, aliases included, may stay.
  for (const auto& inst : computation.instructions()) slices_.erase(inst.get());
  // Allocations holding only bound parameters take no space (their buffers are the caller's).
  std::vector<bool> used(assignment.allocations().size(), false);
  for (const compiler::LogicalBuffer& buffer : assignment.buffers()) {
    if (!bound.count(buffer.instruction)) used.at(static_cast<size_t>(buffer.allocation)) = true;
  }
  std::vector<uint64_t> base;
  for (size_t a = 0; a < assignment.allocations().size(); ++a) {
    base.push_back(arena_top_);
    if (used[a]) {
      arena_top_ = AlignUp(arena_top_ + static_cast<uint64_t>(assignment.allocations()[a].size));
    }
  }
  // Buffers of one instruction in index order = depth-first leaf order.
  std::map<const Instruction*, std::vector<const compiler::LogicalBuffer*>> by_instruction;
  for (const compiler::LogicalBuffer& buffer : assignment.buffers())
    by_instruction[buffer.instruction].push_back(&buffer);
  for (auto& [inst, buffers] : by_instruction) {
    if (auto it = bound.find(inst); it != bound.end()) {
      slices_[inst] = it->second;
      continue;
    }
    std::sort(buffers.begin(), buffers.end(), [](auto* x, auto* y) { return x->index < y->index; });
    std::vector<gpu::Slice>& slices = slices_[inst];
    for (const compiler::LogicalBuffer* buffer : buffers) {
      const uint64_t offset = base.at(static_cast<size_t>(buffer->allocation)) +
                              static_cast<uint64_t>(buffer->offset);
      if (offset % kSliceAlignment != 0)
        throw hlo::Error(inst->location(), "gpu backend: buffer of " + inst->name() +
                                               " is not 256-byte aligned in the arena");
      slices.push_back({offset, static_cast<uint64_t>(buffer->size)});
    }
  }
  for (const auto& [inst, slices] : bound) slices_[inst] = slices;  // leafless parameters too
  return assignment.schedule();
}

// The arena slices of an instruction's array leaves; aliasing ops resolve to their operands'.
const std::vector<gpu::Slice>& ArtifactBuilder::Slices(const Instruction& inst) {
  if (auto it = slices_.find(&inst); it != slices_.end()) return it->second;
  std::vector<gpu::Slice> slices;
  switch (inst.opcode()) {
    case Opcode::kTuple:
      for (const Instruction* operand : inst.operands()) {
        const auto& part = Slices(*operand);
        slices.insert(slices.end(), part.begin(), part.end());
      }
      break;
    case Opcode::kGetTupleElement: {
      const auto& whole = Slices(*inst.operand(0));
      const int64_t index = inst.attr<hlo::TupleIndexAttrs>().index;
      size_t first = 0;
      const auto& elements = inst.operand(0)->shape().tuple_shapes;
      for (int64_t i = 0; i < index; ++i) first += LeafCount(elements[static_cast<size_t>(i)]);
      const size_t count = LeafCount(inst.shape());
      if (first + count > whole.size()) Unsupported(inst, "tuple index out of range");
      slices.assign(whole.begin() + static_cast<std::ptrdiff_t>(first),
                    whole.begin() + static_cast<std::ptrdiff_t>(first + count));
      break;
    }
    default:
      // Bitcast, opt-barrier, an annotation custom-call: the operand's buffers.
      if (!compiler::memory::IsAliasing(inst)) Unsupported(inst, "no buffer was assigned to it");
      slices = Slices(*inst.operand(0));
  }
  return slices_[&inst] = std::move(slices);
}

gpu::Slice ArtifactBuilder::ArraySlice(const Instruction& inst) {
  const auto& slices = Slices(inst);
  if (!inst.shape().IsArray() || slices.size() != 1) Unsupported(inst, "expected an array value");
  return slices[0];
}

void ArtifactBuilder::Lower(const Instruction& inst) {
  gpu::Manifest& manifest = result_.artifact.manifest;
  switch (LoweringOf(inst.opcode())) {
    case OpLowering::kAlias:
      return;  // no work: their values are other instructions' buffers (Slices)
    case OpLowering::kConstant: {
      const hlo::Literal& literal = inst.attr<hlo::ConstantAttrs>().literal;
      if (!inst.shape().HasDefaultLayout())
        Unsupported(inst, "a constant with a non-default layout");
      // Unique across the entry and every program (two computations may both name a constant
      // "one").
      std::string section = "const." + inst.name();
      for (int n = 1; result_.artifact.sections.count(section); ++n)
        section = "const." + inst.name() + "." + std::to_string(n);
      auto bytes = literal.bytes();
      result_.artifact.sections[section] = std::string(bytes.begin(), bytes.end());
      gpu::Slice slice = ArraySlice(inst);
      slice.bytes = bytes.size();
      if (!bytes.empty()) manifest.constants.push_back({section, slice});
      return;
    }
    case OpLowering::kCopyOrKernel: {
      // Between identical physical orders (row-major reshape, same-layout copy) the bytes do
      // not move: a device-to-device copy instead of a kernel.
      const hlo::Shape& from = inst.operand(0)->shape();
      const bool same_bytes =
          inst.opcode() == Opcode::kReshape
              ? from.HasDefaultLayout() && inst.shape().HasDefaultLayout()
              : from.EffectiveMinorToMajor() == inst.shape().EffectiveMinorToMajor();
      if (same_bytes && from.IsArray() && from.type == inst.shape().type) {
        const gpu::Slice source = ArraySlice(*inst.operand(0)), destination = ArraySlice(inst);
        if (source.bytes > 0 && !(source == destination))
          steps_->push_back({inst.name(), gpu::DeviceCopy{source, destination}});
        AddOwner(inst, "copy");
        return;
      }
      break;  // a layout change: a loop kernel below
    }
    case OpLowering::kConvolution:
      return LowerConvolution(inst);
    case OpLowering::kIndexedKernel:
      return LowerIndexedOp(inst);
    case OpLowering::kScatterKernel:
      return LowerScatter(inst);
    case OpLowering::kSortKernel:
      return LowerSort(inst);
    case OpLowering::kTopKKernel:
      return LowerTopK(inst);
    case OpLowering::kCustomCall:
      // XLA's custom-call form of top-k (the gpu target lists it as generated code).
      if (inst.attr<hlo::CustomCallAttrs>().target == "TopK") return LowerTopK(inst);
      // An annotation for a later XLA pass (Sharding, annotate_device_placement, ...) computes
      // nothing: its result is its operand's value, a copy at most.
      if (hlo::IsAnnotationCustomCall(inst.attr<hlo::CustomCallAttrs>().target) &&
          inst.operand_count() == 1) {
        CopyLeaves(inst.name(), Slices(*inst.operand(0)), Slices(inst), *steps_);
        AddOwner(inst, "annotation");
        return;
      }
      Unsupported(inst);
    case OpLowering::kMatmul: {
      auto lowered = LowerDotToMatmul(inst, ArraySlice(*inst.operand(0)),
                                      ArraySlice(*inst.operand(1)), ArraySlice(inst));
      if (auto* reason = std::get_if<std::string>(&lowered)) Unsupported(inst, *reason);
      steps_->push_back({inst.name(), std::get<gpu::MatmulCall>(lowered)});
      AddOwner(inst, "cuBLASLt");
      return;
    }
    case OpLowering::kFusion: {
      const hlo::FusionKind kind = inst.attr<hlo::FusionAttrs>().kind;
      // kCustom: a fusion another compiler formed for its own library (XNNPACK's
      // "__ynn_fusion", say). One built around a dot or convolution is what XLA:GPU would
      // hand to cuBLASLt / cuDNN, so it is lowered exactly like an output fusion.
      if (kind == hlo::FusionKind::kOutput || kind == hlo::FusionKind::kCustom)
        return LowerOutputFusion(inst);
      if (kind != hlo::FusionKind::kLoop && kind != hlo::FusionKind::kInput)
        Unsupported(inst, "only loop, input, output and custom fusions are compiled");
      std::vector<const Instruction*> operands(inst.operands().begin(), inst.operands().end());
      if (TryRowKernel(inst) || TryColumnKernel(inst) || TryTransposeKernel(inst)) return;
      std::vector<gpu::Slice> slices;
      for (const Instruction* operand : operands) slices.push_back(ArraySlice(*operand));
      const hlo::Computation& fused = *inst.called_computations().at(0);
      AddKernel(inst, operands, slices,
                [&fused](llvm_codegen::ElementalEmitter& emitter,
                         std::vector<llvm_codegen::ElementGenerator> loads) {
                  return emitter.MakeComputationGenerators(fused, loads);
                });
      return;
    }
    case OpLowering::kControlFlow:
      if (inst.opcode() == Opcode::kWhile) return LowerWhile(inst);
      if (inst.opcode() == Opcode::kConditional) return LowerConditional(inst);
      return LowerCall(inst);
    case OpLowering::kCollective:
      return LowerCollective(inst);
    case OpLowering::kNone:
      Unsupported(inst);
    case OpLowering::kExpandedFirst:
      Unsupported(inst, "expected the gpu pipeline's batch-norm-expander to rewrite it");
    case OpLowering::kElementalKernel:
      break;
  }
  // A tuple result only from a variadic reduce (argmax's value and index): one kernel writing
  // every result.
  if (!inst.shape().IsArray() && inst.opcode() != Opcode::kReduce) Unsupported(inst);
  if (inst.opcode() == Opcode::kTranspose && TryTransposeKernel(inst)) return;
  std::vector<const Instruction*> operands(inst.operands().begin(), inst.operands().end());
  std::vector<gpu::Slice> slices;
  for (const Instruction* operand : operands) slices.push_back(ArraySlice(*operand));
  AddKernel(inst, operands, slices,
            [&inst](llvm_codegen::ElementalEmitter& emitter,
                    std::vector<llvm_codegen::ElementGenerator> loads) {
              return emitter.MakeGenerators(inst, std::move(loads));
            });
}

// Tensor slots are row-major (the artifact's contract, and the order of .npz files and of
// hlo::Literal): a parameter or result in another layout gets a row-major slot and a kernel
// between it and the buffer the module uses — before the first step for a parameter, after the
// last for a result.
gpu::Slice ArtifactBuilder::RelayOut(const Instruction& inst, const std::string& name,
                                     const hlo::Shape& physical, gpu::Slice buffer,
                                     bool into_module) {
  const hlo::Shape row_major = hlo::Shape::Array(physical.type, physical.dims);
  const gpu::Slice slot = ScratchSlice(buffer.bytes);
  const auto identity = [](llvm_codegen::ElementalEmitter&,
                           std::vector<llvm_codegen::ElementGenerator> loads) {
    return std::vector<llvm_codegen::ElementGenerator>{loads.at(0)};
  };
  if (into_module) {
    AddLoopKernel(inst, name + ".layout", {row_major}, {slot}, {physical}, {buffer}, identity);
  } else {
    AddLoopKernel(inst, name + ".layout", {physical}, {buffer}, {row_major}, {slot}, identity);
  }
  return slot;
}

GpuCompileResult ArtifactBuilder::Build() {
  const hlo::Computation* entry = module_.entry();
  if (entry == nullptr) throw hlo::Error("gpu backend: the module has no entry computation");
  // Complex, the 8-/4-bit floats and s4/u4 have no kernels yet: one error naming the first
  // instruction that computes on one, before any code is generated.
  for (const auto& computation : module_.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (compiler::GeneratesNoCode(inst->opcode())) continue;
      if (std::optional<hlo::PrimitiveType> type =
              compiler::HostElementType(*inst, targets::GpuDescription())) {
        std::string why = "element type ";
        why += hlo::PrimitiveTypeName(*type);
        why += " has no GPU code generator form";
        Unsupported(*inst, why);
      }
    }
  }
  std::unique_ptr<llvm::TargetMachine> machine = MakeNvptxTargetMachine(options_.arch);
  llvm_module_.setTargetTriple(kNvptxTriple);
  llvm_module_.setDataLayout(machine->createDataLayout());
  const std::vector<const Instruction*> schedule = LayOut(*entry);
  steps_ = &result_.artifact.manifest.steps;

  gpu::Manifest& manifest = result_.artifact.manifest;
  manifest.producer = "retarget gpu codegen";
  manifest.module_name = module_.name();
  manifest.target_arch = options_.arch;
  manifest.grid = {grid_.replicas, grid_.partitions};
  for (int64_t p = 0; p < entry->parameter_count(); ++p) {
    const Instruction* parameter = entry->parameter(p);
    if (parameter == nullptr) throw hlo::Error(entry->location(), "gpu backend: parameter gap");
    std::vector<hlo::Shape> leaves;
    CollectLeafShapes(parameter->shape(), leaves);
    const auto& slices = Slices(*parameter);
    for (size_t i = 0; i < leaves.size(); ++i) {
      // Appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "literal" + std::string&&.
      std::string name = "arg";
      name += std::to_string(p);
      if (parameter->shape().IsTuple()) name += '.' + std::to_string(i);
      gpu::Slice slot = slices.at(i);
      if (!leaves[i].HasDefaultLayout()) slot = RelayOut(*parameter, name, leaves[i], slot, true);
      manifest.parameters.push_back(
          {name, ToDType(*parameter, leaves[i].type), leaves[i].dims, slot});
    }
  }
  for (const Instruction* inst : schedule) Lower(*inst);
  {
    std::vector<hlo::Shape> leaves;
    CollectLeafShapes(entry->root()->shape(), leaves);
    const auto& slices = Slices(*entry->root());
    for (size_t i = 0; i < leaves.size(); ++i) {
      const std::string name = "out" + std::to_string(i);
      gpu::Slice slot = slices.at(i);
      if (!leaves[i].HasDefaultLayout())
        slot = RelayOut(*entry->root(), name, leaves[i], slot, false);
      manifest.results.push_back(
          {name, ToDType(*entry->root(), leaves[i].type), leaves[i].dims, slot});
    }
  }
  manifest.arena_bytes = std::max<uint64_t>(arena_top_, kSliceAlignment);
  bool any_matmul = false;
  gpu::ForEachStep(manifest, [&any_matmul](const gpu::Step& step) {
    any_matmul = any_matmul || std::holds_alternative<gpu::MatmulCall>(step.call);
  });
  if (any_matmul) manifest.workspace_bytes = kCublasLtWorkspace;

  if (!result_.kernels.empty()) {
    result_.llvm_ir = ModuleText(llvm_module_);
    OptimizeNvptxModule(llvm_module_, *machine);
    result_.optimized_ir = ModuleText(llvm_module_);
    result_.ptx = EmitPtx(llvm_module_, *machine);
    gpu::PtxModule ptx_module{kPtxModule, std::string("ptx.") + kPtxModule, "", ""};
    result_.artifact.sections[ptx_module.ptx_section] = result_.ptx;
    if (std::optional<std::string> ptxas = options_.assemble ? FindPtxas() : std::nullopt) {
      PtxasResult assembled = RunPtxas(*ptxas, result_.ptx, options_.arch);
      result_.ptxas_log = assembled.log;
      ptx_module.cubin_section = std::string("cubin.") + kPtxModule;
      ptx_module.cubin_arch = options_.arch;
      result_.artifact.sections[ptx_module.cubin_section] = assembled.cubin;
      for (KernelRecord& record : result_.kernels) {
        auto it = assembled.kernels.find(record.entry);
        if (it == assembled.kernels.end()) continue;
        record.assembled = true;
        record.registers = it->second.registers;
        record.shared_bytes = it->second.shared_bytes;
        record.stack_bytes = it->second.stack_bytes;
        record.spill_store_bytes = it->second.spill_store_bytes;
        record.spill_load_bytes = it->second.spill_load_bytes;
      }
    }
    manifest.modules.push_back(ptx_module);
  }
  try {
    gpu::ValidateArtifact(result_.artifact);
  } catch (const std::exception& error) {
    throw hlo::Error("gpu backend produced an invalid artifact: " + std::string(error.what()));
  }
  return std::move(result_);
}

}  // namespace internal

GpuCompileResult CompileOptimizedModule(const hlo::Module& module,
                                        const GpuCompileOptions& options) {
  return internal::ArtifactBuilder(module, options).Build();
}

GpuCompileResult CompileModule(hlo::Module& module, const GpuCompileOptions& options) {
  compiler::MakeTargetPipeline(targets::GpuDescription()).Run(module);
  return CompileOptimizedModule(module, options);
}

}  // namespace gpu::codegen

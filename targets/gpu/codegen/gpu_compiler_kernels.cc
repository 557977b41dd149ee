// Generated-kernel steps of the GPU code generator (see gpu_compiler.h): loop kernels, row and
// column reduction kernels, tiled transposes. The kernels of single ops (gather, topk, scatter,
// sort, ...) are built in gpu_compiler_ops.cc. Library steps (cuBLASLt, cuDNN) are built in
// gpu_compiler_library.cc.
#include <optional>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/gpu_compiler_internal.h"
#include "targets/gpu/codegen/column_kernel.h"
#include "targets/gpu/codegen/row_kernel.h"
#include "targets/gpu/codegen/transpose_kernel.h"

namespace gpu::codegen::internal {

namespace {

std::vector<hlo::Shape> OperandShapes(const Instruction& fusion) {
  std::vector<hlo::Shape> shapes;
  for (const Instruction* operand : fusion.operands()) shapes.push_back(operand->shape());
  return shapes;
}

}  // namespace

void ArtifactBuilder::AddKernel(const Instruction& inst, std::vector<const Instruction*> operands,
                                std::vector<gpu::Slice> operand_slices,
                                const GeneratorFactory& factory, bool record_owner) {
  std::vector<hlo::Shape> operand_shapes, output_shapes;
  for (const Instruction* operand : operands) {
    if (!operand->shape().IsArray()) Unsupported(inst, "a tuple operand of a kernel");
    operand_shapes.push_back(operand->shape());
  }
  CollectLeafShapes(inst.shape(), output_shapes);
  if (record_owner) AddOwner(inst, "generated-kernel");
  bool same_dims = true;
  for (const hlo::Shape& output : output_shapes)
    same_dims = same_dims && output.dims == output_shapes[0].dims;
  if (same_dims) {
    AddLoopKernel(inst, inst.name(), std::move(operand_shapes), std::move(operand_slices),
                  std::move(output_shapes), Slices(inst), factory);
    return;
  }
  // Outputs of different shapes (a multi-output fusion of a reduction and an elementwise
  // value) cannot share one index space: one kernel per output, each computing what its output
  // needs. Work shared by the outputs is done once per kernel.
  const std::vector<gpu::Slice> output_slices = Slices(inst);
  for (size_t o = 0; o < output_shapes.size(); ++o) {
    AddLoopKernel(inst, inst.name() + ".out" + std::to_string(o), operand_shapes, operand_slices,
                  {output_shapes[o]}, {output_slices.at(o)},
                  [&factory, o](llvm_codegen::ElementalEmitter& emitter,
                                std::vector<llvm_codegen::ElementGenerator> loads) {
                    return std::vector<llvm_codegen::ElementGenerator>{
                        factory(emitter, std::move(loads)).at(o)};
                  });
  }
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
  steps_->push_back({step_name, std::move(launch)});
  KernelRecord record;
  record.instruction = inst.name();
  record.entry = spec.entry;
  record.kind = "loop";
  record.elements_per_thread = plan.elements_per_thread;
  record.grid = dims.grid;
  record.block = dims.block;
  result_.kernels.push_back(record);
}

// Fusions around row reductions: one warp or one block per row (row_kernel.h).
bool ArtifactBuilder::TryRowKernel(const Instruction& fusion) {
  const hlo::Computation& fused = *fusion.called_computations().at(0);
  std::optional<RowKernelPlan> plan = PlanRowKernel(fused);
  if (!plan || !fusion.shape().IsArray()) return false;
  ChooseRowSchedule(*plan, options_.device);
  const std::string entry = KernelSymbol(llvm_module_, fusion.name());
  try {
    EmitRowKernel(llvm_module_, entry, fused, *plan, OperandShapes(fusion));
  } catch (const hlo::Error& error) {
    throw hlo::Error(fusion.location(), "gpu backend cannot compile instruction " +
                                            Describe(fusion) + ": " + error.message());
  }
  AddOwner(fusion, "generated-kernel");
  if (plan->rows == 0) return true;
  AddFusionLaunch(fusion, entry, ChooseRowKernelLaunch(*plan, options_.device),
                  plan->block_per_row ? "row-reduction-block" : "row-reduction");
  return true;
}

bool ArtifactBuilder::TryColumnKernel(const Instruction& fusion) {
  const hlo::Computation& fused = *fusion.called_computations().at(0);
  std::optional<ColumnKernelPlan> plan = PlanColumnKernel(fused);
  if (!plan || !fusion.shape().IsArray()) return false;
  const std::string entry = KernelSymbol(llvm_module_, fusion.name());
  try {
    EmitColumnKernel(llvm_module_, entry, fused, *plan, OperandShapes(fusion));
  } catch (const hlo::Error& error) {
    throw hlo::Error(fusion.location(), "gpu backend cannot compile instruction " +
                                            Describe(fusion) + ": " + error.message());
  }
  AddOwner(fusion, "generated-kernel");
  if (plan->outer == 0 || plan->columns == 0) return true;  // no output element
  AddFusionLaunch(fusion, entry, ChooseColumnLaunchDimensions(*plan, options_.device),
                  "column-reduction");
  return true;
}

bool ArtifactBuilder::TryTransposeKernel(const Instruction& inst) {
  const hlo::Computation* fused =
      inst.opcode() == hlo::Opcode::kFusion ? inst.called_computations().at(0) : nullptr;
  const Instruction* transpose = fused != nullptr ? fused->root() : &inst;
  // A row-major reshape or bitcast after the transpose moves no bytes: tile the transpose.
  if ((transpose->opcode() == hlo::Opcode::kReshape ||
       transpose->opcode() == hlo::Opcode::kBitcast) &&
      transpose->shape().IsArray() && transpose->shape().HasDefaultLayout() &&
      transpose->operand(0)->opcode() == hlo::Opcode::kTranspose &&
      transpose->operand(0)->shape().type == transpose->shape().type &&
      transpose->operand(0)->shape().ElementCount() == transpose->shape().ElementCount())
    transpose = transpose->operand(0);
  if (transpose->opcode() != hlo::Opcode::kTranspose) return false;
  std::optional<TransposeKernelPlan> plan = PlanTransposeKernel(*transpose);
  if (!plan || !inst.shape().IsArray()) return false;
  const std::string entry = KernelSymbol(llvm_module_, inst.name());
  try {
    EmitTransposeKernel(llvm_module_, entry, *transpose, fused, *plan, OperandShapes(inst));
  } catch (const hlo::Error& error) {
    throw hlo::Error(inst.location(), "gpu backend cannot compile instruction " +
                                          Describe(inst) + ": " + error.message());
  }
  AddOwner(inst, "generated-kernel");
  if (plan->Tiles() == 0) return true;
  AddFusionLaunch(inst, entry, ChooseTransposeLaunchDimensions(*plan, options_.device),
                  "transpose-tiled");
  return true;
}

void ArtifactBuilder::AddFusionLaunch(const Instruction& fusion, const std::string& entry,
                                      const LaunchDimensions& dims, const std::string& kind) {
  gpu::KernelLaunch launch;
  for (const Instruction* operand : fusion.operands())
    launch.args.push_back({gpu::KernelArg::Kind::kBuffer, ArraySlice(*operand)});
  launch.args.push_back({gpu::KernelArg::Kind::kBuffer, ArraySlice(fusion)});
  launch.module = kPtxModule;
  launch.entry = entry;
  launch.grid = {dims.grid, 1, 1};
  launch.block = {dims.block, 1, 1};
  steps_->push_back({fusion.name(), std::move(launch)});
  KernelRecord record;
  record.instruction = fusion.name();
  record.entry = entry;
  record.kind = kind;
  record.grid = dims.grid;
  record.block = dims.block;
  result_.kernels.push_back(record);
}

}  // namespace gpu::codegen::internal

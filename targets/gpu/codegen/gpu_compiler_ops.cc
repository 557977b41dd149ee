// Kernels for single HLO ops the fusion kernels do not cover (see gpu_compiler.h): gather,
// reduce-window and dynamic-update-slice as loop kernels over targets/llvm's generators, an
// in-place dynamic-update-slice, topk, scatter and sort as kernels of their own
// (<op>_kernel.h). Scatter and sort work in their results, which copy steps seed first.
#include <functional>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/gpu_compiler_internal.h"
#include "targets/gpu/codegen/row_kernel.h"
#include "targets/gpu/codegen/scatter_kernel.h"
#include "targets/gpu/codegen/sort_kernel.h"
#include "targets/gpu/codegen/topk_kernel.h"
#include "targets/gpu/codegen/update_slice_kernel.h"

namespace gpu::codegen::internal {

// Emits a kernel of its own for `inst` (errors name the instruction), records its owner, and
// launches it over `args` unless it has no work.
void ArtifactBuilder::AddOpKernel(const Instruction& inst, const std::string& kind,
                                  const std::function<void(const std::string& entry)>& emit,
                                  const std::vector<gpu::Slice>& args,
                                  std::optional<LaunchDimensions> dims) {
  const std::string entry = KernelSymbol(llvm_module_, inst.name());
  try {
    emit(entry);
  } catch (const hlo::Error& error) {
    throw hlo::Error(inst.location(), "gpu backend cannot compile instruction " + Describe(inst) +
                                          ": " + error.message());
  }
  AddOwner(inst, "generated-kernel");
  if (!dims) return;  // nothing to compute: no launch
  gpu::KernelLaunch launch;
  launch.module = kPtxModule;
  launch.entry = entry;
  for (const gpu::Slice& slice : args) launch.args.push_back({gpu::KernelArg::Kind::kBuffer, slice});
  launch.grid = {dims->grid, 1, 1};
  launch.block = {dims->block, 1, 1};
  steps_->push_back({inst.name(), std::move(launch)});
  KernelRecord record;
  record.instruction = inst.name();
  record.entry = entry;
  record.kind = kind;
  record.grid = dims->grid;
  record.block = dims->block;
  result_.kernels.push_back(record);
}

// A copy step giving an in-place kernel's result its operand's bytes (none when they share).
void ArtifactBuilder::SeedResult(const std::string& step_name, gpu::Slice operand,
                                 gpu::Slice result) {
  if (operand.bytes > 0 && !(operand == result))
    steps_->push_back({step_name, gpu::DeviceCopy{operand, result}});
}

void ArtifactBuilder::LowerIndexedOp(const Instruction& inst) {
  if (!inst.shape().IsArray()) Unsupported(inst, "a tuple-shaped (variadic) " +
                                                     std::string(hlo::OpcodeName(inst.opcode())));
  std::vector<const Instruction*> operands(inst.operands().begin(), inst.operands().end());
  std::vector<gpu::Slice> slices;
  for (const Instruction* operand : operands) slices.push_back(ArraySlice(*operand));
  if (inst.opcode() == Opcode::kDynamicUpdateSlice && operands.size() >= 3 &&
      slices[0] == ArraySlice(inst)) {
    // In place: only the update's elements are written (update_slice_kernel.h).
    const int64_t elements = inst.operand(1)->shape().ElementCount();
    std::vector<gpu::Slice> args(slices.begin() + 1, slices.end());  // the update, the starts
    args.push_back(ArraySlice(inst));
    return AddOpKernel(
        inst, "update-slice-in-place",
        [&](const std::string& entry) { EmitInPlaceUpdateSliceKernel(llvm_module_, entry, inst); },
        args,
        elements == 0 ? std::nullopt
                      : std::optional(ChooseLaunchDimensions(elements, options_.device)));
  }
  AddKernel(inst, operands, slices,
            [&inst](llvm_codegen::ElementalEmitter& emitter,
                    std::vector<llvm_codegen::ElementGenerator> loads) {
              if (loads.size() < 2) Unsupported(inst, "expected at least two operands");
              llvm_codegen::ElementGenerator generator;
              switch (inst.opcode()) {
                case Opcode::kGather:
                  generator = emitter.MakeGatherGenerator(inst, loads[0], loads[1]);
                  break;
                case Opcode::kReduceWindow:
                  generator = emitter.MakeReduceWindowGenerator(inst, loads[0], loads[1]);
                  break;
                case Opcode::kDynamicUpdateSlice:
                  generator = emitter.MakeDynamicUpdateSliceGenerator(
                      inst, loads[0], loads[1], {loads.begin() + 2, loads.end()});
                  break;
                default:
                  Unsupported(inst, "not an indexed op");
              }
              return std::vector<llvm_codegen::ElementGenerator>{generator};
            });
}

void ArtifactBuilder::LowerTopK(const Instruction& topk) {
  auto planned = PlanTopK(topk);
  if (auto* reason = std::get_if<std::string>(&planned)) Unsupported(topk, *reason);
  const TopKPlan plan = std::get<TopKPlan>(planned);
  const auto& outputs = Slices(topk);
  AddOpKernel(
      topk, "topk", [&](const std::string& entry) { EmitTopKKernel(llvm_module_, entry, plan); },
      {ArraySlice(*topk.operand(0)), outputs.at(0), outputs.at(1)},
      plan.rows == 0 || plan.k == 0
          ? std::nullopt
          : std::optional(ChooseRowLaunchDimensions(plan.rows, options_.device)));
}

void ArtifactBuilder::LowerScatter(const Instruction& scatter) {
  auto planned = PlanScatter(scatter);
  if (auto* reason = std::get_if<std::string>(&planned)) Unsupported(scatter, *reason);
  const ScatterPlan plan = std::get<ScatterPlan>(planned);
  const gpu::Slice output = ArraySlice(scatter);
  SeedResult(scatter.name() + ".copy", ArraySlice(*scatter.operand(0)), output);
  AddOpKernel(
      scatter, plan.serial ? "scatter-serial" : "scatter",
      [&](const std::string& entry) { EmitScatterKernel(llvm_module_, entry, scatter, plan); },
      {ArraySlice(*scatter.operand(1)), ArraySlice(*scatter.operand(2)), output},
      plan.positions == 0 || plan.window_elements == 0
          ? std::nullopt
          : std::optional(
                ChooseLaunchDimensions(plan.serial ? 1 : plan.window_elements, options_.device)));
}

void ArtifactBuilder::LowerSort(const Instruction& sort) {
  auto planned = PlanSort(sort);
  if (auto* reason = std::get_if<std::string>(&planned)) Unsupported(sort, *reason);
  const SortPlan plan = std::get<SortPlan>(planned);
  const std::vector<gpu::Slice> outputs = Slices(sort);
  if (outputs.size() != static_cast<size_t>(sort.operand_count()))
    Unsupported(sort, "expected one result per operand");
  for (size_t i = 0; i < outputs.size(); ++i)
    SeedResult(sort.name() + ".copy" + std::to_string(i),
               ArraySlice(*sort.operand(static_cast<int64_t>(i))), outputs[i]);
  AddOpKernel(
      sort, "sort", [&](const std::string& entry) { EmitSortKernel(llvm_module_, entry, sort, plan); },
      outputs,
      plan.rows == 0 || plan.length < 2
          ? std::nullopt
          : std::optional(ChooseSortLaunchDimensions(plan, options_.device)));
}

}  // namespace gpu::codegen::internal

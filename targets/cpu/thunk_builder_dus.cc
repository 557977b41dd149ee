// dynamic-update-slice as a generated kernel (ThunkBuilder::TryDynamicUpdateSlice): the result
// starts as a copy of the target (none when it takes over the target's buffer, its last reader),
// then the update is stored at the start indices, each clamped to [0, dim - update dim] as XLA
// defines it. A scan that writes one row of its output per trip then costs a few stores inside
// the compiled loop (compiled_loop.h) instead of a call into the runtime.
// Any layouts (the kernel indexes through them) as long as the result's is the target's, which
// the copy needs; false otherwise (the caller falls back to the evaluator).
#include <llvm/IR/IRBuilder.h>

#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/thunk_builder.h"
#include "targets/cpu/thunk_builder_internal.h"
#include "targets/llvm/elemental_util.h"

namespace cpu {

using hlo::Instruction;
using llvm_codegen::IrIndex;

bool ThunkBuilder::TryDynamicUpdateSlice(const Instruction& inst, Scope& scope,
                                         ValueLayout& output) {
  if (inst.operand_count() < 2 || !inst.shape().IsArray()) return false;
  std::vector<hlo::Shape> inputs;
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) return false;
    inputs.push_back(operand->shape());
  }
  const hlo::Shape& target = inputs[0];
  const hlo::Shape& update = inputs[1];
  const auto rank = static_cast<size_t>(target.rank());
  if (inst.shape().EffectiveMinorToMajor() != target.EffectiveMinorToMajor() ||
      update.rank() != target.rank() ||
      inputs.size() != 2 + rank || update.type != target.type)
    return false;
  for (size_t d = 0; d < rank; ++d)
    if (update.dims[d] > target.dims[d]) return false;

  const std::string symbol = KernelSymbol(module_, inst.name());
  llvm::IRBuilder<> b(module_.getContext());
  KernelPrologue kernel = BeginKernelFunction(b, module_, symbol, inputs, {inst.shape()}, 2);
  EmitCopyUnlessInPlace(b, kernel.operands[0], kernel.outputs[0], target);
  IrIndex start(rank, nullptr);
  for (size_t d = 0; d < rank; ++d) {
    llvm::Value* raw = kernel.operands[2 + d].EmitLoad(b, IrIndex{});
    start[d] = llvm_codegen::detail::ClampStartIndex(b, raw, inputs[2 + d].type,
                                                     target.dims[d] - update.dims[d]);
  }
  IrIndex update_index(rank, nullptr);
  std::function<void(size_t)> nest = [&](size_t dim) {
    if (dim == rank) {
      IrIndex at(rank, nullptr);
      for (size_t d = 0; d < rank; ++d) at[d] = b.CreateAdd(start[d], update_index[d]);
      kernel.outputs[0].EmitStore(b, at, kernel.operands[1].EmitLoad(b, update_index));
      return;
    }
    std::string loop_name = "u";  // appended: GCC 12 warns falsely on "u" + std::to_string
    loop_name += std::to_string(dim);
    EmitForLoop(b, b.getInt64(0), b.getInt64(update.dims[dim]), loop_name,
                [&](llvm::Value* i) {
                  update_index[dim] = i;
                  nest(dim + 1);
                });
  };
  nest(0);
  b.CreateRetVoid();

  // In place when the target dies here and no other operand reads its buffer.
  const int64_t target_buffer = scope[inst.operand(0)].buffer;
  int64_t readers = 0;
  for (const Instruction* other : inst.operands()) readers += scope[other].buffer == target_buffer;
  if (readers == 1 && scope.TakeOver(target_buffer, output.buffer)) {
    output.buffer = target_buffer;
    result_.counters["dynamic-update-slice.in-place"] += 1;
  }
  scope.values[&inst] = output;
  std::vector<int64_t> buffers;
  for (const Instruction* operand : inst.operands()) buffers.push_back(scope[operand].buffer);
  buffers.push_back(output.buffer);
  AddKernelThunk(inst.name(), scope, symbol, std::move(buffers), hlo::Shape::Scalar(target.type));
  result_.counters["thunks.dynamic-update-slice"] += 1;
  return true;
}

}  // namespace cpu

// In-place dynamic-update-slice over the update's elements (see update_slice_kernel.h).
#include "targets/gpu/codegen/update_slice_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/kernel_ir.h"
#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"
#include "targets/llvm/loop_emitter.h"

namespace gpu::codegen {

using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

void EmitInPlaceUpdateSliceKernel(llvm::Module& module, const std::string& entry,
                                  const hlo::Instruction& dus) {
  const hlo::Shape& operand = dus.operand(0)->shape();
  const hlo::Shape& update_shape = dus.operand(1)->shape();
  const size_t start_count = static_cast<size_t>(dus.operand_count() - 2);
  const bool vector_form = start_count == 1 && operand.rank() != 1;
  if (update_shape.rank() != operand.rank() ||
      (!vector_form && static_cast<int64_t>(start_count) != operand.rank()))
    throw hlo::Error(dus.location(), "dynamic-update-slice needs one start index per dimension");
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  std::vector<llvm::Value*> params;
  BeginKernel(b, module, entry, 2 + start_count, params);
  IrArray update(params[0], update_shape), output(params.back(), dus.shape());
  update.set_read_only(true);

  // Clamped starts, computed once per thread.
  const hlo::PrimitiveType start_type = dus.operand(2)->shape().type;
  IrIndex start(static_cast<size_t>(operand.rank()));
  for (size_t d = 0; d < start.size(); ++d) {
    IrArray source(params[1 + (vector_form ? 0 : d)], dus.operand(static_cast<int64_t>(2 + (vector_form ? 0 : d)))->shape());
    source.set_read_only(true);
    llvm::Value* raw =
        source.EmitLoad(b, vector_form ? IrIndex{b.getInt64(d)} : IrIndex{});
    start[d] = llvm_codegen::detail::ClampStartIndex(b, raw, start_type,
                                                     operand.dims[d] - update_shape.dims[d]);
  }

  const auto [thread, block, block_size, grid_size] = ReadLaunchIds(b);
  llvm_codegen::EmitCountedLoop(
      b, b.CreateAdd(b.CreateMul(block, block_size), thread),
      b.getInt64(static_cast<uint64_t>(update_shape.ElementCount())),
      b.CreateMul(block_size, grid_size), "element", [&](llvm::Value* linear) {
        const IrIndex index = update.DelinearizeIndex(b, linear);
        IrIndex target(index.size());
        for (size_t d = 0; d < index.size(); ++d)
          target[d] = b.CreateAdd(start[d], index[d], "", true, true);
        output.EmitStore(b, target, update.EmitLoad(b, index));
      });
  b.CreateRetVoid();
}

}  // namespace gpu::codegen

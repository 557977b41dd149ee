// The sort kernel: odd-even transposition sort, one block per row (see sort_kernel.h).
#include "targets/gpu/codegen/sort_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/kernel_ir.h"
#include "targets/llvm/loop_emitter.h"

namespace gpu::codegen {

using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

std::variant<SortPlan, std::string> PlanSort(const hlo::Instruction& sort) {
  if (sort.operand_count() < 1 || sort.called_computations().size() != 1)
    return std::string("expected operands and one comparator");
  const hlo::Shape& first = sort.operand(0)->shape();
  for (const hlo::Instruction* operand : sort.operands())
    if (!operand->shape().IsArray() || operand->shape().dims != first.dims)
      return std::string("operands of different dimensions");
  SortPlan plan;
  plan.dimension = sort.attr<hlo::SortAttrs>().dimension;
  if (first.rank() == 0) {
    plan.length = 1;
    plan.rows = 1;
    plan.dimension = 0;
    return plan;
  }
  if (plan.dimension < 0 || plan.dimension >= first.rank())
    return std::string("sort dimension out of range");
  plan.length = first.dims[static_cast<size_t>(plan.dimension)];
  plan.rows = plan.length == 0 ? 0 : first.ElementCount() / plan.length;
  return plan;
}

LaunchDimensions ChooseSortLaunchDimensions(const SortPlan& plan, const DeviceLimits& device) {
  LaunchDimensions dims;
  dims.block = static_cast<uint32_t>(device.threads_per_block);
  const int64_t wave =
      int64_t{device.sm_count} * (device.max_threads_per_sm / device.threads_per_block);
  dims.grid = static_cast<uint32_t>(std::clamp<int64_t>(plan.rows, 1, wave));
  return dims;
}

void EmitSortKernel(llvm::Module& module, const std::string& entry, const hlo::Instruction& sort,
                    const SortPlan& plan) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  const size_t count = static_cast<size_t>(sort.operand_count());
  std::vector<llvm::Value*> params;
  llvm::Function* function = BeginKernel(b, module, entry, count, params);
  std::vector<IrArray> outputs;
  for (size_t i = 0; i < count; ++i) {
    const hlo::Shape& shape = sort.shape().IsTuple() ? sort.shape().tuple_shapes.at(i) : sort.shape();
    outputs.emplace_back(params[i], shape);
  }
  const hlo::Shape& shape = outputs[0].shape();
  // Sizes of the row dims (all but the sorted one), row-major.
  std::vector<size_t> row_dims;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (d != plan.dimension) row_dims.push_back(static_cast<size_t>(d));
  GpuElementalEmitter emitter(b, module);
  llvm::Function* barrier = llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::nvvm_barrier0);

  const auto [thread, block, block_size, grid_size] = ReadLaunchIds(b);
  llvm::Value* length = b.getInt64(static_cast<uint64_t>(plan.length));
  // Pairs per phase: (length) / 2 rounded up covers both parities.
  llvm::Value* pairs = b.getInt64(static_cast<uint64_t>((plan.length + 1) / 2));

  llvm_codegen::EmitCountedLoop(
      b, block, b.getInt64(static_cast<uint64_t>(plan.rows)), grid_size, "row",
      [&](llvm::Value* row) {
        IrIndex base(static_cast<size_t>(shape.rank()));
        llvm::Value* rest = row;
        for (size_t k = row_dims.size(); k-- > 0;) {
          llvm::Value* size = b.getInt64(static_cast<uint64_t>(shape.dims[row_dims[k]]));
          base[row_dims[k]] = b.CreateURem(rest, size);
          rest = b.CreateUDiv(rest, size);
        }
        llvm_codegen::EmitCountedLoop(b, b.getInt64(0), length, b.getInt64(1), "phase",
                                      [&](llvm::Value* phase) {
          llvm::Value* parity = b.CreateAnd(phase, b.getInt64(1));
          llvm_codegen::EmitCountedLoop(b, thread, pairs, block_size, "pair", [&](llvm::Value* t) {
            llvm::Value* i = b.CreateAdd(b.CreateShl(t, 1), parity, "", true, true);
            llvm::Value* next = b.CreateAdd(i, b.getInt64(1), "", true, true);
            auto* compare = llvm::BasicBlock::Create(context, "pair.compare", function);
            auto* swap = llvm::BasicBlock::Create(context, "pair.swap", function);
            auto* done = llvm::BasicBlock::Create(context, "pair.done", function);
            b.CreateCondBr(b.CreateICmpSLT(next, length), compare, done);
            b.SetInsertPoint(compare);
            IrIndex at_i = base, at_next = base;
            if (shape.rank() > 0) {
              at_i[static_cast<size_t>(plan.dimension)] = i;
              at_next[static_cast<size_t>(plan.dimension)] = next;
            }
            std::vector<llvm::Value*> left, right, arguments;
            for (const IrArray& output : outputs) {
              left.push_back(output.EmitLoad(b, at_i));
              right.push_back(output.EmitLoad(b, at_next));
              arguments.push_back(right.back());  // lhs: element i+1
              arguments.push_back(left.back());   // rhs: element i
            }
            llvm::Value* before =
                emitter.EmitScalarComputation(*sort.called_computations()[0], arguments).at(0);
            if (!before->getType()->isIntegerTy(1))
              throw hlo::Error(sort.location(), "sort comparator must return pred");
            b.CreateCondBr(before, swap, done);
            b.SetInsertPoint(swap);
            for (size_t k = 0; k < outputs.size(); ++k) {
              outputs[k].EmitStore(b, at_i, right[k]);
              outputs[k].EmitStore(b, at_next, left[k]);
            }
            b.CreateBr(done);
            b.SetInsertPoint(done);
          });
          b.CreateCall(barrier);  // every pair of this phase is done before the next reads
        });
      });
  b.CreateRetVoid();
}

}  // namespace gpu::codegen

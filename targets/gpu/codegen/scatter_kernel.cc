// The scatter kernel: threads over window offsets, updates applied in order (scatter_kernel.h).
#include "targets/gpu/codegen/scatter_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

#include "targets/gpu/codegen/kernel_ir.h"
#include "targets/llvm/loop_emitter.h"

namespace gpu::codegen {

using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The row-major multi-index of `linear` over `sizes` (an empty list: a single element).
IrIndex Delinearize(llvm::IRBuilder<>& b, llvm::Value* linear, const std::vector<int64_t>& sizes) {
  IrIndex index(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    llvm::Value* size = b.getInt64(static_cast<uint64_t>(sizes[i]));
    index[i] = b.CreateURem(linear, size);
    linear = b.CreateUDiv(linear, size);
  }
  return index;
}

}  // namespace

std::variant<ScatterPlan, std::string> PlanScatter(const hlo::Instruction& scatter) {
  if (scatter.operand_count() != 3 || !scatter.shape().IsArray())
    return std::string("variadic scatter (several operands) is not compiled yet");
  if (scatter.called_computations().size() != 1)
    return std::string("expected one update computation");
  const auto& d = scatter.attr<hlo::ScatterAttrs>().dnums;
  const hlo::Shape& operand = scatter.operand(0)->shape();
  const hlo::Shape& indices = scatter.operand(1)->shape();
  const hlo::Shape& updates = scatter.operand(2)->shape();
  if (d.input_batching_dims.size() != d.scatter_indices_batching_dims.size())
    return std::string("input_batching_dims and scatter_indices_batching_dims differ in length");
  for (size_t i = 0; i < d.input_batching_dims.size(); ++i) {
    if (d.input_batching_dims[i] < 0 || d.input_batching_dims[i] >= operand.rank() ||
        d.scatter_indices_batching_dims[i] < 0 ||
        d.scatter_indices_batching_dims[i] >= indices.rank() ||
        d.scatter_indices_batching_dims[i] == d.index_vector_dim)
      return std::string("a batching dimension is out of range");
  }
  if (!hlo::IsInteger(indices.type)) return std::string("start indices are not integers");
  const int64_t vector_size =
      d.index_vector_dim == indices.rank() ? 1 : indices.dims.at(static_cast<size_t>(d.index_vector_dim));
  if (static_cast<int64_t>(d.scatter_dims_to_operand_dims.size()) != vector_size)
    return std::string("scatter_dims_to_operand_dims does not match the index vector");
  ScatterPlan plan;
  plan.positions = 1;
  plan.window_elements = 1;
  for (int64_t dim = 0; dim < updates.rank(); ++dim) {
    const int64_t size = updates.dims[static_cast<size_t>(dim)];
    if (Contains(d.update_window_dims, dim)) {
      plan.window_elements *= size;
    } else {
      plan.update_scatter_dims.push_back(dim);
      plan.positions *= size;
    }
  }
  plan.window_extent.assign(static_cast<size_t>(operand.rank()), 1);
  size_t next_window = 0;
  for (int64_t dim = 0; dim < operand.rank(); ++dim) {
    if (Contains(d.inserted_window_dims, dim) || Contains(d.input_batching_dims, dim)) continue;
    if (next_window >= d.update_window_dims.size())
      return std::string("update_window_dims do not cover the operand's window");
    plan.window_operand_dim.push_back(dim);
    plan.window_extent[static_cast<size_t>(dim)] =
        updates.dims.at(static_cast<size_t>(d.update_window_dims[next_window++]));
  }
  if (next_window != d.update_window_dims.size())
    return std::string("update_window_dims do not match the operand's window");
  for (int64_t dim : d.scatter_dims_to_operand_dims) {
    if (dim < 0 || dim >= operand.rank()) return std::string("scatter_dims_to_operand_dims out of range");
    plan.serial = plan.serial || plan.window_extent[static_cast<size_t>(dim)] > 1;
  }
  return plan;
}

void EmitScatterKernel(llvm::Module& module, const std::string& entry,
                       const hlo::Instruction& scatter, const ScatterPlan& plan) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  std::vector<llvm::Value*> params;
  llvm::Function* function = BeginKernel(b, module, entry, 3, params);
  const auto& d = scatter.attr<hlo::ScatterAttrs>().dnums;
  const hlo::Shape& operand_shape = scatter.operand(0)->shape();
  const hlo::Shape& indices_shape = scatter.operand(1)->shape();
  const hlo::Shape& updates_shape = scatter.operand(2)->shape();
  IrArray indices(params[0], indices_shape), updates(params[1], updates_shape),
      output(params[2], scatter.shape());
  indices.set_read_only(true);
  updates.set_read_only(true);
  GpuElementalEmitter emitter(b, module);

  std::vector<int64_t> window_sizes, scatter_sizes;
  for (int64_t dim : d.update_window_dims)
    window_sizes.push_back(updates_shape.dims.at(static_cast<size_t>(dim)));
  for (int64_t dim : plan.update_scatter_dims)
    scatter_sizes.push_back(updates_shape.dims.at(static_cast<size_t>(dim)));

  const auto [thread, block, block_size, grid_size] = ReadLaunchIds(b);
  llvm::Value* global = b.CreateAdd(b.CreateMul(block, block_size), thread);
  llvm::Value* windows = b.getInt64(static_cast<uint64_t>(plan.window_elements));
  llvm::Value* positions = b.getInt64(static_cast<uint64_t>(plan.positions));
  // One update element: updates[s, w] combined into the output at start(s) + w.
  auto apply_update = [&](llvm::Value* w, llvm::Value* s) {
    const IrIndex offset = Delinearize(b, w, window_sizes);
    const IrIndex position = Delinearize(b, s, scatter_sizes);
    IrIndex start(static_cast<size_t>(operand_shape.rank()), b.getInt64(0));
    const bool signed_indices = hlo::IsSignedInteger(indices_shape.type);
    // The scatter position along each start-indices dim (index_vector_dim has none); an
    // operand batching dim starts at its indices batching dim's position.
    std::vector<llvm::Value*> position_of_indices_dim(static_cast<size_t>(indices_shape.rank()));
    {
      size_t next = 0;
      for (int64_t dim = 0; dim < indices_shape.rank(); ++dim)
        if (dim != d.index_vector_dim) position_of_indices_dim[dim] = position.at(next++);
    }
    for (size_t i = 0; i < d.input_batching_dims.size(); ++i) {
      start[static_cast<size_t>(d.input_batching_dims[i])] =
          position_of_indices_dim.at(static_cast<size_t>(d.scatter_indices_batching_dims[i]));
    }
    for (size_t k = 0; k < d.scatter_dims_to_operand_dims.size(); ++k) {
      IrIndex where;
      for (int64_t dim = 0; dim < indices_shape.rank(); ++dim)
        where.push_back(dim == d.index_vector_dim ? b.getInt64(k) : position_of_indices_dim[dim]);
      llvm::Value* raw = indices.EmitLoad(b, where);
      start[static_cast<size_t>(d.scatter_dims_to_operand_dims[k])] =
          signed_indices ? b.CreateSExtOrTrunc(raw, b.getInt64Ty())
                         : b.CreateZExtOrTrunc(raw, b.getInt64Ty());
    }
    // The whole window must fit, else the update slice is skipped (no clamping).
    llvm::Value* fits = b.getTrue();
    for (size_t dim = 0; dim < start.size(); ++dim) {
      const int64_t last_start = operand_shape.dims[dim] - plan.window_extent[dim];
      fits = b.CreateAnd(fits, b.CreateAnd(b.CreateICmpSGE(start[dim], b.getInt64(0)),
                                           b.CreateICmpSLE(start[dim], b.getInt64(static_cast<uint64_t>(last_start)))));
    }
    auto* apply = llvm::BasicBlock::Create(context, "scatter.apply", function);
    auto* after = llvm::BasicBlock::Create(context, "scatter.after", function);
    b.CreateCondBr(fits, apply, after);
    b.SetInsertPoint(apply);
    IrIndex target = start;
    for (size_t k = 0; k < plan.window_operand_dim.size(); ++k) {
      const auto dim = static_cast<size_t>(plan.window_operand_dim[k]);
      target[dim] = b.CreateAdd(start[dim], offset.at(k), "", true, true);
    }
    IrIndex update_index(static_cast<size_t>(updates_shape.rank()));
    for (size_t k = 0; k < d.update_window_dims.size(); ++k)
      update_index[static_cast<size_t>(d.update_window_dims[k])] = offset.at(k);
    for (size_t k = 0; k < plan.update_scatter_dims.size(); ++k)
      update_index[static_cast<size_t>(plan.update_scatter_dims[k])] = position.at(k);
    llvm::Value* arguments[] = {output.EmitLoad(b, target), updates.EmitLoad(b, update_index)};
    output.EmitStore(b, target,
                     emitter.EmitScalarComputation(*scatter.called_computations()[0], arguments).at(0));
    b.CreateBr(after);
    b.SetInsertPoint(after);
  };
  if (plan.serial) {
    // Thread 0 applies every update element in (s, w) order: the interpreter's row-major order
    // of the updates whenever their scatter dims come before their window dims (as in XLA's
    // canonical form), so overlapping windows keep the last update.
    llvm_codegen::EmitCountedLoop(
        b, b.CreateSelect(b.CreateICmpEQ(global, b.getInt64(0)), b.getInt64(0), positions),
        positions, b.getInt64(1), "position", [&](llvm::Value* s) {
          llvm_codegen::EmitCountedLoop(b, b.getInt64(0), windows, b.getInt64(1), "window",
                                        [&](llvm::Value* w) { apply_update(w, s); });
        });
  } else {
    // Each thread owns window offsets; per offset, the positions in order.
    llvm::Value* stride = b.CreateMul(block_size, grid_size);
    llvm_codegen::EmitCountedLoop(b, global, windows, stride, "window", [&](llvm::Value* w) {
      llvm_codegen::EmitCountedLoop(b, b.getInt64(0), positions, b.getInt64(1), "position",
                                    [&](llvm::Value* s) { apply_update(w, s); });
    });
  }
  b.CreateRetVoid();
}

}  // namespace gpu::codegen

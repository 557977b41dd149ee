// gather, reduce-window and dynamic-update-slice as element generators
// (ElementalEmitter::MakeGatherGenerator, MakeReduceWindowGenerator,
// MakeDynamicUpdateSliceGenerator): ops FusibleInEmitter() leaves to the backends, emitted
// elementally for a backend that runs them as loop kernels of their own (the GPU does; see
// docs/gpu-backend.md).
//
// Guarantees (the interpreter's semantics, hlo/evaluator_gather.cc, evaluator_window.cc):
//   - gather: start indices are clamped to [0, operand_dim - slice_size] per dimension
//     (detail::ClampStartIndex); no operand or index element outside its
//     array is read. An operand batching dim takes the batch index of its start_indices batching
//     dim (operand_batching_dims[i] <- start_indices_batching_dims[i]), clamped like the rest.
//   - reduce-window (one input): window taps are combined one at a time in row-major order of
//     the window, starting from the init value; taps in padding or in base-dilation holes are
//     skipped (they would combine the init value, the identity of every reducer XLA emits); the
//     accumulator has the op's type (bf16 rounds after every combination), as the interpreter.
//   - dynamic-update-slice: result[i] = update[i - start] inside the update's window, else
//     operand[i]; starts clamped to [0, operand_dim - update_dim] (ir.h). Each element is read
//     and written at its own index only, so the result may share the operand's buffer.
#include <algorithm>
#include <functional>
#include <string>

#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"

namespace llvm_codegen {

using hlo::Instruction;

namespace {
bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}
}  // namespace

ElementGenerator ElementalEmitter::MakeGatherGenerator(const Instruction& gather,
                                                       ElementGenerator operand,
                                                       ElementGenerator indices) {
  if (gather.opcode() != hlo::Opcode::kGather || gather.operand_count() != 2)
    detail::Fail(gather, "not a gather");
  const auto& attrs = gather.attr<hlo::GatherAttrs>();
  const auto& d = attrs.dnums;
  const hlo::Shape& operand_shape = gather.operand(0)->shape();
  const hlo::Shape& indices_shape = gather.operand(1)->shape();
  if (d.operand_batching_dims.size() != d.start_indices_batching_dims.size())
    detail::Fail(gather, "operand_batching_dims and start_indices_batching_dims differ in length");
  for (size_t i = 0; i < d.operand_batching_dims.size(); ++i) {
    if (d.operand_batching_dims[i] < 0 || d.operand_batching_dims[i] >= operand_shape.rank() ||
        d.start_indices_batching_dims[i] < 0 ||
        d.start_indices_batching_dims[i] >= indices_shape.rank() ||
        d.start_indices_batching_dims[i] == d.index_vector_dim)
      detail::Fail(gather, "a batching dim is out of range");
  }
  if (!hlo::IsInteger(indices_shape.type)) detail::Fail(gather, "start_indices are not integers");
  if (static_cast<int64_t>(attrs.slice_sizes.size()) != operand_shape.rank() ||
      static_cast<int64_t>(d.offset_dims.size() + d.collapsed_slice_dims.size() +
                           d.operand_batching_dims.size()) != operand_shape.rank())
    detail::Fail(gather, "slice_sizes / offset_dims / collapsed and batching dims do not cover "
                         "the operand");
  for (int64_t dim : d.start_index_map)
    if (dim < 0 || dim >= operand_shape.rank()) detail::Fail(gather, "start_index_map out of range");

  ElementGenerator generator = [this, &gather, operand, indices](const IrIndex& out) {
    const auto& attrs = gather.attr<hlo::GatherAttrs>();
    const auto& d = attrs.dnums;
    const hlo::Shape& operand_shape = gather.operand(0)->shape();
    const hlo::Shape& indices_shape = gather.operand(1)->shape();
    // The output dims that are not offset dims address start_indices (around index_vector_dim).
    std::vector<llvm::Value*> batch;
    for (size_t i = 0; i < out.size(); ++i)
      if (!Contains(d.offset_dims, static_cast<int64_t>(i))) batch.push_back(out[i]);
    IrIndex start(static_cast<size_t>(operand_shape.rank()), b_.getInt64(0));
    // The batch index of each start_indices dim (index_vector_dim has none).
    std::vector<llvm::Value*> batch_of_indices_dim(static_cast<size_t>(indices_shape.rank()));
    {
      size_t next_batch = 0;
      for (int64_t dim = 0; dim < indices_shape.rank(); ++dim)
        if (dim != d.index_vector_dim) batch_of_indices_dim[dim] = batch.at(next_batch++);
    }
    for (size_t i = 0; i < d.operand_batching_dims.size(); ++i) {
      const auto dim = static_cast<size_t>(d.operand_batching_dims[i]);
      const int64_t highest = operand_shape.dims[dim] - attrs.slice_sizes[dim];
      llvm::Value* value =
          batch_of_indices_dim.at(static_cast<size_t>(d.start_indices_batching_dims[i]));
      start[dim] = b_.CreateSelect(b_.CreateICmpSGT(value, detail::I64(b_, highest)),
                                   detail::I64(b_, highest), value);
    }
    for (size_t k = 0; k < d.start_index_map.size(); ++k) {
      IrIndex where;
      for (int64_t dim = 0; dim < indices_shape.rank(); ++dim)
        where.push_back(dim == d.index_vector_dim ? detail::I64(b_, static_cast<int64_t>(k))
                                                  : batch_of_indices_dim[dim]);
      llvm::Value* raw = indices(where);
      const auto dim = static_cast<size_t>(d.start_index_map[k]);
      start[dim] = detail::ClampStartIndex(b_, raw, indices_shape.type,
                                           operand_shape.dims[dim] - attrs.slice_sizes[dim]);
    }
    IrIndex source = start;
    size_t next_offset = 0;
    for (int64_t dim = 0; dim < operand_shape.rank(); ++dim) {
      if (Contains(d.collapsed_slice_dims, dim) || Contains(d.operand_batching_dims, dim)) continue;
      llvm::Value* offset = out.at(static_cast<size_t>(d.offset_dims.at(next_offset++)));
      source[static_cast<size_t>(dim)] =
          b_.CreateAdd(start[static_cast<size_t>(dim)], offset, "", true, true);
    }
    return operand(source);
  };
  return generator;
}

ElementGenerator ElementalEmitter::MakeReduceWindowGenerator(const Instruction& rw,
                                                             ElementGenerator input,
                                                             ElementGenerator init) {
  if (rw.opcode() != hlo::Opcode::kReduceWindow || rw.operand_count() != 2 ||
      !rw.shape().IsArray() || rw.called_computations().size() != 1)
    detail::Fail(rw, "only a reduce-window of one input is emitted elementally");
  const auto& window = rw.attr<hlo::WindowAttrs>().window;
  if (static_cast<int64_t>(window.dims.size()) != rw.shape().rank())
    detail::Fail(rw, "the window's rank differs from the result's");
  for (const hlo::WindowDim& w : window.dims)
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 || w.reversal)
      detail::Fail(rw, "window sizes, strides and dilations must be >= 1, without reversal");
  const hlo::PrimitiveType type = rw.shape().type;
  if (rw.operand(0)->shape().type != type || rw.operand(1)->shape().type != type)
    detail::Fail(rw, "input, init value and result must have one element type");

  return [this, &rw, input, init, type](const IrIndex& out) -> llvm::Value* {
    const auto& dims = rw.attr<hlo::WindowAttrs>().window.dims;
    const hlo::Shape& operand = rw.operand(0)->shape();
    llvm::AllocaInst* accumulator =
        detail::EntryAlloca(b_, IrType(type, b_.getContext()), rw.name() + ".acc");
    b_.CreateStore(init(IrIndex{}), accumulator);
    IrIndex position(dims.size(), nullptr);
    std::function<void(size_t, llvm::Value*)> nest = [&](size_t d, llvm::Value* inside) {
      if (d == dims.size()) {
        // Outside taps read element 0 (always in bounds) and keep the accumulator.
        IrIndex safe(dims.size());
        for (size_t k = 0; k < dims.size(); ++k)
          safe[k] = b_.CreateSelect(inside, position[k], b_.getInt64(0));
        llvm::Value* tap = input(safe);
        llvm::Value* current = b_.CreateLoad(accumulator->getAllocatedType(), accumulator);
        llvm::Value* arguments[] = {current, tap};
        llvm::Value* combined = EmitScalarComputation(*rw.called_computations()[0], arguments).at(0);
        b_.CreateStore(b_.CreateSelect(inside, combined, current), accumulator);
        return;
      }
      const hlo::WindowDim& w = dims[d];
      detail::EmitForLoop(
          b_, b_.getInt64(0), detail::I64(b_, w.size), rw.name() + ".window",
          [&](llvm::Value* tap) {
            // The tap's position in the padded, base-dilated input.
            llvm::Value* p = b_.CreateSub(
                b_.CreateAdd(b_.CreateMul(out.at(d), detail::I64(b_, w.stride)),
                             b_.CreateMul(tap, detail::I64(b_, w.window_dilation))),
                detail::I64(b_, w.pad_lo));
            llvm::Value* ok = b_.CreateICmpSGE(p, b_.getInt64(0));
            llvm::Value* index = p;
            if (w.base_dilation > 1) {
              llvm::Value* dilation = detail::I64(b_, w.base_dilation);
              ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateSRem(p, dilation), b_.getInt64(0)));
              index = b_.CreateSDiv(p, dilation);
            }
            ok = b_.CreateAnd(ok, b_.CreateICmpSLT(index, detail::I64(b_, operand.dims[d])));
            position[d] = index;
            nest(d + 1, b_.CreateAnd(inside, ok));
          },
          &dominating_block_);
    };
    nest(0, b_.getTrue());
    return b_.CreateLoad(accumulator->getAllocatedType(), accumulator);
  };
}

ElementGenerator ElementalEmitter::MakeDynamicUpdateSliceGenerator(
    const Instruction& dus, ElementGenerator operand, ElementGenerator update,
    std::vector<ElementGenerator> starts) {
  if (dus.opcode() != hlo::Opcode::kDynamicUpdateSlice || dus.operand_count() < 2)
    detail::Fail(dus, "not a dynamic-update-slice");
  const hlo::Shape& in = dus.operand(0)->shape();
  const hlo::Shape& patch = dus.operand(1)->shape();
  if (patch.rank() != in.rank()) detail::Fail(dus, "the update's rank differs from the operand's");
  const bool vector_form = starts.size() == 1 && in.rank() != 1;
  if (!vector_form && static_cast<int64_t>(starts.size()) != in.rank())
    detail::Fail(dus, "needs one start index per dimension");
  for (int64_t d = 0; d < in.rank(); ++d)
    if (patch.dims[static_cast<size_t>(d)] > in.dims[static_cast<size_t>(d)])
      detail::Fail(dus, "update larger than the operand");
  for (int64_t k = 2; k < dus.operand_count(); ++k)
    if (!hlo::IsInteger(dus.operand(k)->shape().type))
      detail::Fail(dus, "start indices must be integers");
  const hlo::PrimitiveType start_type = dus.operand(2)->shape().type;
  return [this, operand, update, starts, vector_form, start_type, type = dus.shape().type,
          in_dims = in.dims,
          sizes = patch.dims](const IrIndex& index) {
    llvm::Value* inside = b_.getTrue();
    IrIndex in_update(index.size());
    for (size_t d = 0; d < index.size(); ++d) {
      llvm::Value* start = vector_form ? starts[0](IrIndex{detail::I64(b_, static_cast<int64_t>(d))})
                                       : starts[d](IrIndex{});
      start = detail::ClampStartIndex(b_, start, start_type, in_dims[d] - sizes[d]);
      llvm::Value* offset = b_.CreateSub(index[d], start);
      inside = b_.CreateAnd(inside, b_.CreateAnd(b_.CreateICmpSGE(offset, b_.getInt64(0)),
                                                 b_.CreateICmpSLT(offset, detail::I64(b_, sizes[d]))));
      in_update[d] = offset;
    }
    llvm::Type* ir_type = IrType(type, b_.getContext());
    return detail::EmitIfThenElse(
        b_, inside, ir_type, [&] { return update(in_update); }, [&] { return operand(index); },
        &dominating_block_);
  };
}

}  // namespace llvm_codegen

// scatter as a generated kernel (ThunkBuilder::TryScatter): the result starts as a copy of the
// operands (none when the scatter takes over an operand's buffer, its last reader), then one
// loop nest walks the updates in row-major order — the interpreter's order, so duplicate
// indices combine identically — and applies the update computation (compiled inline by the
// elemental emitter) to each element whose whole update window fits in the operand at its
// start index; a window that does not fit is skipped entirely (hlo/ir.h; starts are not
// clamped). The kernel runs on one thread: updates may collide.
// Returns false (the caller falls back to the evaluator, which reports malformed dimension
// numbers) for forms outside that: mismatched layouts, a body the emitter rejects.
#include <algorithm>

#include <llvm/IR/IRBuilder.h>

#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/thunk_builder.h"
#include "targets/cpu/thunk_builder_internal.h"

namespace cpu {

using builder_internal::ArrayLeaves;
using hlo::Instruction;
using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

namespace {

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Which update element lands where (the dimension numbers resolved against the shapes).
struct ScatterGeometry {
  std::vector<int64_t> update_scatter_dims;  // update dims that pick an index vector
  std::vector<int64_t> indices_scatter_dims; // the indices dims they walk (same order)
  int64_t index_vector_dim = 0;              // == indices rank: implicit vector of one
  std::vector<int64_t> start_operand_dim;    // operand dim of each index vector entry
  std::vector<std::pair<int64_t, int64_t>> batching;  // (operand dim, indices dim)
  std::vector<int64_t> window_operand_dim;   // operand dim of each update_window_dims entry
  std::vector<int64_t> window_size;          // per operand dim
};

// nullopt when the dimension numbers do not describe a valid scatter over these shapes.
std::optional<ScatterGeometry> ResolveGeometry(const hlo::ScatterDimensionNumbers& numbers,
                                               const hlo::Shape& operand,
                                               const hlo::Shape& indices,
                                               const hlo::Shape& updates) {
  ScatterGeometry g;
  const int64_t operand_rank = operand.rank(), indices_rank = indices.rank();
  g.index_vector_dim = numbers.index_vector_dim;
  if (g.index_vector_dim < 0 || g.index_vector_dim > indices_rank) return std::nullopt;
  const int64_t vector_size =
      g.index_vector_dim == indices_rank ? 1 : indices.dims[static_cast<size_t>(g.index_vector_dim)];
  if (static_cast<int64_t>(numbers.scatter_dims_to_operand_dims.size()) != vector_size)
    return std::nullopt;
  for (int64_t d : numbers.scatter_dims_to_operand_dims)
    if (d < 0 || d >= operand_rank) return std::nullopt;
  g.start_operand_dim = numbers.scatter_dims_to_operand_dims;
  for (int64_t d = 0; d < updates.rank(); ++d)
    if (!Contains(numbers.update_window_dims, d)) g.update_scatter_dims.push_back(d);
  for (int64_t d = 0; d < indices_rank; ++d)
    if (d != g.index_vector_dim) g.indices_scatter_dims.push_back(d);
  if (g.update_scatter_dims.size() != g.indices_scatter_dims.size()) return std::nullopt;
  for (size_t k = 0; k < g.update_scatter_dims.size(); ++k)
    if (updates.dims[static_cast<size_t>(g.update_scatter_dims[k])] !=
        indices.dims[static_cast<size_t>(g.indices_scatter_dims[k])])
      return std::nullopt;
  if (numbers.input_batching_dims.size() != numbers.scatter_indices_batching_dims.size())
    return std::nullopt;
  for (size_t i = 0; i < numbers.input_batching_dims.size(); ++i) {
    const int64_t od = numbers.input_batching_dims[i], id = numbers.scatter_indices_batching_dims[i];
    if (od < 0 || od >= operand_rank || id < 0 || id >= indices_rank || id == g.index_vector_dim)
      return std::nullopt;
    g.batching.emplace_back(od, id);
  }
  for (int64_t d : numbers.inserted_window_dims)
    if (d < 0 || d >= operand_rank) return std::nullopt;
  g.window_size.assign(static_cast<size_t>(operand_rank), 1);
  for (int64_t d = 0; d < operand_rank; ++d)
    if (!Contains(numbers.inserted_window_dims, d) && !Contains(numbers.input_batching_dims, d))
      g.window_operand_dim.push_back(d);
  if (g.window_operand_dim.size() != numbers.update_window_dims.size()) return std::nullopt;
  for (size_t k = 0; k < numbers.update_window_dims.size(); ++k) {
    const int64_t ud = numbers.update_window_dims[k];
    if (ud < 0 || ud >= updates.rank()) return std::nullopt;
    const int64_t size = updates.dims[static_cast<size_t>(ud)];
    const auto od = static_cast<size_t>(g.window_operand_dim[k]);
    if (size > operand.dims[od]) return std::nullopt;
    g.window_size[od] = size;
  }
  return g;
}

}  // namespace

bool ThunkBuilder::TryScatter(const Instruction& inst, Scope& scope, ValueLayout& output) {
  if (!inst.has_attr<hlo::ScatterAttrs>() || inst.called_computations().size() != 1 ||
      inst.operand_count() < 3 || inst.operand_count() % 2 == 0)
    return false;
  const auto n = static_cast<size_t>(inst.operand_count() / 2);
  std::vector<hlo::Shape> results = ArrayLeaves(inst.shape());
  std::vector<hlo::Shape> inputs;
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) return false;
    inputs.push_back(operand->shape());
  }
  if (results.size() != n) return false;
  const hlo::Shape& indices = inputs[n];
  if (!hlo::IsInteger(indices.type)) return false;
  for (size_t i = 0; i < n; ++i) {
    const hlo::Shape& operand = inputs[i];
    const hlo::Shape& updates = inputs[n + 1 + i];
    // The result starts as a byte copy of the operand: same type, dims and layout.
    if (operand.dims != inputs[0].dims || results[i].type != operand.type ||
        results[i].dims != operand.dims || updates.type != operand.type ||
        updates.dims != inputs[n + 1].dims ||
        results[i].EffectiveMinorToMajor() != operand.EffectiveMinorToMajor())
      return false;
  }
  const std::optional<ScatterGeometry> geometry = ResolveGeometry(
      inst.attr<hlo::ScatterAttrs>().dnums, inputs[0], indices, inputs[n + 1]);
  if (!geometry) return false;
  const ScatterGeometry& g = *geometry;
  const std::vector<int64_t>& update_window_dims =
      inst.attr<hlo::ScatterAttrs>().dnums.update_window_dims;

  const std::string symbol = KernelSymbol(module_, inst.name());
  llvm::IRBuilder<> b(module_.getContext());
  KernelPrologue kernel = BeginKernelFunction(b, module_, symbol, inputs, results, 2);
  try {
    // The result starts as the operands (skipped when it is the operand's buffer).
    for (size_t i = 0; i < n; ++i)
      EmitCopyUnlessInPlace(b, kernel.operands[i], kernel.outputs[i], results[i]);
    llvm_codegen::ElementalEmitter emitter(b, module_);
    const hlo::Shape& updates = inputs[n + 1];
    IrIndex update_index(static_cast<size_t>(updates.rank()), nullptr);
    auto apply = [&] {
      // The start index: the index vector at this update's scatter position, batching dims.
      IrIndex indices_index(static_cast<size_t>(indices.rank()), nullptr);
      for (size_t k = 0; k < g.update_scatter_dims.size(); ++k)
        indices_index[static_cast<size_t>(g.indices_scatter_dims[k])] =
            update_index[static_cast<size_t>(g.update_scatter_dims[k])];
      std::vector<llvm::Value*> start(inputs[0].dims.size(), b.getInt64(0));
      for (size_t k = 0; k < g.start_operand_dim.size(); ++k) {
        if (g.index_vector_dim < indices.rank())
          indices_index[static_cast<size_t>(g.index_vector_dim)] = b.getInt64(static_cast<int64_t>(k));
        llvm::Value* value = kernel.operands[n].EmitLoad(b, indices_index);
        start[static_cast<size_t>(g.start_operand_dim[k])] =
            b.CreateIntCast(value, b.getInt64Ty(), hlo::IsSignedInteger(indices.type));
      }
      for (const auto& [operand_dim, indices_dim] : g.batching)
        start[static_cast<size_t>(operand_dim)] = indices_index[static_cast<size_t>(indices_dim)];
      // The whole window must fit: 0 <= start <= dim - window (one unsigned compare).
      llvm::Value* fits = b.getTrue();
      for (size_t d = 0; d < start.size(); ++d)
        fits = b.CreateAnd(fits, b.CreateICmpULE(start[d], b.getInt64(inputs[0].dims[d] -
                                                                       g.window_size[d])));
      EmitIf(b, fits, "update", [&] {
        IrIndex target = start;
        for (size_t k = 0; k < update_window_dims.size(); ++k) {
          const auto od = static_cast<size_t>(g.window_operand_dim[k]);
          target[od] = b.CreateAdd(target[od], update_index[static_cast<size_t>(update_window_dims[k])]);
        }
        std::vector<llvm::Value*> arguments;
        for (size_t i = 0; i < n; ++i) arguments.push_back(kernel.outputs[i].EmitLoad(b, target));
        for (size_t i = 0; i < n; ++i)
          arguments.push_back(kernel.operands[n + 1 + i].EmitLoad(b, update_index));
        std::vector<llvm::Value*> values =
            emitter.EmitScalarComputation(*inst.called_computations()[0], arguments);
        if (values.size() != n)
          throw hlo::Error("cpu backend: scatter body returns " + std::to_string(values.size()) +
                           " values for " + std::to_string(n) + " operands");
        for (size_t i = 0; i < n; ++i) kernel.outputs[i].EmitStore(b, target, values[i]);
      });
    };
    // Updates in row-major order (dim 0 outermost), as the interpreter applies them.
    std::function<void(size_t)> nest = [&](size_t dim) {
      if (dim == update_index.size()) return apply();
      EmitForLoop(b, b.getInt64(0), b.getInt64(updates.dims[dim]), "u" + std::to_string(dim),
                  [&](llvm::Value* i) {
                    update_index[dim] = i;
                    nest(dim + 1);
                  });
    };
    nest(0);
    b.CreateRetVoid();
  } catch (const hlo::Error&) {
    kernel.function->eraseFromParent();
    return false;
  }

  // In place: an operand whose buffer dies here becomes the result (no copy at run time).
  std::vector<const ValueLayout*> leaves;
  CollectLeaves(output, leaves);
  std::vector<int64_t> output_buffers;
  for (const ValueLayout* leaf : leaves) output_buffers.push_back(leaf->buffer);
  for (size_t i = 0; i < n; ++i) {
    const int64_t operand_buffer = scope[inst.operand(static_cast<int64_t>(i))].buffer;
    // Not when another input of this scatter reads the same buffer (it would see the writes).
    int64_t readers = 0;
    for (const Instruction* other : inst.operands()) readers += scope[other].buffer == operand_buffer;
    if (readers == 1 && scope.TakeOver(operand_buffer, output_buffers[i])) {
      output_buffers[i] = operand_buffer;
      result_.counters["scatter.in-place"] += 1;
    }
  }
  size_t next = 0;
  std::function<void(ValueLayout&)> rebind = [&](ValueLayout& value) {
    if (value.shape.IsTuple()) {
      for (ValueLayout& element : value.elements) rebind(element);
    } else {
      value.buffer = output_buffers[next++];
    }
  };
  rebind(output);
  scope.values[&inst] = output;

  std::vector<int64_t> buffers;
  for (const Instruction* operand : inst.operands()) buffers.push_back(scope[operand].buffer);
  buffers.insert(buffers.end(), output_buffers.begin(), output_buffers.end());
  AddKernelThunk(inst.name(), scope, symbol, std::move(buffers),
                 hlo::Shape::Scalar(inputs[0].type));
  result_.counters["thunks.scatter"] += 1;
  return true;
}

}  // namespace cpu

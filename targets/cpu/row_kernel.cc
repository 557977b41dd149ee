// Row kernels for reductions fused with their elementwise consumers (see row_kernel.h).
#include "targets/cpu/row_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "targets/cpu/kernel_emitter.h"

namespace cpu {

using llvm_codegen::ElementGenerator;
using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

namespace {

// Entry-block allocas of one combined reduction (SROA turns them into loop phis).
struct RowAccumulator {
  llvm::AllocaInst* value = nullptr;  // i32: the order key of the f32 max/min so far
  llvm::AllocaInst* nan = nullptr;    // i1: some element was NaN
};

// Physical dimensions, major first.
std::vector<int64_t> MajorFirst(const hlo::Shape& shape) {
  std::vector<int64_t> minor_to_major = shape.EffectiveMinorToMajor();
  return {minor_to_major.rbegin(), minor_to_major.rend()};
}

// An i32 whose signed order is the order of the f32 values (negative floats get their
// magnitude bits flipped; -0 sorts below +0). The map is its own inverse.
llvm::Value* OrderKey(llvm::IRBuilder<>& b, llvm::Value* bits) {
  llvm::Value* sign_fill = b.CreateAShr(bits, b.getInt32(31));
  return b.CreateXor(bits, b.CreateAnd(sign_fill, b.getInt32(0x7fffffff)));
}

// The row's max/min: nested loops over the column dims (index[...] of the row dims set).
// The values are compared as integer order keys (smax/smin), which LLVM vectorizes as plain
// integer min/max recurrences — maxnum/minnum reductions stayed scalar (x86 has no native
// IEEE maxnum, the cost model gives up), as did llvm.maximum and select chains with NaN
// checks. A separate OR of "element is NaN" restores NaN propagation at the end. Exact: the
// result is one of the elements (or NaN); a ±0 tie returns +0 for max and -0 for min.
llvm::Value* CombineRow(llvm::IRBuilder<>& b, const RowAccumulator& accumulator,
                        const RowReduction& reduction, IrIndex index,
                        const std::vector<int64_t>& major_first, size_t row_levels,
                        const std::function<int64_t(size_t)>& extent) {
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* init = reduction.init(IrIndex{});
  llvm::Type* type = init->getType();
  if (type != f32) init = b.CreateFPExt(init, f32);
  b.CreateStore(OrderKey(b, b.CreateBitCast(init, i32)), accumulator.value);
  b.CreateStore(b.CreateFCmpUNO(init, init), accumulator.nan);
  const llvm::Intrinsic::ID combine = *reduction.combiner == RowCombiner::kMaximum
                                          ? llvm::Intrinsic::smax
                                          : llvm::Intrinsic::smin;
  std::function<void(size_t)> nest = [&](size_t level) {
    if (level == major_first.size()) {
      llvm::Value* element = reduction.input(index);
      if (element->getType() != f32) element = b.CreateFPExt(element, f32);
      llvm::Value* key = OrderKey(b, b.CreateBitCast(element, i32));
      b.CreateStore(b.CreateBinaryIntrinsic(combine, b.CreateLoad(i32, accumulator.value), key),
                    accumulator.value);
      b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt1Ty(), accumulator.nan),
                               b.CreateFCmpUNO(element, element)),
                    accumulator.nan);
      return;
    }
    const auto dim = static_cast<size_t>(major_first[level]);
    EmitForLoop(b, b.getInt64(0), b.getInt64(extent(level)), "r" + std::to_string(dim),
                [&](llvm::Value* i) {
                  index[dim] = i;
                  nest(level + 1);
                });
  };
  nest(row_levels);
  llvm::Value* extreme = b.CreateBitCast(OrderKey(b, b.CreateLoad(i32, accumulator.value)), f32);
  llvm::Value* result = b.CreateSelect(b.CreateLoad(b.getInt1Ty(), accumulator.nan),
                                       llvm::ConstantFP::getNaN(f32), extreme);
  return type == f32 ? result : b.CreateFPTrunc(result, type);
}

}  // namespace

int64_t RowLength(const hlo::Shape& shape, int64_t column_dims) {
  std::vector<int64_t> major_first = MajorFirst(shape);
  int64_t length = 1;
  for (size_t level = major_first.size() - static_cast<size_t>(column_dims);
       level < major_first.size(); ++level)
    length *= shape.dims[static_cast<size_t>(major_first[level])];
  return length;
}

int64_t RowCount(const hlo::Shape& shape, int64_t column_dims) {
  const int64_t length = RowLength(shape, column_dims);
  return length == 0 ? 0 : shape.ElementCount() / length;
}

void EmitRowKernel(llvm::Module& module, const RowKernelSpec& spec,
                   const RowGeneratorFactory& make) {
  llvm::IRBuilder<> b(module.getContext());
  KernelPrologue kernel = BeginKernelFunction(b, module, spec.name, spec.operands, spec.outputs,
                                              /*index_arguments=*/2);
  llvm::Argument* begin = kernel.function->getArg(1);
  llvm::Argument* end = kernel.function->getArg(2);
  std::vector<ElementGenerator> loads = OperandLoads(b, kernel.operands);
  std::vector<IrArray>& outputs = kernel.outputs;

  llvm_codegen::ElementalEmitter emitter(b, module);
  std::vector<llvm::Value*> row_values;
  RowGenerators generators = make(emitter, std::move(loads), row_values);
  row_values.assign(generators.reductions.size(), nullptr);
  if (generators.outputs.size() != outputs.size())
    throw hlo::Error("cpu backend: row kernel " + spec.name + " has " +
                     std::to_string(generators.outputs.size()) + " generators for " +
                     std::to_string(outputs.size()) + " outputs");

  const hlo::Shape& shape = spec.outputs.at(0);
  const std::vector<int64_t> major_first = MajorFirst(shape);
  const size_t row_levels = major_first.size() - static_cast<size_t>(spec.column_dims);
  IrIndex index(static_cast<size_t>(shape.rank()), nullptr);
  auto extent = [&](size_t level) {
    return shape.dims[static_cast<size_t>(major_first[level])];
  };

  // Column loops in physical order; the innermost walks contiguous memory.
  std::function<void(size_t)> columns = [&](size_t level) {
    if (level == major_first.size()) {
      std::vector<llvm::Value*> values;
      for (const ElementGenerator& generator : generators.outputs) values.push_back(generator(index));
      for (size_t i = 0; i < outputs.size(); ++i) outputs[i].EmitStore(b, index, values[i]);
      return;
    }
    const auto dim = static_cast<size_t>(major_first[level]);
    EmitForLoop(b, b.getInt64(0), b.getInt64(extent(level)), "c" + std::to_string(dim),
                [&](llvm::Value* i) {
                  index[dim] = i;
                  columns(level + 1);
                });
  };
  // Accumulators live in allocas of the entry block, which SROA turns into loop phis.
  std::vector<RowAccumulator> accumulators(generators.reductions.size());
  for (size_t k = 0; k < generators.reductions.size(); ++k) {
    if (!generators.reductions[k].combiner) continue;
    accumulators[k].value = b.CreateAlloca(b.getInt32Ty(), nullptr, "acc");
    accumulators[k].nan = b.CreateAlloca(b.getInt1Ty(), nullptr, "acc.nan");
  }
  EmitForLoop(b, begin, end, "row", [&](llvm::Value* row) {
    // The flattened row -> the indices of the row dims (the last row level varies fastest).
    llvm::Value* rest = row;
    for (size_t level = row_levels; level-- > 0;) {
      const auto dim = static_cast<size_t>(major_first[level]);
      llvm::Value* size = b.getInt64(extent(level));
      index[dim] = level == 0 ? rest : b.CreateURem(rest, size);
      rest = b.CreateUDiv(rest, size);
    }
    for (size_t level = row_levels; level < major_first.size(); ++level)
      index[static_cast<size_t>(major_first[level])] = b.getInt64(0);
    for (size_t k = 0; k < generators.reductions.size(); ++k) {
      const RowReduction& reduction = generators.reductions[k];
      row_values[k] = reduction.combiner ? CombineRow(b, accumulators[k], reduction, index,
                                                      major_first, row_levels, extent)
                                         : reduction.whole(index);
    }
    columns(row_levels);
  });
  b.CreateRetVoid();
}

}  // namespace cpu

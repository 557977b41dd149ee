// Reductions over the leading dimensions of a row-major value (a bias gradient: the sum over a
// batch of [batch, features]), fused with their producers, as one kernel that walks the input
// row by row and folds each row into the output:
//
//     out[o] = init                                  for o in the thread's range
//     for each reduced index r (row-major):  out[o] = combine(out[o], input[r, o])
//
// The general loop kernel computes each output element by a strided walk down its column (one
// cache line per element read); here the inner loop runs along contiguous memory and
// vectorizes. Each element still combines its inputs in increasing row-major order of the
// reduced dimensions, from the init value, in the reduction's own type: the interpreter's order
// and roundings, so results are bit-identical to the general kernel's.
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/thunk_builder_internal.h"

namespace cpu {

using hlo::Instruction;
using hlo::Opcode;
using llvm_codegen::ElementGenerator;
using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

namespace {

// The reduce a fused computation ends in (directly or under a reshape / bitcast that keeps the
// row-major bytes), when it is the computation's only reduce; else nullptr.
const Instruction* RootReduce(const hlo::Computation& computation) {
  const Instruction* root = computation.root();
  if (root->opcode() == Opcode::kReshape || root->opcode() == Opcode::kBitcast) {
    if (!root->shape().HasDefaultLayout() || !root->operand(0)->shape().HasDefaultLayout())
      return nullptr;
    root = root->operand(0);
  }
  if (root->opcode() != Opcode::kReduce) return nullptr;
  for (const auto& member : computation.instructions())
    if (member->opcode() == Opcode::kReduce && member.get() != root) return nullptr;
  return root;
}

// The dimensions `reduce` folds, in increasing order, when they lead its row-major input: every
// kept dimension before one of them has size 1 (mean over [1, 4096, 1024]'s middle axis), at
// least one is kept, and more than one element folds into each output. Empty otherwise.
std::vector<int64_t> LeadingReducedDims(const Instruction& reduce) {
  if (reduce.operand_count() != 2 || !reduce.shape().IsArray()) return {};
  const hlo::Shape& input = reduce.operand(0)->shape();
  if (!input.HasDefaultLayout() || !reduce.shape().HasDefaultLayout()) return {};
  std::vector<int64_t> dims = reduce.attr<hlo::DimensionsAttrs>().dimensions;
  std::sort(dims.begin(), dims.end());
  if (dims.empty() || static_cast<int64_t>(dims.size()) >= input.rank()) return {};
  int64_t rows = 1;
  for (int64_t d = 0; d <= dims.back(); ++d) {
    const int64_t extent = input.dims[static_cast<size_t>(d)];
    if (std::binary_search(dims.begin(), dims.end(), d)) {
      rows *= extent;
    } else if (extent != 1) {
      return {};  // a kept dimension of its own between folded ones: not rows of the output
    }
  }
  return rows > 1 ? dims : std::vector<int64_t>{};
}

}  // namespace

bool ThunkBuilder::TryColumnReduction(const Instruction& inst, Scope& scope,
                                      const ValueLayout& output) {
  const bool fused = inst.opcode() == Opcode::kFusion;
  const hlo::Computation* computation = fused ? inst.called_computations().at(0) : nullptr;
  const Instruction* reduce = fused ? RootReduce(*computation) : &inst;
  if (reduce == nullptr || reduce->opcode() != Opcode::kReduce) return false;
  const std::vector<int64_t> reduced = LeadingReducedDims(*reduce);
  if (reduced.empty() || !output.shape.IsArray() || !output.shape.HasDefaultLayout() ||
      output.shape.ElementCount() != reduce->shape().ElementCount() ||
      output.shape.type != reduce->shape().type)
    return false;

  LoopKernelSpec spec;
  spec.name = KernelSymbol(module_, inst.name());
  std::vector<int64_t> buffers;
  if (!scope.AppendArrayOperands(inst, spec.operands, buffers)) return false;
  buffers.push_back(output.buffer);
  const hlo::Shape kept = reduce->shape();  // the output's bytes, row-major
  const std::vector<int64_t>& input_dims = reduce->operand(0)->shape().dims;

  llvm::IRBuilder<> b(module_.getContext());
  try {
    KernelPrologue kernel = BeginKernelFunction(b, module_, spec.name, spec.operands, {kept},
                                                /*index_arguments=*/2);
    llvm::Value* begin = kernel.function->getArg(1);
    llvm::Value* end = kernel.function->getArg(2);
    llvm_codegen::ElementalEmitter emitter(b, module_);
    std::vector<ElementGenerator> loads = OperandLoads(b, kernel.operands);
    // Generators of the reduce's input and init: the fused producers, or the operands.
    ElementGenerator input, init;
    if (fused) {
      std::map<const Instruction*, ElementGenerator> generators;
      for (const auto& member : computation->instructions()) {
        const Instruction* m = member.get();
        if (m == reduce) break;
        if (m->opcode() == Opcode::kParameter) {
          generators[m] = loads.at(static_cast<size_t>(m->attr<hlo::ParameterAttrs>().number));
          continue;
        }
        std::vector<ElementGenerator> operands;
        for (const Instruction* operand : m->operands()) operands.push_back(generators.at(operand));
        generators[m] = emitter.MakeGenerator(*m, std::move(operands));
      }
      input = generators.at(reduce->operand(0));
      init = generators.at(reduce->operand(1));
    } else {
      input = loads.at(0);
      init = loads.at(1);
    }
    const IrArray& out = kernel.outputs.at(0);
    const hlo::Computation& reducer = *reduce->called_computations().at(0);
    // Loops over the kept dimensions (the first one over [begin, end)), around `body`.
    auto over_kept = [&](IrIndex& index, const std::function<void(const IrIndex&)>& body) {
      std::function<void(size_t)> nest = [&](size_t d) {
        if (d == static_cast<size_t>(kept.rank())) {
          body(index);
          return;
        }
        llvm::Value* lo = d == 0 ? begin : static_cast<llvm::Value*>(b.getInt64(0));
        llvm::Value* hi = d == 0 ? end : static_cast<llvm::Value*>(b.getInt64(kept.dims[d]));
        EmitForLoop(b, lo, hi, "kept" + std::to_string(d), [&](llvm::Value* i) {
          index[d] = i;
          nest(d + 1);
        });
      };
      nest(0);
    };
    IrIndex kept_index(static_cast<size_t>(kept.rank()), nullptr);
    over_kept(kept_index, [&](const IrIndex& at) { out.EmitStore(b, at, init(IrIndex{})); });
    IrIndex input_index(input_dims.size(), nullptr);
    std::vector<size_t> kept_dims;  // the input dimension of each output dimension
    for (size_t d = 0; d < input_dims.size(); ++d)
      if (!std::binary_search(reduced.begin(), reduced.end(), static_cast<int64_t>(d)))
        kept_dims.push_back(d);
    std::function<void(size_t)> rows = [&](size_t level) {
      if (level == reduced.size()) {
        over_kept(kept_index, [&](const IrIndex& at) {
          for (size_t k = 0; k < at.size(); ++k) input_index[kept_dims[k]] = at[k];
          const std::vector<llvm::Value*> arguments = {out.EmitLoad(b, at), input(input_index)};
          std::vector<llvm::Value*> combined = emitter.EmitScalarComputation(reducer, arguments);
          out.EmitStore(b, at, combined.at(0));
        });
        return;
      }
      const auto d = static_cast<size_t>(reduced[level]);
      EmitForLoop(b, b.getInt64(0), b.getInt64(input_dims[d]), "row" + std::to_string(d),
                  [&](llvm::Value* i) {
                    input_index[d] = i;
                    rows(level + 1);
                  });
    };
    rows(0);
    b.CreateRetVoid();
  } catch (const hlo::Error&) {
    // Not emitted here; the general kernel path decides.
    if (llvm::Function* f = module_.getFunction(spec.name)) f->eraseFromParent();
    return false;
  }
  int64_t reduced_elements = 1;
  for (int64_t d : reduced) reduced_elements *= input_dims[static_cast<size_t>(d)];
  AddKernelThunk(inst.name(), scope, spec.name, std::move(buffers), kept, reduced_elements);
  result_.counters["kernels.column-reduce"] += 1;
  return true;
}

}  // namespace cpu

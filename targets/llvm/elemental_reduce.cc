// reduce (also variadic): for one output index, a loop nest over the reduced dimensions that
// applies the to_apply computation (through EmitScalarComputation) to the accumulators and the
// next input elements.
//
// Guarantees: the reduced elements are combined one at a time in row-major order of the reduced
// dimensions, starting from the init values — the interpreter's order, so float results match
// bit for bit; accumulators have the reduction's own type (a bf16 reduce rounds after every
// combination, ir.h). The results of a variadic reduce share one loop nest per index (within a
// basic block). Accumulators live in entry-block allocas (promoted to registers by mem2reg).
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"

namespace llvm_codegen {

using hlo::Instruction;

std::vector<ElementGenerator> ElementalEmitter::MakeReduceGenerators(
    const Instruction& inst, std::vector<ElementGenerator> operands) {
  const int64_t count = inst.operand_count() / 2;
  if (count < 1 || inst.operand_count() != 2 * count)
    detail::Fail(inst, "needs inputs and as many init values");
  if (inst.called_computations().size() != 1) detail::Fail(inst, "needs one to_apply computation");
  const hlo::Computation* reducer = inst.called_computations()[0];
  if (reducer->parameter_count() != 2 * count) {
    detail::Fail(inst, "to_apply must take " + std::to_string(2 * count) + " parameters");
  }
  const hlo::Shape& input = inst.operand(0)->shape();
  std::vector<bool> is_reduced(static_cast<size_t>(input.rank()), false);
  std::vector<int64_t> reduced;
  for (int64_t d : inst.attr<hlo::DimensionsAttrs>().dimensions) {
    if (d < 0 || d >= input.rank() || is_reduced[static_cast<size_t>(d)]) {
      detail::Fail(inst, "reduced dimension " + std::to_string(d) + " is out of range or repeated");
    }
    is_reduced[static_cast<size_t>(d)] = true;
  }
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (is_reduced[static_cast<size_t>(d)]) reduced.push_back(d);  // increasing: row-major order
  }
  std::vector<hlo::PrimitiveType> types;
  for (int64_t k = 0; k < count; ++k) {
    const hlo::Shape& in = inst.operand(k)->shape();
    const hlo::Shape& init = inst.operand(count + k)->shape();
    if (in.dims != input.dims) detail::Fail(inst, "inputs of a variadic reduce differ in shape");
    if (init.rank() != 0 || init.type != in.type)
      detail::Fail(inst, "init values must be scalars of the input types");
    types.push_back(init.type);
  }
  if (static_cast<int64_t>(input.rank() - reduced.size()) !=
      (inst.shape().IsTuple() ? inst.shape().tuple_shapes.at(0).rank() : inst.shape().rank())) {
    detail::Fail(inst, "result rank does not match the kept dimensions");
  }

  using Cache = std::map<std::pair<llvm::BasicBlock*, IrIndex>, std::vector<llvm::Value*>>;
  auto cache = std::make_shared<Cache>();
  auto all_results = [this, &inst, operands, count, reducer, reduced, is_reduced, types, cache,
                      dims = input.dims](const IrIndex& index) -> std::vector<llvm::Value*> {
    for (llvm::BasicBlock* block : detail::DominatingBlocks(b_, dominating_block_)) {
      auto found = cache->find({block, index});
      if (found != cache->end()) return found->second;
    }
    std::vector<llvm::AllocaInst*> accumulators;
    for (int64_t k = 0; k < count; ++k) {
      llvm::AllocaInst* slot = detail::EntryAlloca(
          b_, IrType(types[static_cast<size_t>(k)], b_.getContext()), inst.name() + ".acc");
      b_.CreateStore(operands[static_cast<size_t>(count + k)](IrIndex{}), slot);
      accumulators.push_back(slot);
    }
    IrIndex input_index(dims.size());
    for (size_t d = 0, kept = 0; d < dims.size(); ++d) {
      if (!is_reduced[d]) input_index[d] = index.at(kept++);
    }
    std::function<void(size_t)> loop_nest = [&](size_t level) {
      if (level == reduced.size()) {
        std::vector<llvm::Value*> arguments;
        for (size_t k = 0; k < accumulators.size(); ++k) {
          arguments.push_back(b_.CreateLoad(accumulators[k]->getAllocatedType(), accumulators[k]));
        }
        for (int64_t k = 0; k < count; ++k)
          arguments.push_back(operands[static_cast<size_t>(k)](input_index));
        std::vector<llvm::Value*> combined = EmitScalarComputation(*reducer, arguments);
        if (static_cast<int64_t>(combined.size()) != count) {
          detail::Fail(inst, "to_apply returns " + std::to_string(combined.size()) +
                                 " values, expected " + std::to_string(count));
        }
        for (size_t k = 0; k < accumulators.size(); ++k) {
          if (combined[k]->getType() != accumulators[k]->getAllocatedType()) {
            detail::Fail(inst,
                         "to_apply result " + std::to_string(k) + " has the wrong element type");
          }
          b_.CreateStore(combined[k], accumulators[k]);
        }
        return;
      }
      const int64_t dim = reduced[level];
      detail::EmitForLoop(
          b_, b_.getInt64(0), detail::I64(b_, dims[static_cast<size_t>(dim)]),
          inst.name() + ".reduce",
          [&](llvm::Value* i) {
            input_index[static_cast<size_t>(dim)] = i;
            loop_nest(level + 1);
          },
          &dominating_block_);
    };
    loop_nest(0);
    std::vector<llvm::Value*> results;
    for (llvm::AllocaInst* slot : accumulators)
      results.push_back(b_.CreateLoad(slot->getAllocatedType(), slot));
    (*cache)[{b_.GetInsertBlock(), index}] = results;
    return results;
  };
  std::vector<ElementGenerator> generators;
  for (int64_t k = 0; k < count; ++k) {
    generators.push_back([all_results, k](const IrIndex& index) {
      return all_results(index).at(static_cast<size_t>(k));
    });
  }
  return generators;
}

}  // namespace llvm_codegen

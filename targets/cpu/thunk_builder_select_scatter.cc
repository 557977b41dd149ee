// select-and-scatter as a generated kernel (ThunkBuilder::TrySelectAndScatter), the gradient of
// max pooling: the result is filled with init_value; then for every source element in
// row-major order the kernel walks its window's in-bounds taps in row-major window order,
// keeps the first tap and replaces the kept one by a later tap whenever select(kept, tap) is
// false (the interpreter's rule, so ties and NaNs pick the same tap), and combines the source
// element into the result at the kept tap with the scatter computation. Padding taps are
// never selected; a window with no in-bounds tap scatters nothing. Any layouts (logical
// indexing through IrArray). One thread: windows overlap.
// Returns false (the evaluator falls back and reports malformed input) for dilated windows,
// mismatched ranks or a computation the elemental emitter rejects.
#include <llvm/IR/IRBuilder.h>

#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/thunk_builder.h"
#include "targets/cpu/thunk_builder_internal.h"

namespace cpu {

using hlo::Instruction;
using llvm_codegen::IrIndex;

bool ThunkBuilder::TrySelectAndScatter(const Instruction& inst, Scope& scope,
                                       const ValueLayout& output) {
  if (inst.operand_count() != 3 || inst.called_computations().size() != 2 ||
      !inst.has_attr<hlo::WindowAttrs>() || !inst.shape().IsArray())
    return false;
  const hlo::Shape& operand = inst.operand(0)->shape();
  const hlo::Shape& source = inst.operand(1)->shape();
  const hlo::Shape& init = inst.operand(2)->shape();
  const std::vector<hlo::WindowDim>& window = inst.attr<hlo::WindowAttrs>().window.dims;
  if (!operand.IsArray() || !source.IsArray() || !init.IsArray() || init.rank() != 0 ||
      operand.rank() == 0 || source.rank() != operand.rank() ||
      static_cast<int64_t>(window.size()) != operand.rank() ||
      inst.shape().dims != operand.dims || inst.shape().type != init.type ||
      source.type != init.type)
    return false;
  for (const hlo::WindowDim& w : window)
    if (w.base_dilation != 1 || w.window_dilation != 1 || w.reversal || w.size < 1 ||
        w.stride < 1)
      return false;

  const std::string symbol = KernelSymbol(module_, inst.name());
  llvm::IRBuilder<> b(module_.getContext());
  KernelPrologue kernel =
      BeginKernelFunction(b, module_, symbol, {operand, source, init}, {inst.shape()}, 2);
  const size_t rank = static_cast<size_t>(operand.rank());
  try {
    llvm_codegen::ElementalEmitter emitter(b, module_);
    const llvm_codegen::IrArray& result = kernel.outputs[0];
    llvm::Type* value_type = llvm_codegen::IrType(operand.type, b.getContext());
    // The kept tap: its index per dim, its value, and whether there is one yet (entry allocas).
    std::vector<llvm::AllocaInst*> kept_index;
    for (size_t d = 0; d < rank; ++d) kept_index.push_back(b.CreateAlloca(b.getInt64Ty()));
    llvm::AllocaInst* kept_value = b.CreateAlloca(value_type);
    llvm::AllocaInst* have = b.CreateAlloca(b.getInt1Ty());
    llvm::Value* init_value = kernel.operands[2].EmitLoad(b, {});

    IrIndex index(rank, nullptr);
    // Loops over `extents` (row-major), body at the innermost level.
    std::function<void(size_t, const std::vector<int64_t>&, const std::string&,
                       const std::function<void()>&)>
        nest = [&](size_t d, const std::vector<int64_t>& extents, const std::string& name,
                   const std::function<void()>& body) {
          if (d == extents.size()) return body();
          EmitForLoop(b, b.getInt64(0), b.getInt64(extents[d]), name + std::to_string(d),
                      [&](llvm::Value* i) {
                        index[d] = i;
                        nest(d + 1, extents, name, body);
                      });
        };
    nest(0, operand.dims, "fill", [&] { result.EmitStore(b, index, init_value); });

    std::vector<int64_t> window_sizes;
    for (const hlo::WindowDim& w : window) window_sizes.push_back(w.size);
    nest(0, source.dims, "s", [&] {
      const IrIndex source_index = index;
      b.CreateStore(b.getFalse(), have);
      b.CreateStore(init_value, kept_value);  // never compared: `have` is false until a tap
      IrIndex tap(rank, nullptr);
      std::function<void(size_t)> taps = [&](size_t d) {
        if (d == rank) {
          // In bounds in every dim (padding taps are skipped).
          llvm::Value* inside = b.getTrue();
          for (size_t k = 0; k < rank; ++k)
            inside = b.CreateAnd(inside, b.CreateICmpULT(tap[k], b.getInt64(operand.dims[k])));
          llvm::Function* function = b.GetInsertBlock()->getParent();
          auto* visit = llvm::BasicBlock::Create(b.getContext(), "tap", function);
          auto* after = llvm::BasicBlock::Create(b.getContext(), "tap.after", function);
          b.CreateCondBr(inside, visit, after);
          b.SetInsertPoint(visit);
          llvm::Value* candidate = kernel.operands[0].EmitLoad(b, tap);
          const std::vector<llvm::Value*> pair = {b.CreateLoad(value_type, kept_value),
                                                  candidate};
          llvm::Value* keep =
              emitter.EmitScalarComputation(*inst.called_computations()[0], pair).at(0);
          if (!keep->getType()->isIntegerTy(1))
            throw hlo::Error("cpu backend: select must return a pred");
          // Take the tap when there is none yet or select(kept, tap) is false.
          llvm::Value* take = b.CreateSelect(b.CreateLoad(b.getInt1Ty(), have),
                                             b.CreateNot(keep), b.getTrue());
          for (size_t k = 0; k < rank; ++k)
            b.CreateStore(b.CreateSelect(take, tap[k],
                                         b.CreateLoad(b.getInt64Ty(), kept_index[k])),
                          kept_index[k]);
          b.CreateStore(b.CreateSelect(take, candidate, b.CreateLoad(value_type, kept_value)),
                        kept_value);
          b.CreateStore(b.getTrue(), have);
          b.CreateBr(after);
          b.SetInsertPoint(after);
          return;
        }
        const hlo::WindowDim& w = window[d];
        EmitForLoop(b, b.getInt64(0), b.getInt64(w.size), "t" + std::to_string(d),
                    [&](llvm::Value* t) {
                      // Input position o * stride - pad_lo + t (negative wraps: out of bounds).
                      tap[d] = b.CreateAdd(
                          b.CreateMul(source_index[d], b.getInt64(w.stride)),
                          b.CreateSub(t, b.getInt64(w.pad_lo)));
                      taps(d + 1);
                    });
      };
      taps(0);
      llvm::Function* function = b.GetInsertBlock()->getParent();
      auto* scatter = llvm::BasicBlock::Create(b.getContext(), "scatter", function);
      auto* after = llvm::BasicBlock::Create(b.getContext(), "scatter.after", function);
      b.CreateCondBr(b.CreateLoad(b.getInt1Ty(), have), scatter, after);
      b.SetInsertPoint(scatter);
      IrIndex target(rank, nullptr);
      for (size_t k = 0; k < rank; ++k) target[k] = b.CreateLoad(b.getInt64Ty(), kept_index[k]);
      const std::vector<llvm::Value*> pair = {result.EmitLoad(b, target),
                                              kernel.operands[1].EmitLoad(b, source_index)};
      llvm::Value* combined =
          emitter.EmitScalarComputation(*inst.called_computations()[1], pair).at(0);
      result.EmitStore(b, target, combined);
      b.CreateBr(after);
      b.SetInsertPoint(after);
    });
    b.CreateRetVoid();
  } catch (const hlo::Error&) {
    kernel.function->eraseFromParent();
    return false;
  } catch (const std::out_of_range&) {
    kernel.function->eraseFromParent();
    return false;
  }
  std::vector<int64_t> buffers;
  for (const Instruction* operand_value : inst.operands()) buffers.push_back(scope[operand_value].buffer);
  buffers.push_back(output.buffer);
  AddKernelThunk(inst.name(), scope, symbol, std::move(buffers), hlo::Shape::Scalar(init.type));
  result_.counters["thunks.select-and-scatter"] += 1;
  return true;
}

}  // namespace cpu

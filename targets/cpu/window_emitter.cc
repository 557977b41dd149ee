// reduce-window as an element generator (see window_emitter.h).
#include "targets/cpu/window_emitter.h"

#include "targets/cpu/kernel_emitter.h"

namespace cpu {

using llvm_codegen::ElementGenerator;
using llvm_codegen::IrIndex;

bool CanGenerateReduceWindow(const hlo::Instruction& rw) {
  if (rw.opcode() != hlo::Opcode::kReduceWindow || rw.operand_count() != 2) return false;
  if (!rw.shape().IsArray() || rw.called_computations().size() != 1) return false;
  const auto& window = rw.attr<hlo::WindowAttrs>().window;
  if (static_cast<int64_t>(window.dims.size()) != rw.shape().rank()) return false;
  for (const hlo::WindowDim& w : window.dims) {
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 || w.reversal)
      return false;
  }
  return true;
}

ElementGenerator MakeReduceWindowGenerator(llvm_codegen::ElementalEmitter& emitter,
                                           const hlo::Instruction& rw, ElementGenerator input,
                                           ElementGenerator init) {
  return [&emitter, &rw, input, init](const IrIndex& out) -> llvm::Value* {
    llvm::IRBuilder<>& b = emitter.builder();
    const auto& dims = rw.attr<hlo::WindowAttrs>().window.dims;
    const hlo::Shape& operand = rw.operand(0)->shape();
    llvm::Value* init_value = init(IrIndex{});
    // The accumulator lives in an entry-block alloca so SROA turns it into a phi.
    llvm::Function* function = b.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    llvm::AllocaInst* accumulator = entry.CreateAlloca(init_value->getType(), nullptr, "window.acc");
    b.CreateStore(init_value, accumulator);

    IrIndex position(dims.size(), nullptr);
    std::function<void(size_t, llvm::Value*)> nest = [&](size_t d, llvm::Value* inside) {
      if (d == dims.size()) {
        IrIndex safe(dims.size());
        for (size_t k = 0; k < dims.size(); ++k)
          safe[k] = b.CreateSelect(inside, position[k], b.getInt64(0));
        llvm::Value* loaded = input(safe);
        llvm::Value* current = b.CreateLoad(init_value->getType(), accumulator);
        std::vector<llvm::Value*> args = {current, loaded};
        llvm::Value* combined =
            emitter.EmitScalarComputation(*rw.called_computations()[0], args).at(0);
        // Branch-free skip of padding / dilation holes: keep the accumulator there.
        b.CreateStore(b.CreateSelect(inside, combined, current), accumulator);
        return;
      }
      const hlo::WindowDim& w = dims[d];
      EmitForLoop(b, b.getInt64(0), b.getInt64(w.size), "window" + std::to_string(d),
                  [&](llvm::Value* k) {
        // Position in the padded, base-dilated input.
        llvm::Value* p = b.CreateSub(
            b.CreateAdd(b.CreateMul(out[d], b.getInt64(w.stride)),
                        b.CreateMul(k, b.getInt64(w.window_dilation))),
            b.getInt64(w.pad_lo));
        llvm::Value* ok = b.CreateICmpSGE(p, b.getInt64(0));
        llvm::Value* index = p;
        if (w.base_dilation > 1) {
          llvm::Value* dilation = b.getInt64(w.base_dilation);
          // p >= 0 is checked before the value is used; srem/sdiv of a negative p is harmless.
          ok = b.CreateAnd(ok, b.CreateICmpEQ(b.CreateSRem(p, dilation), b.getInt64(0)));
          index = b.CreateSDiv(p, dilation);
        }
        ok = b.CreateAnd(ok, b.CreateICmpSLT(index, b.getInt64(operand.dims[d])));
        position[d] = index;
        nest(d + 1, b.CreateAnd(inside, ok));
      });
    };
    nest(0, b.getTrue());
    return b.CreateLoad(init_value->getType(), accumulator);
  };
}

}  // namespace cpu

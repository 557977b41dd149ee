// EmitCountedLoop: see loop_emitter.h.
#include "targets/llvm/loop_emitter.h"

namespace llvm_codegen {

void EmitCountedLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end,
                     llvm::Value* step, const std::string& name,
                     const std::function<void(llvm::Value*)>& body) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context, name + ".header", function);
  auto* loop_body = llvm::BasicBlock::Create(context, name + ".body", function);
  auto* exit = llvm::BasicBlock::Create(context, name + ".exit", function);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, name);
  i->addIncoming(start, preheader);
  b.CreateCondBr(b.CreateICmpSLT(i, end), loop_body, exit);
  b.SetInsertPoint(loop_body);
  body(i);
  llvm::Value* next =
      b.CreateAdd(i, step, name + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
}

void EmitIf(llvm::IRBuilder<>& b, llvm::Value* condition, const std::string& name,
            const std::function<void()>& then) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  auto* body = llvm::BasicBlock::Create(b.getContext(), name, function);
  auto* after = llvm::BasicBlock::Create(b.getContext(), name + ".after", function);
  b.CreateCondBr(condition, body, after);
  b.SetInsertPoint(body);
  then();
  b.CreateBr(after);
  b.SetInsertPoint(after);
}

}  // namespace llvm_codegen

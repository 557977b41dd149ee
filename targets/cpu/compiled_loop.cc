// EmitCompiledLoop (compiled_loop.h).
#include "targets/cpu/compiled_loop.h"

#include <algorithm>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Support/raw_ostream.h>

#include "hlo/diagnostic.h"
#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/runtime_thunks.h"

namespace cpu {
namespace {

// One step of the loop: a small kernel called directly (inlined when scalar), or any other
// thunk run through the callback (compiled_loop.h).
struct Step {
  llvm::Function* kernel = nullptr;  // null: the callback runs thunk `index`
  std::vector<int64_t> buffers;      // a kernel's buffer ids in its sequence's table
  int64_t rows = 0;
  int64_t index = 0;
  bool scalar = false;  // one element: inlined into the loop
};

std::vector<Step> StepsOf(llvm::Module& module, const ThunkSequence& sequence) {
  std::vector<Step> steps;
  for (size_t i = 0; i < sequence.thunks().size(); ++i) {
    Step step;
    step.index = static_cast<int64_t>(i);
    const auto* kernel = dynamic_cast<const KernelThunk*>(sequence.thunks()[i].get());
    llvm::Function* function = kernel ? module.getFunction(kernel->symbol()) : nullptr;
    if (kernel != nullptr && kernel->WorkIsSmall() && function != nullptr &&
        function->arg_size() == 3) {
      step.kernel = function;
      step.buffers = kernel->buffer_ids();
      step.rows = kernel->rows();
      step.scalar = kernel->rows() * std::max<int64_t>(kernel->elements_per_row(), 1) == 1;
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace

std::optional<std::string> EmitCompiledLoop(llvm::Module& module, const std::string& while_name,
                                            const ThunkSequence& condition,
                                            const ThunkSequence& body) {
  std::vector<Step> condition_steps = StepsOf(module, condition);
  std::vector<Step> body_steps = StepsOf(module, body);
  const std::vector<int64_t>& predicate = condition.RootLeafIds();
  const std::vector<int64_t>& results = body.RootLeafIds();
  const std::vector<int64_t>& carry = body.ParameterLeafIds();
  if (predicate.size() != 1 || results.size() != carry.size()) return std::nullopt;
  // The carry's copy: leaf i from the body's result to its parameter, unless computed in place;
  // a result that is another leaf's parameter would be overwritten first (staging: not here).
  struct Copy {
    int64_t from, to;
    int64_t bytes;
  };
  std::vector<Copy> copies;
  const std::vector<const hlo::Shape*> shapes = body.ParameterLeafShapes();
  for (size_t i = 0; i < results.size(); ++i) {
    const int64_t bytes = ArrayByteSize(*shapes[i]);
    if (results[i] == carry[i] || bytes == 0) continue;
    for (size_t j = 0; j < carry.size(); ++j) {
      if (j != i && carry[j] == results[i]) return std::nullopt;
    }
    copies.push_back({results[i], carry[i], bytes});
  }

  // A kernel marks its operand loads invariant (targets/llvm/ir_array.cc): true within one call,
  // false across the trips of a loop that writes those operands. A scalar kernel is inlined
  // into the loop, where a marked load would be hoisted out of it, so it drops the mark (it has
  // no loop of its own to vectorize). A kernel over several elements keeps it — it is what lets
  // the vectorizer hoist an index load out of the kernel's own loop — and is called, not
  // inlined.
  for (const std::vector<Step>* steps : {&condition_steps, &body_steps}) {
    for (const Step& step : *steps) {
      if (step.kernel == nullptr || !step.scalar) continue;
      for (llvm::BasicBlock& block : *step.kernel) {
        for (llvm::Instruction& inst : block) {
          if (llvm::isa<llvm::LoadInst>(inst)) {
            inst.setMetadata(llvm::LLVMContext::MD_invariant_load, nullptr);
          }
        }
      }
    }
  }

  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* i32 = b.getInt32Ty();
  auto* type = llvm::FunctionType::get(i64, {ptr, ptr, i64, ptr, ptr}, false);
  auto* callback_type = llvm::FunctionType::get(i32, {ptr, i32, i64}, false);
  const std::string symbol = KernelSymbol(module, while_name, "loop_");
  llvm::Function* loop =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, module);
  llvm::Value* condition_table = loop->getArg(0);
  llvm::Value* body_table = loop->getArg(1);
  llvm::Value* limit = loop->getArg(2);
  llvm::Value* runtime = loop->getArg(3);
  llvm::Value* callback = loop->getArg(4);

  auto* entry = llvm::BasicBlock::Create(context, "entry", loop);
  auto* head = llvm::BasicBlock::Create(context, "head", loop);
  auto* done = llvm::BasicBlock::Create(context, "done", loop);
  auto* runaway = llvm::BasicBlock::Create(context, "runaway", loop);
  auto* failed = llvm::BasicBlock::Create(context, "failed", loop);

  // Entry: every kernel's argument array, built once (the tables do not change in the loop).
  b.SetInsertPoint(entry);
  auto buffer = [&](llvm::Value* table, int64_t id) {
    return b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, table, static_cast<uint64_t>(id)));
  };
  auto arguments = [&](llvm::Value* table, const std::vector<Step>& steps) {
    std::vector<llvm::Value*> arrays;
    for (const Step& step : steps) {
      if (step.kernel == nullptr) {
        arrays.push_back(nullptr);
        continue;
      }
      llvm::Value* array = b.CreateAlloca(llvm::ArrayType::get(ptr, step.buffers.size()), nullptr,
                                          step.kernel->getName() + ".args");
      for (size_t i = 0; i < step.buffers.size(); ++i) {
        b.CreateStore(buffer(table, step.buffers[i]), b.CreateConstInBoundsGEP1_64(ptr, array, i));
      }
      arrays.push_back(array);
    }
    return arrays;
  };
  const std::vector<llvm::Value*> condition_args = arguments(condition_table, condition_steps);
  const std::vector<llvm::Value*> body_args = arguments(body_table, body_steps);
  llvm::Value* stop = buffer(condition_table, predicate[0]);
  std::vector<std::pair<llvm::Value*, llvm::Value*>> moves;
  for (const Copy& copy : copies) {
    moves.push_back({buffer(body_table, copy.from), buffer(body_table, copy.to)});
  }
  b.CreateBr(head);

  // The steps of one sequence in order; a callback that reports an error leaves the loop.
  std::vector<llvm::CallInst*> scalar_calls;
  auto run_steps = [&](const std::vector<Step>& steps, const std::vector<llvm::Value*>& args,
                       int32_t which) {
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kernel != nullptr) {
        llvm::CallInst* call =
            b.CreateCall(steps[i].kernel, {args[i], b.getInt64(0), b.getInt64(steps[i].rows)});
        if (steps[i].scalar) {
          scalar_calls.push_back(call);
        } else {
          call->addFnAttr(llvm::Attribute::NoInline);
        }
        continue;
      }
      llvm::Value* status = b.CreateCall(callback_type, callback,
                                         {runtime, b.getInt32(which), b.getInt64(steps[i].index)});
      auto* next = llvm::BasicBlock::Create(context, "after_thunk", loop);
      b.CreateCondBr(b.CreateICmpNE(status, b.getInt32(0)), failed, next);
      b.SetInsertPoint(next);
    }
  };

  // Head: the condition's steps, then its predicate.
  b.SetInsertPoint(head);
  llvm::PHINode* trips = b.CreatePHI(i64, 2, "trips");
  trips->addIncoming(b.getInt64(0), entry);
  run_steps(condition_steps, condition_args, 0);
  llvm::Value* holds = b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), stop), b.getInt8(0));
  auto* check = llvm::BasicBlock::Create(context, "check", loop);
  b.CreateCondBr(holds, check, done);

  b.SetInsertPoint(check);
  auto* trip = llvm::BasicBlock::Create(context, "trip", loop);
  b.CreateCondBr(b.CreateICmpSGE(trips, limit), runaway, trip);

  // Trip: the body's steps, then the carry's changed leaves back into place.
  b.SetInsertPoint(trip);
  run_steps(body_steps, body_args, 1);
  for (size_t i = 0; i < copies.size(); ++i) {
    b.CreateMemCpy(moves[i].second, llvm::MaybeAlign(1), moves[i].first, llvm::MaybeAlign(1),
                   static_cast<uint64_t>(copies[i].bytes));
  }
  trips->addIncoming(b.CreateAdd(trips, b.getInt64(1)), b.GetInsertBlock());
  b.CreateBr(head);

  b.SetInsertPoint(done);
  b.CreateRet(trips);
  b.SetInsertPoint(runaway);
  b.CreateRet(b.getInt64(-1));
  b.SetInsertPoint(failed);
  b.CreateRet(b.getInt64(-2));
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyFunction(*loop, &os)) {
    throw hlo::Error("cpu backend: LLVM rejected the compiled loop of " + while_name + ": " +
                     os.str());
  }
  // Scalar steps are inlined here rather than left to O3's inliner: parallel code generation
  // (parallel_codegen.h) may put the loop and the kernel into different partitions, where the
  // kernel is only a declaration. A step LLVM declines to inline stays a call.
  for (llvm::CallInst* call : scalar_calls) {
    llvm::InlineFunctionInfo info;
    (void)llvm::InlineFunction(*call, info);
  }
  return symbol;
}

}  // namespace cpu

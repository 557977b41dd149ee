// The topk kernel: one warp per row, k selection rounds (see topk_kernel.h).
#include "targets/gpu/codegen/topk_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <limits>
#include <optional>

#include "hlo/minifloat.h"
#include "targets/gpu/codegen/kernel_ir.h"
#include "targets/gpu/codegen/row_kernel.h"
#include "targets/llvm/loop_emitter.h"

namespace gpu::codegen {

using hlo::PrimitiveType;

namespace {

enum class KeyKind { kSigned, kUnsigned, kFloat };

// How an element's bits become an order-preserving signed 64-bit key; nullopt: not supported.
std::optional<KeyKind> KeyKindOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
      return KeyKind::kSigned;
    case PrimitiveType::kPred:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
      return KeyKind::kUnsigned;
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return KeyKind::kFloat;
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    RETARGET_MINIFLOAT_CASES:
    case PrimitiveType::kU64:
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken:
      break;
  }
  return std::nullopt;
}

// The key of an element's raw bits (an iN). Floats: the sign-extended bits, with all but the sign
// bit flipped when negative, order as signed integers exactly like IEEE total order.
llvm::Value* OrderKey(llvm::IRBuilder<>& b, llvm::Value* raw, KeyKind kind, unsigned bits) {
  if (kind == KeyKind::kUnsigned) return b.CreateZExt(raw, b.getInt64Ty());
  llvm::Value* wide = b.CreateSExtOrBitCast(raw, b.getInt64Ty());
  if (kind == KeyKind::kSigned) return wide;
  const uint64_t magnitude_mask = (bits == 64) ? ~0ull >> 1 : (1ull << (bits - 1)) - 1;
  llvm::Value* negative = b.CreateICmpSLT(wide, b.getInt64(0));
  return b.CreateSelect(negative, b.CreateXor(wide, b.getInt64(magnitude_mask)), wide);
}

// (key_a, index_a) is selected before (key_b, index_b): larger key, then lower index.
llvm::Value* Before(llvm::IRBuilder<>& b, llvm::Value* key_a, llvm::Value* index_a,
                    llvm::Value* key_b, llvm::Value* index_b) {
  return b.CreateOr(b.CreateICmpSGT(key_a, key_b),
                    b.CreateAnd(b.CreateICmpEQ(key_a, key_b), b.CreateICmpSLT(index_a, index_b)));
}

}  // namespace

std::variant<TopKPlan, std::string> PlanTopK(const hlo::Instruction& topk) {
  const hlo::Shape& input = topk.operand(0)->shape();
  const hlo::Shape& result = topk.shape();
  if (!input.IsArray() || input.rank() < 1) return std::string("the operand is not an array");
  if (!result.IsTuple() || result.tuple_shapes.size() != 2)
    return std::string("the result is not (values, indices)");
  if (!KeyKindOf(input.type))
    return "element type " + std::string(hlo::PrimitiveTypeName(input.type)) + " is not ordered";
  if (!input.HasDefaultLayout() || !result.tuple_shapes[0].HasDefaultLayout() ||
      !result.tuple_shapes[1].HasDefaultLayout())
    return std::string("a non-row-major operand or result");
  TopKPlan plan;
  plan.type = input.type;
  plan.length = input.dims.back();
  plan.rows = plan.length == 0 ? 0 : input.ElementCount() / plan.length;
  if (topk.opcode() == hlo::Opcode::kTopK) {
    plan.k = topk.attr<hlo::TopKAttrs>().k;
    plan.largest = topk.attr<hlo::TopKAttrs>().largest;
  } else {  // custom-call "TopK": largest first, k from the result
    plan.k = result.tuple_shapes[0].rank() == input.rank() ? result.tuple_shapes[0].dims.back() : -1;
    plan.largest = true;
  }
  if (plan.length > std::numeric_limits<int32_t>::max())
    return std::string("rows longer than 2^31 - 1 elements (s32 indices)");
  if (plan.k < 0 || plan.k > plan.length)
    return "k=" + std::to_string(plan.k) + " outside [0, " + std::to_string(plan.length) + "]";
  if (result.tuple_shapes[1].type != PrimitiveType::kS32 ||
      result.tuple_shapes[0].type != input.type || result.tuple_shapes[0].dims.back() != plan.k)
    return std::string("the result is not (values, s32 indices) with a last dimension of k");
  return plan;
}

void EmitTopKKernel(llvm::Module& module, const std::string& entry, const TopKPlan& plan) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  std::vector<llvm::Value*> params;
  llvm::Function* function = BeginKernel(b, module, entry, 3, params);
  const unsigned bits = static_cast<unsigned>(hlo::ByteSize(plan.type) * 8);
  llvm::Type* element = b.getIntNTy(bits);  // raw bits: values are copied, never converted
  const KeyKind kind = *KeyKindOf(plan.type);
  llvm::Function* shuffle =
      llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32);
  auto shuffle32 = [&](llvm::Value* word, int offset) {
    return b.CreateCall(
        shuffle, {b.getInt32(0xffffffffu), word, b.getInt32(offset), b.getInt32(kWarpSize - 1)});
  };

  // Round state in entry-block allocas: mem2reg makes them registers (no .local).
  llvm::IRBuilder<> entry_builder(&function->getEntryBlock(), function->getEntryBlock().begin());
  auto slot = [&](const char* name) { return entry_builder.CreateAlloca(b.getInt64Ty(), nullptr, name); };
  llvm::AllocaInst *prev_key = slot("prev_key"), *prev_index = slot("prev_index");
  llvm::AllocaInst *best_key = slot("best_key"), *best_index = slot("best_index");
  auto load = [&](llvm::AllocaInst* a) { return b.CreateLoad(b.getInt64Ty(), a); };

  const auto [thread, block, block_size, grid_size] = ReadLaunchIds(b);
  llvm::Value* warp_size = b.getInt64(kWarpSize);
  llvm::Value* lane = b.CreateURem(thread, warp_size, "lane");
  llvm::Value* first_row =
      b.CreateUDiv(b.CreateAdd(b.CreateMul(block, block_size), thread), warp_size, "first_row");
  llvm::Value* row_stride = b.CreateUDiv(b.CreateMul(block_size, grid_size), warp_size);
  llvm::Value* length = b.getInt64(plan.length);

  llvm_codegen::EmitCountedLoop(b, first_row, b.getInt64(plan.rows), row_stride, "row",
                                [&](llvm::Value* row) {
    llvm::Value* row_start = b.CreateMul(row, length, "row_start", true, true);
    // Before everything: a key above every key, index -1.
    b.CreateStore(b.getInt64(std::numeric_limits<int64_t>::max()), prev_key);
    b.CreateStore(b.getInt64(-1), prev_index);
    llvm_codegen::EmitCountedLoop(b, b.getInt64(0), b.getInt64(plan.k), b.getInt64(1), "round",
                                  [&](llvm::Value* round) {
      b.CreateStore(b.getInt64(std::numeric_limits<int64_t>::min()), best_key);
      b.CreateStore(length, best_index);  // "none yet": every real candidate beats it
      llvm_codegen::EmitCountedLoop(b, lane, length, warp_size, "lanes", [&](llvm::Value* j) {
        llvm::Value* address =
            b.CreateInBoundsGEP(element, params[0], b.CreateAdd(row_start, j, "", true, true));
        llvm::Value* key = OrderKey(b, b.CreateLoad(element, address), kind, bits);
        if (!plan.largest) key = b.CreateNot(key);  // reverses the signed order exactly
        llvm::Value* after_prev = Before(b, load(prev_key), load(prev_index), key, j);
        llvm::Value* take =
            b.CreateAnd(after_prev, Before(b, key, j, load(best_key), load(best_index)));
        b.CreateStore(b.CreateSelect(take, key, load(best_key)), best_key);
        b.CreateStore(b.CreateSelect(take, j, load(best_index)), best_index);
      });
      for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        llvm::Value* key = load(best_key);
        llvm::Value* index = load(best_index);
        llvm::Value* low = shuffle32(b.CreateTrunc(key, b.getInt32Ty()), offset);
        llvm::Value* high = shuffle32(b.CreateTrunc(b.CreateLShr(key, 32), b.getInt32Ty()), offset);
        llvm::Value* other_key = b.CreateOr(b.CreateZExt(low, b.getInt64Ty()),
                                            b.CreateShl(b.CreateZExt(high, b.getInt64Ty()), 32));
        llvm::Value* other_index =
            b.CreateZExt(shuffle32(b.CreateTrunc(index, b.getInt32Ty()), offset), b.getInt64Ty());
        llvm::Value* take = Before(b, other_key, other_index, key, index);
        b.CreateStore(b.CreateSelect(take, other_key, key), best_key);
        b.CreateStore(b.CreateSelect(take, other_index, index), best_index);
      }
      b.CreateStore(load(best_key), prev_key);
      b.CreateStore(load(best_index), prev_index);
      auto* store = llvm::BasicBlock::Create(context, "lane0.store", function);
      auto* after = llvm::BasicBlock::Create(context, "lane0.after", function);
      b.CreateCondBr(b.CreateICmpEQ(lane, b.getInt64(0)), store, after);
      b.SetInsertPoint(store);
      llvm::Value* chosen = load(best_index);
      llvm::Value* source =
          b.CreateInBoundsGEP(element, params[0], b.CreateAdd(row_start, chosen, "", true, true));
      llvm::Value* out = b.CreateAdd(b.CreateMul(row, b.getInt64(plan.k), "", true, true), round,
                                     "", true, true);
      b.CreateStore(b.CreateLoad(element, source), b.CreateInBoundsGEP(element, params[1], out));
      b.CreateStore(b.CreateTrunc(chosen, b.getInt32Ty()),
                    b.CreateInBoundsGEP(b.getInt32Ty(), params[2], out));
      b.CreateBr(after);
      b.SetInsertPoint(after);
    });
  });
  b.CreateRetVoid();
}

}  // namespace gpu::codegen

// IrType, IrArray and the shared emission helpers of elemental_util.h.
//
// Physical offsets follow the shape's minor_to_major layout (the first listed dimension varies
// fastest); pred lives in memory as one byte (0/1) and in registers as i1; bf16 and f16 are
// loaded and stored as LLVM's bfloat / half (2 bytes each).
#include <string>

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include "hlo/minifloat.h"
#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"

namespace llvm_codegen {

using hlo::PrimitiveType;

llvm::Type* IrType(PrimitiveType type, llvm::LLVMContext& context) {
  switch (type) {
    case PrimitiveType::kPred:
      return llvm::Type::getInt1Ty(context);
    case PrimitiveType::kS8:
    case PrimitiveType::kU8:
      return llvm::Type::getInt8Ty(context);
    case PrimitiveType::kS16:
    case PrimitiveType::kU16:
      return llvm::Type::getInt16Ty(context);
    case PrimitiveType::kS32:
    case PrimitiveType::kU32:
      return llvm::Type::getInt32Ty(context);
    case PrimitiveType::kS64:
    case PrimitiveType::kU64:
      return llvm::Type::getInt64Ty(context);
    case PrimitiveType::kF16:
      return llvm::Type::getHalfTy(context);
    case PrimitiveType::kBF16:
      return llvm::Type::getBFloatTy(context);
    case PrimitiveType::kF32:
      return llvm::Type::getFloatTy(context);
    case PrimitiveType::kF64:
      return llvm::Type::getDoubleTy(context);
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    RETARGET_MINIFLOAT_CASES:
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken:
      break;
  }
  throw hlo::Error("no LLVM element type for " + std::string(hlo::PrimitiveTypeName(type)));
}

namespace {

void CheckRank(const hlo::Shape& shape, const IrIndex& index) {
  if (static_cast<int64_t>(index.size()) != shape.rank()) {
    throw hlo::Error("index of rank " + std::to_string(index.size()) + " used on " +
                     shape.ToString());
  }
}

}  // namespace

llvm::Value* IrArray::LinearIndex(llvm::IRBuilder<>& b, const IrIndex& index) const {
  CheckRank(shape_, index);
  // No arithmetic for unit strides and unit dimensions: the same index Values come back, which
  // lets memoization recognize the same element reached through reshapes (elemental_emitter.cc).
  llvm::Value* linear = nullptr;
  int64_t stride = 1;
  for (int64_t dim : shape_.EffectiveMinorToMajor()) {
    const int64_t extent = shape_.dims[static_cast<size_t>(dim)];
    if (extent != 1) {
      llvm::Value* term = index[static_cast<size_t>(dim)];
      if (stride != 1) term = b.CreateMul(term, b.getInt64(stride));
      linear = linear == nullptr ? term : b.CreateAdd(linear, term);
    }
    stride *= extent;
  }
  return linear == nullptr ? b.getInt64(0) : linear;
}

IrIndex IrArray::DelinearizeIndex(llvm::IRBuilder<>& b, llvm::Value* linear) const {
  IrIndex index(static_cast<size_t>(shape_.rank()), b.getInt64(0));
  // An empty array has no element to address; constant zeros avoid emitting a division by 0.
  if (shape_.ElementCount() <= 0) return index;
  const std::vector<int64_t> minor_to_major = shape_.EffectiveMinorToMajor();
  int64_t stride = 1;
  for (size_t k = 0; k < minor_to_major.size(); ++k) {
    const int64_t dim = minor_to_major[k];
    const int64_t extent = shape_.dims[static_cast<size_t>(dim)];
    if (extent != 1) {
      llvm::Value* quotient = stride == 1 ? linear : b.CreateUDiv(linear, b.getInt64(stride));
      // The most major dimension needs no remainder: the linear index is in bounds.
      const bool most_major = k + 1 == minor_to_major.size();
      index[static_cast<size_t>(dim)] =
          most_major ? quotient : b.CreateURem(quotient, b.getInt64(extent));
    }
    stride *= extent;
  }
  return index;
}

llvm::Value* IrArray::EmitLoad(llvm::IRBuilder<>& b, const IrIndex& index) const {
  llvm::Type* memory_type = detail::MemoryType(shape_.type, b.getContext());
  llvm::Value* address = b.CreateInBoundsGEP(memory_type, base_, LinearIndex(b, index));
  llvm::LoadInst* load = b.CreateAlignedLoad(
      memory_type, address, llvm::Align(static_cast<uint64_t>(hlo::ByteSize(shape_.type))));
  if (read_only_) {
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  }
  if (shape_.type == PrimitiveType::kPred) return b.CreateICmpNE(load, b.getInt8(0));
  return load;
}

void IrArray::EmitStore(llvm::IRBuilder<>& b, const IrIndex& index, llvm::Value* value) const {
  llvm::Type* memory_type = detail::MemoryType(shape_.type, b.getContext());
  llvm::Value* address = b.CreateInBoundsGEP(memory_type, base_, LinearIndex(b, index));
  if (shape_.type == PrimitiveType::kPred) value = b.CreateZExt(value, b.getInt8Ty());
  b.CreateAlignedStore(value, address,
                       llvm::Align(static_cast<uint64_t>(hlo::ByteSize(shape_.type))));
}

namespace detail {

llvm::Type* MemoryType(PrimitiveType type, llvm::LLVMContext& context) {
  if (type == PrimitiveType::kPred) return llvm::Type::getInt8Ty(context);
  return IrType(type, context);
}

llvm::Type* ComputeType(PrimitiveType type, llvm::LLVMContext& context) {
  return IsNarrowFloat(type) ? llvm::Type::getFloatTy(context) : IrType(type, context);
}

llvm::Value* ClampStartIndex(llvm::IRBuilder<>& b, llvm::Value* raw, hlo::PrimitiveType type,
                             int64_t highest) {
  const bool is_signed = hlo::IsSignedInteger(type);
  llvm::Value* value = is_signed ? b.CreateSExtOrTrunc(raw, b.getInt64Ty())
                                 : b.CreateZExtOrTrunc(raw, b.getInt64Ty());
  llvm::Value* limit = I64(b, highest);
  llvm::Value* above = is_signed ? b.CreateICmpSGT(value, limit) : b.CreateICmpUGT(value, limit);
  value = b.CreateSelect(above, limit, value);
  return b.CreateSelect(b.CreateICmpSLT(value, I64(b, 0)), I64(b, 0), value);
}

llvm::Value* BF16ToF32(llvm::IRBuilder<>& b, llvm::Value* value) {
  // A bf16 is the upper half of an f32: shift its bits into place (exact, NaN payload kept).
  llvm::Value* bits = b.CreateZExt(b.CreateBitCast(value, b.getInt16Ty()), b.getInt32Ty());
  return b.CreateBitCast(b.CreateShl(bits, 16), b.getFloatTy());
}

llvm::Value* F32ToBF16(llvm::IRBuilder<>& b, llvm::Value* value) {
  // Round to nearest even on the bit pattern: add 0x7fff plus the lowest kept bit, drop 16 bits.
  // A NaN would round into another NaN or inf, so it keeps its top bits and is made quiet.
  llvm::Value* bits = b.CreateBitCast(value, b.getInt32Ty());
  llvm::Value* magnitude = b.CreateAnd(bits, b.getInt32(0x7fffffff));
  llvm::Value* is_nan = b.CreateICmpUGT(magnitude, b.getInt32(0x7f800000));
  llvm::Value* lowest_kept = b.CreateAnd(b.CreateLShr(bits, 16), b.getInt32(1));
  llvm::Value* rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lowest_kept, b.getInt32(0x7fff))), 16);
  llvm::Value* quiet_nan = b.CreateOr(b.CreateLShr(bits, 16), b.getInt32(0x40));
  llvm::Value* result = b.CreateTrunc(b.CreateSelect(is_nan, quiet_nan, rounded), b.getInt16Ty());
  return b.CreateBitCast(result, b.getBFloatTy());
}

llvm::Value* Widen(llvm::IRBuilder<>& b, llvm::Value* value, PrimitiveType type) {
  if (type == PrimitiveType::kBF16) return BF16ToF32(b, value);
  if (type == PrimitiveType::kF16) return b.CreateFPExt(value, b.getFloatTy());
  return value;
}

llvm::Value* Narrow(llvm::IRBuilder<>& b, llvm::Value* value, PrimitiveType type) {
  if (type == PrimitiveType::kBF16) return F32ToBF16(b, value);
  if (type == PrimitiveType::kF16) return b.CreateFPTrunc(value, b.getHalfTy());
  return value;
}

void Fail(const hlo::Instruction& inst, std::string_view why) {
  throw hlo::Error(inst.location(), "cannot emit '" + inst.name() + "' (" +
                                        std::string(hlo::OpcodeName(inst.opcode())) +
                                        "): " + std::string(why));
}

std::vector<llvm::BasicBlock*> DominatingBlocks(llvm::IRBuilder<>& b,
                                                const DominatorMap& dominators) {
  std::vector<llvm::BasicBlock*> blocks = {b.GetInsertBlock()};
  for (auto found = dominators.find(blocks.back()); found != dominators.end();
       found = dominators.find(blocks.back())) {
    blocks.push_back(found->second);
  }
  return blocks;
}

llvm::BasicBlock* SplitAtInsertPoint(llvm::IRBuilder<>& b, std::string_view name,
                                     DominatorMap* dominators) {
  llvm::BasicBlock* current = b.GetInsertBlock();
  llvm::BasicBlock* rest = llvm::BasicBlock::Create(b.getContext(), llvm::Twine(name),
                                                    current->getParent(), current->getNextNode());
  if (b.GetInsertPoint() != current->end()) {
    rest->splice(rest->end(), current, b.GetInsertPoint(), current->end());
    // Successors' PHIs now come from `rest`, which holds the moved terminator.
    rest->replaceSuccessorsPhiUsesWith(current, rest);
  }
  b.SetInsertPoint(current);
  // Every construct built on a split enters `rest` only through `current`.
  if (dominators != nullptr) (*dominators)[rest] = current;
  return rest;
}

llvm::Value* EmitIfThenElse(llvm::IRBuilder<>& b, llvm::Value* condition, llvm::Type* type,
                            const std::function<llvm::Value*()>& then_value,
                            const std::function<llvm::Value*()>& else_value,
                            DominatorMap* dominators) {
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* branch = b.GetInsertBlock();
  llvm::BasicBlock* merge = SplitAtInsertPoint(b, "if.merge", dominators);
  llvm::Function* function = merge->getParent();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context, "if.then", function, merge);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(context, "if.else", function, merge);
  b.CreateCondBr(condition, then_block, else_block);
  if (dominators != nullptr) {
    (*dominators)[then_block] = branch;
    (*dominators)[else_block] = branch;
  }

  b.SetInsertPoint(then_block);
  llvm::Value* on_true = then_value();
  llvm::BasicBlock* then_end = b.GetInsertBlock();
  b.CreateBr(merge);
  b.SetInsertPoint(else_block);
  llvm::Value* on_false = else_value();
  llvm::BasicBlock* else_end = b.GetInsertBlock();
  b.CreateBr(merge);

  b.SetInsertPoint(merge, merge->begin());
  llvm::PHINode* phi = b.CreatePHI(type, 2);
  phi->addIncoming(on_true, then_end);
  phi->addIncoming(on_false, else_end);
  return phi;
}

void EmitForLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, std::string_view name,
                 const std::function<void(llvm::Value*)>& body, DominatorMap* dominators) {
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* exit = SplitAtInsertPoint(b, std::string(name) + ".exit", dominators);
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  llvm::Function* function = exit->getParent();
  llvm::BasicBlock* header =
      llvm::BasicBlock::Create(context, std::string(name) + ".header", function, exit);
  llvm::BasicBlock* body_block =
      llvm::BasicBlock::Create(context, std::string(name) + ".body", function, exit);
  b.CreateBr(header);
  if (dominators != nullptr) {
    (*dominators)[header] = preheader;
    (*dominators)[body_block] = header;
    (*dominators)[exit] = header;
  }

  b.SetInsertPoint(header);
  llvm::PHINode* induction = b.CreatePHI(b.getInt64Ty(), 2, std::string(name) + ".i");
  induction->addIncoming(start, preheader);
  b.CreateCondBr(b.CreateICmpSLT(induction, end), body_block, exit);

  b.SetInsertPoint(body_block);
  body(induction);
  llvm::Value* next = b.CreateAdd(induction, b.getInt64(1));
  induction->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);

  b.SetInsertPoint(exit, exit->begin());
}

llvm::AllocaInst* EntryAlloca(llvm::IRBuilder<>& b, llvm::Type* type, std::string_view name) {
  llvm::BasicBlock& entry = b.GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> entry_builder(&entry, entry.getFirstInsertionPt());
  return entry_builder.CreateAlloca(type, nullptr, llvm::Twine(name));
}

}  // namespace detail
}  // namespace llvm_codegen

// dot as an element generator (elemental_emitter.h, MakeDotGenerator): for one output index, a
// loop nest over the contracting dimensions that accumulates the products.
//
// Guarantees: the interpreter's dot (hlo/evaluator_contraction.cc): the output index is XLA's
// (batch dims in lhs_batch order, then the lhs free dims, then the rhs free dims, each in
// operand order); products are summed one at a time in row-major order of the contracting
// dims (lhs_contracting order) — a backend that lets its vectorizer reassociate reductions
// (the CPU's jit.cc) may reorder that sum; the accumulator is f64 when the result or an
// operand is f64, else f32 for floats, and wrapping 64-bit arithmetic for integers (equal,
// modulo 2^bits, to wrapping in the result type); the sum is converted to the result type
// once. CanGenerateDot says which element types it covers.
#include <algorithm>

#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"

namespace llvm_codegen {

using hlo::Instruction;
using hlo::PrimitiveType;

namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool IsDotFloat(PrimitiveType type) {
  return type == PrimitiveType::kF64 || type == PrimitiveType::kF32 ||
         type == PrimitiveType::kBF16 || type == PrimitiveType::kF16;
}

// The interpreter's accumulator (hlo/evaluator_family_util.h, ChooseAccumulator): f64 when
// either side is f64, f32 for the other floats, wrapping 64-bit integers for integer results.
PrimitiveType AccumulatorType(const Instruction& dot) {
  const PrimitiveType result = dot.shape().type;
  if (!IsDotFloat(result)) return PrimitiveType::kS64;
  for (PrimitiveType type : {result, dot.operand(0)->shape().type, dot.operand(1)->shape().type})
    if (type == PrimitiveType::kF64) return PrimitiveType::kF64;
  return PrimitiveType::kF32;
}

}  // namespace

bool CanGenerateDot(const Instruction& dot) {
  if (dot.opcode() != hlo::Opcode::kDot || dot.operand_count() != 2 || !dot.shape().IsArray() ||
      !dot.has_attr<hlo::DotAttrs>()) {
    return false;
  }
  const PrimitiveType result = dot.shape().type;
  const bool float_result = IsDotFloat(result);
  if (!float_result && !(hlo::IsInteger(result) && result != PrimitiveType::kPred)) return false;
  for (const Instruction* operand : dot.operands()) {
    const PrimitiveType type = operand->shape().type;
    const bool ok = float_result ? IsDotFloat(type)
                                 : hlo::IsInteger(type) && type != PrimitiveType::kPred;
    if (!operand->shape().IsArray() || !ok) return false;
  }
  const hlo::DotDimensionNumbers& d = dot.attr<hlo::DotAttrs>().dnums;
  return d.lhs_batch.size() == d.rhs_batch.size() &&
         d.lhs_contracting.size() == d.rhs_contracting.size();
}

ElementGenerator ElementalEmitter::MakeDotGenerator(const Instruction& dot, ElementGenerator lhs,
                                                    ElementGenerator rhs) {
  if (!CanGenerateDot(dot)) detail::Fail(dot, "no generated form for this dot's types");
  return [this, &dot, lhs, rhs](const IrIndex& out) -> llvm::Value* {
    const hlo::DotDimensionNumbers& d = dot.attr<hlo::DotAttrs>().dnums;
    const hlo::Shape& lhs_shape = dot.operand(0)->shape();
    const hlo::Shape& rhs_shape = dot.operand(1)->shape();
    const PrimitiveType accumulator = AccumulatorType(dot);
    llvm::Type* acc_type = IrType(accumulator, b_.getContext());
    llvm::AllocaInst* sum = detail::EntryAlloca(b_, acc_type, dot.name() + ".acc");
    b_.CreateStore(hlo::IsInteger(accumulator) ? llvm::Constant::getNullValue(acc_type)
                                               : llvm::ConstantFP::get(acc_type, 0.0),
                   sum);
    // Operand indices: batch and free dims from the output index, contracting ones from the
    // loop nest below.
    IrIndex lhs_index(lhs_shape.dims.size()), rhs_index(rhs_shape.dims.size());
    size_t next = d.lhs_batch.size();
    for (size_t p = 0; p < d.lhs_batch.size(); ++p) {
      lhs_index[static_cast<size_t>(d.lhs_batch[p])] = out.at(p);
      rhs_index[static_cast<size_t>(d.rhs_batch[p])] = out.at(p);
    }
    for (int64_t dim = 0; dim < lhs_shape.rank(); ++dim) {
      if (!Contains(d.lhs_batch, dim) && !Contains(d.lhs_contracting, dim))
        lhs_index[static_cast<size_t>(dim)] = out.at(next++);
    }
    for (int64_t dim = 0; dim < rhs_shape.rank(); ++dim) {
      if (!Contains(d.rhs_batch, dim) && !Contains(d.rhs_contracting, dim))
        rhs_index[static_cast<size_t>(dim)] = out.at(next++);
    }
    std::function<void(size_t)> nest = [&](size_t level) {
      if (level == d.lhs_contracting.size()) {
        llvm::Value* a = detail::EmitConvert(b_, lhs(lhs_index), lhs_shape.type, accumulator);
        llvm::Value* x = detail::EmitConvert(b_, rhs(rhs_index), rhs_shape.type, accumulator);
        llvm::Value* total = b_.CreateLoad(acc_type, sum);
        const bool integer = hlo::IsInteger(accumulator);
        llvm::Value* product = integer ? b_.CreateMul(a, x) : b_.CreateFMul(a, x);
        b_.CreateStore(integer ? b_.CreateAdd(total, product) : b_.CreateFAdd(total, product),
                       sum);
        return;
      }
      const auto lhs_dim = static_cast<size_t>(d.lhs_contracting[level]);
      const auto rhs_dim = static_cast<size_t>(d.rhs_contracting[level]);
      detail::EmitForLoop(
          b_, b_.getInt64(0), detail::I64(b_, lhs_shape.dims[lhs_dim]), dot.name() + ".k",
          [&](llvm::Value* k) {
            lhs_index[lhs_dim] = k;
            rhs_index[rhs_dim] = k;
            nest(level + 1);
          },
          &dominating_block_);
    };
    nest(0);
    return detail::EmitConvert(b_, b_.CreateLoad(acc_type, sum), accumulator, dot.shape().type);
  };
}

}  // namespace llvm_codegen

// Data movement: broadcast, reshape, bitcast, transpose, slice, reverse, concatenate, pad,
// dynamic-slice, iota and constant. Each maps the result index to an operand index (i64 math).
//
// Guarantees:
//   - No operand is ever read outside its bounds: concatenate and pad branch to the operand
//     that owns the element (a padded element never evaluates the operand at all, so a pad of
//     an empty operand is fine); dynamic-slice clamps its starts into [0, dim - size].
//   - bitcast is a reshape when both layouts are the default, otherwise the element at physical
//     position p of the result is the element at physical position p of the operand.
//   - Scalar constants are immediates; array constants are private constant globals holding the
//     literal's row-major data, created once per instruction.
#include <algorithm>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>

#include "targets/llvm/elemental_emitter.h"
#include "targets/llvm/elemental_util.h"

namespace llvm_codegen {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

// Row-major (default layout) view of `dims`, for reshape's logical linearization.
IrArray RowMajorView(PrimitiveType type, const std::vector<int64_t>& dims) {
  return IrArray(nullptr, hlo::Shape::Array(type, dims));
}

// The constant of one element stored at `bytes` (literal storage, little-endian).
llvm::Constant* ElementConstant(llvm::LLVMContext& context, PrimitiveType type,
                                const uint8_t* bytes) {
  const int size = hlo::ByteSize(type);
  uint64_t raw = 0;
  for (int k = 0; k < size; ++k) raw |= static_cast<uint64_t>(bytes[k]) << (8 * k);
  const unsigned bits = static_cast<unsigned>(size * 8);
  switch (type) {
    case PrimitiveType::kPred:
      return llvm::ConstantInt::get(llvm::Type::getInt1Ty(context), raw != 0);
    case PrimitiveType::kF16:
      return llvm::ConstantFP::get(
          context, llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(bits, raw)));
    case PrimitiveType::kBF16:
      return llvm::ConstantFP::get(context,
                                   llvm::APFloat(llvm::APFloat::BFloat(), llvm::APInt(bits, raw)));
    case PrimitiveType::kF32:
      return llvm::ConstantFP::get(
          context, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(bits, raw)));
    case PrimitiveType::kF64:
      return llvm::ConstantFP::get(
          context, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(bits, raw)));
    default:
      return llvm::ConstantInt::get(IrType(type, context), raw);
  }
}

// Result index -> value, selecting among concatenated operands by index[dim].
llvm::Value* EmitConcatenate(llvm::IRBuilder<>& b, const Instruction& inst,
                             const std::vector<ElementGenerator>& operands, const IrIndex& index,
                             size_t first, int64_t offset, int64_t dim,
                             detail::DominatorMap* dominators) {
  // Skip empty operands; the last non-empty one owns every remaining index.
  size_t k = first;
  while (k + 1 < operands.size() &&
         inst.operand(static_cast<int64_t>(k))->shape().dims[static_cast<size_t>(dim)] == 0)
    ++k;
  const int64_t extent =
      inst.operand(static_cast<int64_t>(k))->shape().dims[static_cast<size_t>(dim)];
  auto read = [&, k]() {
    IrIndex local = index;
    local[static_cast<size_t>(dim)] =
        b.CreateSub(index[static_cast<size_t>(dim)], detail::I64(b, offset));
    return operands[k](local);
  };
  if (k + 1 == operands.size()) return read();
  llvm::Value* here =
      b.CreateICmpSLT(index[static_cast<size_t>(dim)], detail::I64(b, offset + extent));
  return detail::EmitIfThenElse(
      b, here, IrType(inst.shape().type, b.getContext()), read,
      [&, k]() {
        return EmitConcatenate(b, inst, operands, index, k + 1, offset + extent, dim, dominators);
      },
      dominators);
}

}  // namespace

ElementGenerator ElementalEmitter::MakeDataMovementGenerator(
    const Instruction& inst, std::vector<ElementGenerator> operands) {
  llvm::IRBuilder<>& b = b_;
  const hlo::Shape& shape = inst.shape();
  switch (inst.opcode()) {
    case Opcode::kBroadcast: {
      const std::vector<int64_t> dims = inst.attr<hlo::DimensionsAttrs>().dimensions;
      if (static_cast<int64_t>(dims.size()) != inst.operand(0)->shape().rank()) {
        detail::Fail(inst, "dimensions={...} does not match the operand's rank");
      }
      for (int64_t d : dims) {
        if (d < 0 || d >= shape.rank()) detail::Fail(inst, "broadcast dimension out of range");
      }
      return [operand = operands[0], dims](const IrIndex& index) {
        IrIndex source;
        for (int64_t d : dims) source.push_back(index[static_cast<size_t>(d)]);
        return operand(source);
      };
    }
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      const hlo::Shape& in = inst.operand(0)->shape();
      if (in.ElementCount() != shape.ElementCount()) detail::Fail(inst, "element counts differ");
      if (hlo::ByteSize(in.type) != hlo::ByteSize(shape.type))
        detail::Fail(inst, "element sizes differ");
      const bool physical =
          inst.opcode() == Opcode::kBitcast && !(in.HasDefaultLayout() && shape.HasDefaultLayout());
      const PrimitiveType from = in.type;
      const PrimitiveType to = shape.type;
      // Reshape: row-major linear index; bitcast: physical position in each layout.
      IrArray result_view = physical ? IrArray(nullptr, shape) : RowMajorView(to, shape.dims);
      IrArray operand_view = physical ? IrArray(nullptr, in) : RowMajorView(from, in.dims);
      // A reshape that only adds or removes unit dimensions moves index Values without any
      // arithmetic (so memoization still sees the same element; common around reductions).
      std::vector<int64_t> result_non_unit, operand_non_unit;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        if (shape.dims[static_cast<size_t>(d)] != 1) result_non_unit.push_back(d);
      }
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (in.dims[static_cast<size_t>(d)] != 1) operand_non_unit.push_back(d);
      }
      bool unit_only = !physical && result_non_unit.size() == operand_non_unit.size();
      for (size_t k = 0; unit_only && k < result_non_unit.size(); ++k) {
        unit_only = shape.dims[static_cast<size_t>(result_non_unit[k])] ==
                    in.dims[static_cast<size_t>(operand_non_unit[k])];
      }
      const size_t operand_rank = in.dims.size();
      return [&b, operand = operands[0], result_view, operand_view, unit_only, result_non_unit,
              operand_non_unit, operand_rank, from, to](const IrIndex& index) {
        IrIndex source;
        if (unit_only) {
          source.assign(operand_rank, b.getInt64(0));
          for (size_t k = 0; k < result_non_unit.size(); ++k) {
            source[static_cast<size_t>(operand_non_unit[k])] =
                index[static_cast<size_t>(result_non_unit[k])];
          }
        } else {
          source = operand_view.DelinearizeIndex(b, result_view.LinearIndex(b, index));
        }
        return detail::EmitBitcastSameWidth(b, operand(source), from, to);
      };
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t> permutation = inst.attr<hlo::DimensionsAttrs>().dimensions;
      std::vector<int64_t> sorted = permutation;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted[i] != static_cast<int64_t>(i) ||
            sorted.size() != static_cast<size_t>(shape.rank())) {
          detail::Fail(inst, "dimensions={...} is not a permutation of the result's dimensions");
        }
      }
      return [operand = operands[0], permutation](const IrIndex& index) {
        IrIndex source(index.size());
        for (size_t i = 0; i < permutation.size(); ++i)
          source[static_cast<size_t>(permutation[i])] = index[i];
        return operand(source);
      };
    }
    case Opcode::kSlice: {
      const std::vector<hlo::SliceDim> dims = inst.attr<hlo::SliceAttrs>().dims;
      if (static_cast<int64_t>(dims.size()) != shape.rank())
        detail::Fail(inst, "slice rank mismatch");
      return [&b, operand = operands[0], dims](const IrIndex& index) {
        IrIndex source(index.size());
        for (size_t d = 0; d < dims.size(); ++d) {
          source[d] = b.CreateAdd(b.CreateMul(index[d], detail::I64(b, dims[d].stride)),
                                  detail::I64(b, dims[d].start));
        }
        return operand(source);
      };
    }
    case Opcode::kReverse: {
      const std::vector<int64_t> reversed = inst.attr<hlo::DimensionsAttrs>().dimensions;
      for (int64_t d : reversed) {
        if (d < 0 || d >= shape.rank()) detail::Fail(inst, "reversed dimension out of range");
      }
      return [&b, operand = operands[0], reversed, dims = shape.dims](const IrIndex& index) {
        IrIndex source = index;
        for (int64_t d : reversed) {
          source[static_cast<size_t>(d)] = b.CreateSub(
              detail::I64(b, dims[static_cast<size_t>(d)] - 1), index[static_cast<size_t>(d)]);
        }
        return operand(source);
      };
    }
    case Opcode::kConcatenate: {
      const std::vector<int64_t>& dims = inst.attr<hlo::DimensionsAttrs>().dimensions;
      if (dims.size() != 1 || dims[0] < 0 || dims[0] >= shape.rank()) {
        detail::Fail(inst, "needs one concatenate dimension within the rank");
      }
      return [&b, &inst, operands, dim = dims[0],
              dominators = &dominating_block_](const IrIndex& index) {
        return EmitConcatenate(b, inst, operands, index, 0, 0, dim, dominators);
      };
    }
    case Opcode::kPad: {
      const std::vector<hlo::PadDim> pads = inst.attr<hlo::PadAttrs>().dims;
      const std::vector<int64_t> in_dims = inst.operand(0)->shape().dims;
      if (pads.size() != in_dims.size()) detail::Fail(inst, "padding rank mismatch");
      for (const hlo::PadDim& pad : pads) {
        if (pad.interior < 0) detail::Fail(inst, "interior padding must be >= 0");
      }
      llvm::Type* type = IrType(shape.type, b.getContext());
      return [&b, operand = operands[0], padding = operands[1], pads, in_dims, type,
              dominators = &dominating_block_](const IrIndex& index) {
        // Element i of a padded dimension comes from operand position (i - lo) / (interior + 1)
        // when that division is exact and lands inside the operand.
        llvm::Value* inside = b.getTrue();
        IrIndex source(index.size());
        for (size_t d = 0; d < pads.size(); ++d) {
          const int64_t step = pads[d].interior + 1;
          const int64_t span = in_dims[d] == 0 ? 0 : (in_dims[d] - 1) * step + 1;
          llvm::Value* t = b.CreateSub(index[d], detail::I64(b, pads[d].lo));
          inside = b.CreateAnd(inside, b.CreateAnd(b.CreateICmpSGE(t, detail::I64(b, 0)),
                                                   b.CreateICmpSLT(t, detail::I64(b, span))));
          if (step == 1) {
            source[d] = t;
          } else {
            inside = b.CreateAnd(
                inside, b.CreateICmpEQ(b.CreateSRem(t, detail::I64(b, step)), detail::I64(b, 0)));
            source[d] = b.CreateSDiv(t, detail::I64(b, step));
          }
        }
        return detail::EmitIfThenElse(
            b, inside, type, [&] { return operand(source); }, [&] { return padding(IrIndex{}); },
            dominators);
      };
    }
    case Opcode::kDynamicSlice: {
      const hlo::Shape& in = inst.operand(0)->shape();
      const bool vector_form =
          inst.operand_count() == 2 && inst.operand(1)->shape().rank() == 1 && in.rank() != 1;
      if (!vector_form && inst.operand_count() != in.rank() + 1)
        detail::Fail(inst, "needs one start index per dimension");
      if (shape.rank() != in.rank()) detail::Fail(inst, "result rank differs from the operand's");
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (shape.dims[static_cast<size_t>(d)] > in.dims[static_cast<size_t>(d)])
          detail::Fail(inst, "slice larger than the operand");
      }
      for (int64_t k = 1; k < inst.operand_count(); ++k) {
        if (!hlo::IsInteger(inst.operand(k)->shape().type))
          detail::Fail(inst, "start indices must be integers");
      }
      const PrimitiveType index_type = inst.operand(1)->shape().type;
      return [&b, operands, vector_form, index_type, in_dims = in.dims,
              sizes = shape.dims](const IrIndex& index) {
        IrIndex source(index.size());
        for (size_t d = 0; d < index.size(); ++d) {
          llvm::Value* start =
              vector_form ? operands[1](IrIndex{b.getInt64(d)}) : operands[d + 1](IrIndex{});
          start = detail::ClampStartIndex(b, start, index_type, in_dims[d] - sizes[d]);
          source[d] = b.CreateAdd(start, index[d]);
        }
        return operands[0](source);
      };
    }
    case Opcode::kIota: {
      const int64_t dimension = inst.attr<hlo::IotaAttrs>().dimension;
      if (dimension < 0 || dimension >= shape.rank())
        detail::Fail(inst, "iota_dimension out of range");
      return [&b, dimension, type = shape.type](const IrIndex& index) {
        return detail::EmitConvert(b, index[static_cast<size_t>(dimension)], PrimitiveType::kS64,
                                   type);
      };
    }
    default:
      break;
  }
  detail::Fail(inst, "no data-movement rule");
}

ElementGenerator ElementalEmitter::MakeConstantGenerator(const Instruction& inst) {
  const hlo::Literal& literal = inst.attr<hlo::ConstantAttrs>().literal;
  const hlo::Shape& shape = inst.shape();
  const int64_t count = shape.ElementCount();
  const int64_t element_size = hlo::ByteSize(shape.type);
  if (!literal.shape().IsArray() || literal.shape().type != shape.type ||
      literal.element_count() != count ||
      static_cast<int64_t>(literal.bytes().size()) != count * element_size) {
    detail::Fail(inst, "literal does not match the shape " + shape.ToString());
  }
  llvm::LLVMContext& context = module_.getContext();
  if (count == 1) {
    llvm::Constant* value = ElementConstant(context, shape.type, literal.bytes().data());
    return [value](const IrIndex&) { return value; };
  }
  if (count == 0) {
    llvm::Constant* value = llvm::Constant::getNullValue(IrType(shape.type, context));
    return [value](const IrIndex&) { return value; };
  }
  llvm::GlobalVariable*& global = constant_globals_[&inst];
  if (global == nullptr) {
    const auto& bytes = literal.bytes();
    llvm::Constant* data = llvm::ConstantDataArray::getRaw(
        llvm::StringRef(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        static_cast<uint64_t>(count), detail::MemoryType(shape.type, context));
    global = new llvm::GlobalVariable(module_, data->getType(), /*isConstant=*/true,
                                      llvm::GlobalValue::PrivateLinkage, data, inst.name());
    global->setAlignment(llvm::Align(16));
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  // Literal data is row-major whatever the layout says: read it with the default layout.
  IrArray array(global, hlo::Shape::Array(shape.type, shape.dims));
  array.set_read_only(true);
  return [this, array](const IrIndex& index) { return array.EmitLoad(b_, index); };
}

}  // namespace llvm_codegen

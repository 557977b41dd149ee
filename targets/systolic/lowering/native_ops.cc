// SupportFor and IntrinsicHostReason (native_ops.h). One exhaustive switch over the opcodes (no
// `default:`), so a new opcode fails to compile until the lowering's answer for it is decided.
#include "targets/systolic/lowering/native_ops.h"

#include <functional>

#include "compiler/target_description.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/lowering/gather_plan.h"
#include "targets/systolic/lowering/scatter_plan.h"
#include "targets/systolic/lowering/sort_plan.h"
#include "targets/systolic/lowering/requantize_pattern.h"
#include "targets/systolic/lowering/row_op_table.h"

namespace systolic::lowering {
namespace {

using hlo::Opcode;
using hlo::PrimitiveType;

// The element types the vector unit holds (IsaDtype) for which `keep` says yes.
std::set<PrimitiveType> VectorTypesWhere(const std::function<bool(Dtype)>& keep) {
  static constexpr PrimitiveType kAllTypes[] = {
#define RETARGET_PRIMITIVE_TYPE(e, name, proto, bytes, ctype) PrimitiveType::e,
#include "hlo/types.def"
#undef RETARGET_PRIMITIVE_TYPE
  };
  std::set<PrimitiveType> types;
  for (PrimitiveType type : kAllTypes) {
    if (std::optional<Dtype> dtype = IsaDtype(type); dtype && keep(*dtype)) types.insert(type);
  }
  return types;
}

// The types on which the row-op table maps `op` (row_op_table.h).
std::set<PrimitiveType> RowOpTypes(Opcode op) {
  return VectorTypesWhere([op](Dtype dtype) {
    return ElementwiseRowOp(op, hlo::CompareAttrs{}, dtype, nullptr).has_value();
  });
}

OpcodeSupport Native(std::set<PrimitiveType> types) { return {false, std::move(types), ""}; }
OpcodeSupport EveryType() { return {true, {}, ""}; }
OpcodeSupport Host(std::string why) { return {false, {}, std::move(why)}; }

bool IsRequantizeConvert(const hlo::Instruction* inst) {
  return inst->opcode() == Opcode::kConvert &&
         (MatchRequantize(*inst).has_value() || MatchIntegerRequantize(*inst).has_value());
}

}  // namespace

std::optional<OpcodeSupport> SupportFor(Opcode op) {
  const std::string name(hlo::OpcodeName(op));
  const std::string no_vector_op = "no vector-unit instruction for " + name;
  switch (op) {
    // No code (GeneratesNoCode), collectives (kCollective), control flow run by the host
    // sequencer with its bodies lowered separately: the ownership analysis never asks.
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement: case Opcode::kAfterAll: case Opcode::kOptimizationBarrier:
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall: case Opcode::kFusion:
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
    case Opcode::kPartitionId: case Opcode::kReplicaId: case Opcode::kAllGather:
    case Opcode::kAllReduce: case Opcode::kAllToAll: case Opcode::kCollectivePermute:
    case Opcode::kReduceScatter: case Opcode::kAllGatherStart: case Opcode::kAllGatherDone:
    case Opcode::kAllReduceStart: case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
      return std::nullopt;
    // The matrix unit: the input types it has a mode for (tiling.cc, conv_shape.cc; whether a
    // configuration's array.dtypes enables the mode is decided per configuration by Lower).
    case Opcode::kDot: case Opcode::kConvolution:
      return Native(VectorTypesWhere([](Dtype dtype) { return MxuBit(dtype) != 0; }));
    // The vector unit: the row-op table (row_op_table.cc) on each type it holds.
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kMaximum:
    case Opcode::kMinimum: case Opcode::kClamp: case Opcode::kExp: case Opcode::kTanh:
    case Opcode::kRsqrt: case Opcode::kSin: case Opcode::kCos: case Opcode::kLog:
    case Opcode::kLog1p: case Opcode::kExpm1: case Opcode::kLogistic: case Opcode::kErf:
    case Opcode::kFloor: case Opcode::kCeil: case Opcode::kRoundNearestAfz: case Opcode::kDivide:
    case Opcode::kSqrt: case Opcode::kNegate: case Opcode::kAbs: case Opcode::kAnd: case Opcode::kOr:
    case Opcode::kXor: case Opcode::kNot:
    case Opcode::kCompare: case Opcode::kSelect: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical: case Opcode::kRemainder:
      return Native(RowOpTypes(op));
    // vcvt, keyed on the operand type: from each type some convert of it computes exactly.
    case Opcode::kConvert: {
      const std::set<PrimitiveType> held = VectorTypesWhere([](Dtype) { return true; });
      std::set<PrimitiveType> from_types;
      for (PrimitiveType from : held) {
        for (PrimitiveType to : held) {
          if (from != to && VcvtMatchesConvert(from, to)) from_types.insert(from);
        }
      }
      return Native(from_types);
    }
    // Only inside the int8 requantize idiom (one vrequant, requantize_pattern.h); elsewhere
    // IntrinsicHostReason sends it to the host.
    case Opcode::kRoundNearestEven:
      return Native({kRequantizeInputType});
    // A sum from 0 or a max from -inf: vredsum / vredmax / column vadd, on the types vadd
    // takes; on pred an `and` from true or an `or` from false (a max of the 0/1 bytes).
    case Opcode::kReduce: {
      std::set<PrimitiveType> types = RowOpTypes(Opcode::kAdd);
      types.insert(PrimitiveType::kPred);
      return Native(std::move(types));
    }
    case Opcode::kBroadcast:  // vbcast / vfill on every type the unit holds
      return Native(VectorTypesWhere([](Dtype) { return true; }));
    case Opcode::kIota:  // viota tiles (emit_block_copy.h), on every numeric type the unit holds
      return Native(VectorTypesWhere([](Dtype dtype) { return dtype != Dtype::kPred; }));
    // A strided DMA (transpose; slice, concatenate and pad through the unified buffer,
    // emit_block_copy.h), or an alias of the operand's DRAM bytes.
    case Opcode::kTranspose: case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kCopy:
    case Opcode::kSlice: case Opcode::kConcatenate: case Opcode::kPad:
      return EveryType();
    // The same boxes moved by a start the vector unit computes (cfg.load into a dram_offset
    // register), and row gathers as dma.gather (gather_plan.h); IntrinsicHostReason names the
    // forms left to the host.
    case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice: case Opcode::kGather:
      return EveryType();
    // Elementwise ops the vector unit has no instruction for.
    case Opcode::kBitcastConvert: case Opcode::kCbrt: case Opcode::kClz:
    case Opcode::kIsFinite: case Opcode::kPopulationCount: case Opcode::kReducePrecision:
    case Opcode::kSign: case Opcode::kTan:
    case Opcode::kAtan2:
      return Host(no_vector_op);
    // x^2 and x^-0.5 (row_program.cc, DefinePower); IntrinsicHostReason sends the rest.
    case Opcode::kPower:
      return Native(VectorTypesWhere(IsVectorFloat));
    // Data movement and windows the lowering does not program.
    // One DMA box per index of the reversed dimensions (emit_block_copy.h).
    case Opcode::kReverse:
      return EveryType();
    // Strided boxes of the operand folded by vmax / vadd (emit_reduce_window.h);
    // IntrinsicHostReason names the windows left to the host.
    case Opcode::kReduceWindow:
      return Native(RowOpTypes(Opcode::kAdd));
    // Row scatters as dma.scatter (scatter_plan.h; IntrinsicHostReason names the other forms).
    case Opcode::kScatter:
      return EveryType();
    case Opcode::kSelectAndScatter:
      return Host("the DMA engines have no select-and-scatter");
    // The vector unit's bitonic network (sort_plan.h; IntrinsicHostReason names the rest).
    case Opcode::kSort: case Opcode::kTopK:
      return EveryType();
    case Opcode::kMap:
      return Host("the vector unit cannot run a called computation");
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
      return Host("the accelerator has no random-number generator");
    case Opcode::kReal: case Opcode::kImag: case Opcode::kComplex: case Opcode::kFft:
      return Host("the accelerator holds no complex values");
    case Opcode::kCustomCall:
      return Host("custom calls run on the host (custom_calls lists the known ones)");
    // The systolic pipeline's batch-norm-expander rewrites all three into elementwise ops and
    // reductions before Lower sees them. Unexpanded (an analysis of an unoptimized module),
    // inference is the vector unit's normalization (rsqrt, multiply, add on its float types);
    // training and grad need statistics passes the ISA does not chain.
    case Opcode::kBatchNormInference:
      return Native(RowOpTypes(Opcode::kRsqrt));
    case Opcode::kBatchNormGrad: case Opcode::kBatchNormTraining:
      return Host("no vector-unit program for " + name + " (expanded by batch-norm-expander)");
  }
  return std::nullopt;
}

std::optional<std::string> DmaElementTypeReason(PrimitiveType type) {
  const int64_t b = hlo::ByteSize(type);
  if (compiler::ComplexAndNarrowTypes().count(type) || b <= 0 || b > 8) {
    return "the accelerator holds no " + std::string(hlo::PrimitiveTypeName(type));
  }
  return std::nullopt;
}

bool InNativeIdiom(const hlo::Instruction& inst) {
  // Only the s64 steps need the idiom to be native (the s32 ones have rules of their own); the
  // walk is not started for anything else, so ownership stays linear in the module.
  auto is_s64 = [](const hlo::Instruction* x) {
    return x->shape().IsArray() && x->shape().type == hlo::PrimitiveType::kS64;
  };
  if (!is_s64(&inst) && (inst.operand_count() == 0 || !is_s64(inst.operand(0)))) return false;
  // The idiom's convert is at most six users above its first step (requantize_pattern.h).
  std::vector<const hlo::Instruction*> frontier = {&inst};
  std::set<const hlo::Instruction*> seen;
  for (int depth = 0; depth <= 7 && !frontier.empty(); ++depth) {
    std::vector<const hlo::Instruction*> next;
    for (const hlo::Instruction* candidate : frontier) {
      if (!seen.insert(candidate).second) continue;
      if (candidate->opcode() == Opcode::kConvert) {
        std::optional<IntegerRequantizePattern> match = MatchIntegerRequantize(*candidate);
        if (match && match->steps.count(&inst)) return true;
      }
      next.insert(next.end(), candidate->users().begin(), candidate->users().end());
    }
    frontier = std::move(next);
  }
  return false;
}

bool IsPlainWindow(const std::vector<hlo::WindowDim>& window) {
  for (const hlo::WindowDim& d : window) {
    if (d.base_dilation != 1 || d.window_dilation != 1 || d.reversal || d.stride <= 0 ||
        d.pad_lo < 0 || d.pad_hi < 0) {
      return false;
    }
  }
  return true;
}

std::optional<std::string> IntrinsicHostReason(const hlo::Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kConvert: {
      const PrimitiveType from = inst.operand(0)->shape().type, to = inst.shape().type;
      if (from == to || VcvtMatchesConvert(from, to) || IsRequantizeConvert(&inst)) break;
      return "vcvt rounds and saturates where convert " +
             std::string(hlo::PrimitiveTypeName(from)) + " -> " +
             std::string(hlo::PrimitiveTypeName(to)) + " truncates or wraps";
    }
    case Opcode::kCompare:
      if (ElementwiseRowOp(inst, Dtype::kF32, nullptr)) break;
      return "the vector unit has no total-order compare";
    case Opcode::kReduce:
      // A computed init value or a variadic reduce is Lower's to decide; a constant one names
      // the reducer.
      if (inst.operand_count() != 2 || inst.operand(1)->opcode() != Opcode::kConstant ||
          VectorReducerOf(inst)) {
        break;
      }
      return "the vector unit reduces only a sum from 0 or a max from -inf (pred: an and from "
             "true, an or from false)";
    case Opcode::kPower: {
      const hlo::Instruction* source = nullptr;
      std::optional<double> e = ScalarFloatConstant(inst.operand(1), &source);
      if (e && VectorPowerExponent(*e)) break;
      // Inside a called computation (a fusion whose shared exponent broadcast stayed outside)
      // the exponent is a parameter: the lowering reads it through the fusion's operand and
      // decides (the report asks the lowering, Backend::HostSteps).
      if (!e && source->opcode() == Opcode::kParameter && !source->parent()->is_entry()) break;
      return "the vector unit raises only to the constant powers 2 and -0.5";
    }
    case Opcode::kPad: {
      if (inst.operand(1)->opcode() != Opcode::kConstant) {
        return "a computed padding value is not in the DMA plan (emit_block_copy.h)";
      }
      for (const hlo::PadDim& d : inst.attr<hlo::PadAttrs>().dims) {
        if (d.lo < 0 || d.hi < 0) return "negative edge padding is not in the DMA plan";
      }
      break;
    }
    case Opcode::kReverse: {
      int64_t boxes = 1;
      for (int64_t d : inst.attr<hlo::DimensionsAttrs>().dimensions) {
        boxes *= inst.shape().IsArray() ? inst.shape().dims.at(static_cast<size_t>(d)) : 1;
      }
      if (boxes > kMaxReverseBoxes) {
        return "a reverse of more than " + std::to_string(kMaxReverseBoxes) +
               " rows or elements (one DMA box each)";
      }
      break;
    }
    case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice: {
      const int64_t first = inst.opcode() == Opcode::kDynamicSlice ? 1 : 2;
      for (int64_t i = first; i < inst.operand_count(); ++i) {
        const hlo::Instruction* start = inst.operand(i);
        const PrimitiveType type = start->shape().type;
        if (start->opcode() != Opcode::kConstant && type != PrimitiveType::kS32 &&
            type != PrimitiveType::kU32) {
          return "a computed start index of type " +
                 std::string(hlo::PrimitiveTypeName(start->shape().type)) +
                 " (the index program reads s32 or u32)";
        }
      }
      break;
    }
    case Opcode::kGather: {
      std::string why;
      if (!PlanRowGather(inst, &why)) return "not a row gather (gather_plan.h): " + why;
      break;
    }
    case Opcode::kReduceWindow: {
      if (inst.operand_count() != 2 || inst.operand(1)->opcode() != Opcode::kConstant) {
        return "a variadic reduce-window or one with a computed init value";
      }
      std::optional<VectorReducer> reducer = VectorReducerOf(inst);
      if (!reducer || (*reducer != VectorReducer::kSum && *reducer != VectorReducer::kMax)) {
        return "a reduce-window other than a max from -inf or a sum from 0";
      }
      if (!IsPlainWindow(inst.attr<hlo::WindowAttrs>().window.dims))
        return "a dilated, reversed or negatively padded reduce-window";
      break;
    }
    case Opcode::kSort: case Opcode::kTopK: {
      std::string why;
      if (!PlanSort(inst, &why)) return "not a sort the network takes (sort_plan.h): " + why;
      break;
    }
    case Opcode::kScatter: {
      std::string why;
      if (!PlanRowScatter(inst, &why)) return "not a row scatter (scatter_plan.h): " + why;
      break;
    }
    case Opcode::kRoundNearestEven:
      // The idiom's rounding is clamp's operand 1, the clamp converted to s8/u8.
      for (const hlo::Instruction* clamp : inst.users()) {
        if (clamp->opcode() != Opcode::kClamp || clamp->operand(1) != &inst) continue;
        for (const hlo::Instruction* convert : clamp->users()) {
          if (IsRequantizeConvert(convert)) return std::nullopt;
        }
      }
      return "a rounding outside the int8 requantize idiom (one vrequant) has no vector-unit "
             "instruction";
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace systolic::lowering

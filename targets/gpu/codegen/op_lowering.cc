// LoweringOf (op_lowering.h).
#include "targets/gpu/codegen/op_lowering.h"

#include "targets/llvm/elemental_ops.h"

namespace gpu::codegen {

using hlo::Opcode;

OpLowering LoweringOf(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kOptimizationBarrier:
      return OpLowering::kAlias;
    case Opcode::kConstant:
      return OpLowering::kConstant;
    case Opcode::kReshape:
    case Opcode::kCopy:
      return OpLowering::kCopyOrKernel;
    case Opcode::kDot:
      return OpLowering::kMatmul;
    case Opcode::kConvolution:
      return OpLowering::kConvolution;
    case Opcode::kGather:
    case Opcode::kReduceWindow:
    case Opcode::kDynamicUpdateSlice:
      return OpLowering::kIndexedKernel;
    case Opcode::kScatter:
      return OpLowering::kScatterKernel;
    case Opcode::kSort:
      return OpLowering::kSortKernel;
    case Opcode::kTopK:
      return OpLowering::kTopKKernel;
    case Opcode::kCustomCall:
      return OpLowering::kCustomCall;
    case Opcode::kFusion:
      return OpLowering::kFusion;
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
      return OpLowering::kControlFlow;
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
      return OpLowering::kExpandedFirst;
    default:
      // Every collective, replica-id and partition-id (the opcode table's collective class).
      if (hlo::OpcodeClass(op) == hlo::OpClass::kCollective) return OpLowering::kCollective;
      return llvm_codegen::FusibleInEmitter(op) ? OpLowering::kElementalKernel : OpLowering::kNone;
  }
}

}  // namespace gpu::codegen

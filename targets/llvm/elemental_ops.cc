// FusibleInEmitter (elemental_ops.h).
#include "targets/llvm/elemental_ops.h"

namespace llvm_codegen {

using hlo::Opcode;

bool FusibleInEmitter(Opcode opcode) {
  // The emitters have no complex values (hlo/ir.h's complex ops run on the host).
  if (opcode == Opcode::kReal || opcode == Opcode::kImag || opcode == Opcode::kComplex) {
    return false;
  }
  switch (hlo::OpcodeClass(opcode)) {
    case hlo::OpClass::kElementwiseUnary:
    case hlo::OpClass::kElementwiseBinary:
    case hlo::OpClass::kElementwiseTernary:
      return true;
    case hlo::OpClass::kDataMovement:
    case hlo::OpClass::kReduction:
    case hlo::OpClass::kContraction:
    case hlo::OpClass::kControl:
    case hlo::OpClass::kCollective:
    case hlo::OpClass::kOther:
      break;
  }
  switch (opcode) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kIota:
    case Opcode::kReverse:
    case Opcode::kDynamicSlice:
    case Opcode::kReduce:
    case Opcode::kConstant:
    case Opcode::kParameter:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

}  // namespace llvm_codegen

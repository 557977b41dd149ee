// Fusion cost model: fusibility, per-element work and the duplication budget (fusion_cost.h).
#include "compiler/fusion/fusion_cost.h"

#include <algorithm>
#include <unordered_set>

namespace compiler::fusion {
namespace {

using hlo::Instruction;
using hlo::Opcode;

int64_t Elements(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& s : shape.tuple_shapes) total += Elements(s);
    return total;
  }
  return shape.IsArray() ? std::max<int64_t>(shape.ElementCount(), 0) : 0;
}

bool IsTranscendentalOrDivision(Opcode op) {
  switch (op) {
    case Opcode::kAtan2: case Opcode::kCbrt: case Opcode::kCos: case Opcode::kDivide:
    case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog:
    case Opcode::kLog1p: case Opcode::kLogistic: case Opcode::kPower: case Opcode::kRemainder:
    case Opcode::kRsqrt: case Opcode::kSin: case Opcode::kSqrt: case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string NeverFusibleReason(const Instruction& inst) {
  const std::string name(hlo::OpcodeName(inst.opcode()));
  switch (inst.opcode()) {
    case Opcode::kParameter: return "producer is a parameter";
    case Opcode::kConstant:
      if (Elements(inst.shape()) > kSmallConstantElements) {
        return "constant of " + std::to_string(Elements(inst.shape())) +
               " elements is too big to fuse (limit " + std::to_string(kSmallConstantElements) +
               ")";
      }
      return "";
    case Opcode::kCustomCall: {
      const bool side_effect = inst.has_attr<hlo::CustomCallAttrs>() &&
                               inst.attr<hlo::CustomCallAttrs>().has_side_effect;
      return side_effect ? "side-effecting custom-call" : "custom-call";
    }
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
      return name + " (control flow)";
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
      return name + " (random numbers)";
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kAfterAll:
    case Opcode::kOptimizationBarrier:
      return name + " (no computation)";
    case Opcode::kFusion:
      if (inst.attr<hlo::FusionAttrs>().kind == hlo::FusionKind::kCustom) return "kCustom fusion";
      return "";
    default:
      break;
  }
  if (hlo::OpcodeClass(inst.opcode()) == hlo::OpClass::kCollective) return name + " (collective)";
  if (!inst.shape().IsArray()) return name + " with a tuple result";
  return "";
}

bool IsLoopFusible(const Instruction& inst) {
  if (IsNeverFusible(inst)) return false;
  switch (hlo::OpcodeClass(inst.opcode())) {
    case hlo::OpClass::kElementwiseUnary:
    case hlo::OpClass::kElementwiseBinary:
    case hlo::OpClass::kElementwiseTernary:
      return true;
    case hlo::OpClass::kDataMovement:
      switch (inst.opcode()) {
        case Opcode::kBitcast: case Opcode::kBroadcast: case Opcode::kConcatenate:
        case Opcode::kDynamicSlice: case Opcode::kPad: case Opcode::kReshape:
        case Opcode::kReverse: case Opcode::kSlice: case Opcode::kTranspose:
          return true;
        default:  // gather, dynamic-update-slice (in place), tuples: not loop fusion's job
          return false;
      }
    case hlo::OpClass::kOther:
      return inst.opcode() == Opcode::kIota || inst.opcode() == Opcode::kConstant;
    case hlo::OpClass::kControl:
      return inst.opcode() == Opcode::kFusion &&
             inst.attr<hlo::FusionAttrs>().kind == hlo::FusionKind::kLoop;
    case hlo::OpClass::kReduction:
    case hlo::OpClass::kContraction:
    case hlo::OpClass::kCollective:
      return false;
  }
  return false;
}

double PerElementWork(const Instruction& inst) {
  switch (hlo::OpcodeClass(inst.opcode())) {
    case hlo::OpClass::kElementwiseUnary:
    case hlo::OpClass::kElementwiseBinary:
    case hlo::OpClass::kElementwiseTernary:
      if (inst.opcode() == Opcode::kCopy || inst.opcode() == Opcode::kBitcastConvert) return 0;
      return IsTranscendentalOrDivision(inst.opcode()) ? kExpensiveWork : 1.0;
    case hlo::OpClass::kDataMovement:
      return 0;
    case hlo::OpClass::kReduction:
    case hlo::OpClass::kContraction: {
      // Work per result element: the input elements folded into each one.
      const int64_t out = std::max<int64_t>(Elements(inst.shape()), 1);
      int64_t in = 0;
      for (const Instruction* op : inst.operands()) in = std::max(in, Elements(op->shape()));
      return std::max(1.0, static_cast<double>(in) / static_cast<double>(out));
    }
    case hlo::OpClass::kControl:
      if (inst.opcode() == Opcode::kFusion && !inst.called_computations().empty()) {
        double per_element = 0;
        const int64_t out = std::max<int64_t>(Elements(inst.shape()), 1);
        for (const auto& body : inst.called_computations()[0]->instructions()) {
          per_element += Work(*body) / static_cast<double>(out);
        }
        return per_element;
      }
      return 1.0;
    case hlo::OpClass::kOther:
    case hlo::OpClass::kCollective:
      return 0;
  }
  return 0;
}

double Work(const Instruction& inst) {
  return PerElementWork(inst) * static_cast<double>(Elements(inst.shape()));
}

bool IsExpensive(const Instruction& inst) {
  const hlo::OpClass cls = hlo::OpcodeClass(inst.opcode());
  if (cls == hlo::OpClass::kReduction || cls == hlo::OpClass::kContraction) return true;
  if (inst.opcode() == Opcode::kFusion) {
    if (inst.called_computations().empty()) return true;
    for (const auto& body : inst.called_computations()[0]->instructions()) {
      if (IsExpensive(*body)) return true;
    }
    return false;
  }
  return IsTranscendentalOrDivision(inst.opcode());
}

namespace {

// A scalar constant, or a broadcast of a scalar: a kernel holds it as an immediate operand, so
// it costs a fusion nothing (JAX's polynomial expansions of erf/erfc carry 30 of each).
bool IsFreeInFusion(const Instruction& inst) {
  if (inst.opcode() == Opcode::kConstant) return inst.shape().IsArray() && inst.shape().rank() == 0;
  return inst.opcode() == Opcode::kBroadcast && inst.operand(0)->shape().IsArray() &&
         inst.operand(0)->shape().rank() == 0;
}

}  // namespace

int64_t FusedSize(const Instruction& inst) {
  if (inst.opcode() != Opcode::kFusion || inst.called_computations().empty())
    return IsFreeInFusion(inst) ? 0 : 1;
  int64_t n = 0;
  for (const auto& body : inst.called_computations()[0]->instructions()) {
    if (body->opcode() != Opcode::kParameter && !IsFreeInFusion(*body)) ++n;
  }
  return n;
}

bool ReusesOperandElements(const Instruction& consumer, int64_t operand_index) {
  if (consumer.opcode() == Opcode::kBroadcast) return true;
  const hlo::Shape& operand = consumer.operand(operand_index)->shape();
  return Elements(consumer.shape()) > Elements(operand);
}

DuplicationBudget::DuplicationBudget(const hlo::Computation& computation,
                                     const TargetDescription& target) {
  double total = 0;
  for (const auto& inst : computation.instructions()) total += Work(*inst);
  remaining_ = std::max(0.0, target.max_duplication_factor - 1.0) * total;
}

bool DuplicationBudget::TryCharge(const Instruction& producer) {
  if (IsExpensive(producer)) return false;
  const double cost = Work(producer);
  if (cost > remaining_) return false;
  remaining_ -= cost;
  return true;
}

std::string DuplicationRefusal(const Instruction& producer, const TargetDescription& target) {
  std::string op(hlo::OpcodeName(producer.opcode()));
  if (producer.opcode() == Opcode::kFusion && producer.has_attr<hlo::FusionAttrs>()) {
    op += " (" + std::string(hlo::FusionKindName(producer.attr<hlo::FusionAttrs>().kind)) + ")";
  }
  if (IsExpensive(producer)) {
    const std::unordered_set<const Instruction*> users(producer.users().begin(),
                                                       producer.users().end());
    return "would duplicate " + std::to_string(users.size()) +
           " users of an expensive producer (" + op + ")";
  }
  return "duplicating " + op + " exceeds the duplication budget (max_duplication_factor " +
         std::to_string(target.max_duplication_factor).substr(0, 4) + ")";
}

}  // namespace compiler::fusion

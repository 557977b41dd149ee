// Collectives and partition-id / replica-id, evaluated as a single replica of a single
// partition (the interpreter has no multi-device runtime).
//
// Guarantees:
//  - partition-id and replica-id are 0.
//  - all-reduce has one participant: the result is the operand (each operand, for a tuple).
//  - all-gather, all-to-all and reduce-scatter with a group of one are the identity; when the
//    result shape shows more participants (it differs from the operand's) the op cannot be
//    reproduced on one replica and is an hlo::Error saying so.
//  - collective-permute: replica 0 receives its own operand if the pairs contain 0->0, zeros
//    otherwise (a replica that is no target gets zeros in XLA).
#include <string>
#include <vector>

#include "hlo/evaluator_family.h"

namespace hlo::eval {
namespace {

Literal IdentityOf(const Instruction& inst, Operands operands) {
  if (operands.size() == 1 && operands[0]->shape().Compatible(inst.shape())) return *operands[0];
  if (inst.shape().IsTuple() && operands.size() == inst.shape().tuple_shapes.size()) {
    std::vector<Literal> elements;
    for (size_t k = 0; k < operands.size(); ++k) {
      if (!operands[k]->shape().Compatible(inst.shape().tuple_shapes[k])) break;
      elements.push_back(*operands[k]);
    }
    if (elements.size() == operands.size()) return Literal::Tuple(std::move(elements));
  }
  throw Error("'" + std::string(OpcodeName(inst.opcode())) + "' with result " +
              inst.shape().ToString(false) +
              " needs more than one participant; the interpreter runs a single replica");
}

}  // namespace

Literal EvaluateCollective(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return MakeResult(inst);  // zero
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
      return IdentityOf(inst, operands);
    case Opcode::kCollectivePermute: {
      const auto& pairs = inst.attr<CollectiveAttrs>().source_target_pairs;
      for (const auto& [source, target] : pairs) {
        if (source == 0 && target == 0) return IdentityOf(inst, operands);
      }
      return MakeResult(inst);
    }
    default:
      throw Error("'" + std::string(OpcodeName(inst.opcode())) + "' is not a collective");
  }
}

}  // namespace hlo::eval

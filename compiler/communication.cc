// Collective costs on an interconnect (communication.h).
#include "compiler/communication.h"

#include "compiler/cost_model.h"

namespace compiler {
namespace {

double Bytes(const hlo::Shape& shape) { return static_cast<double>(ShapeBytes(shape)); }

double OperandBytes(const hlo::Instruction& inst) {
  double bytes = 0;
  for (const hlo::Instruction* operand : inst.operands()) bytes += Bytes(operand->shape());
  return bytes;
}

}  // namespace

CollectiveTime CollectiveSeconds(const hlo::Instruction& collective, int64_t group,
                                 const Interconnect& link) {
  CollectiveTime time;
  time.group = group;
  if (group <= 1 || link.bytes_per_second <= 0) return time;
  const double n = static_cast<double>(group);
  double steps = 0, bytes = 0;
  switch (collective.opcode()) {
    case hlo::Opcode::kAllReduce:
    case hlo::Opcode::kAllReduceStart:
      steps = 2 * (n - 1);
      bytes = 2 * (n - 1) / n * OperandBytes(collective);
      break;
    case hlo::Opcode::kAllGather:
      steps = n - 1;
      bytes = (n - 1) / n * Bytes(collective.shape());
      break;
    case hlo::Opcode::kAllGatherStart:  // (operands, results): the results are gathered
      steps = n - 1;
      bytes = (n - 1) / n * Bytes(collective.shape().tuple_shapes.at(1));
      break;
    case hlo::Opcode::kReduceScatter:
    case hlo::Opcode::kAllToAll:
      steps = n - 1;
      bytes = (n - 1) / n * OperandBytes(collective);
      break;
    case hlo::Opcode::kCollectivePermute:
    case hlo::Opcode::kCollectivePermuteStart:
      time.group = 2;
      steps = 1;
      bytes = OperandBytes(collective);
      break;
    default:
      return time;  // partition-id, replica-id, the -done halves
  }
  time.bytes_sent = bytes;
  time.seconds = bytes / link.bytes_per_second + steps * link.step_latency_seconds;
  return time;
}

}  // namespace compiler

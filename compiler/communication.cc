// Collective costs on an interconnect (communication.h).
#include "compiler/communication.h"

#include <cmath>

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

std::vector<int64_t> TorusDimensions(int64_t group, Topology topology) {
  const int rank = topology == Topology::kTorus2d ? 2 : topology == Topology::kTorus3d ? 3 : 1;
  std::vector<int64_t> dims;
  int64_t left = group;
  for (int k = rank; k > 1; --k) {
    // The largest divisor of `left` at most its k-th root: as near a square (cube) as it gets.
    int64_t best = 1;
    for (int64_t d = 1; std::pow(static_cast<double>(d), k) <= static_cast<double>(left) + 0.5;
         ++d) {
      if (left % d == 0) best = d;
    }
    dims.push_back(best);
    left /= best;
  }
  dims.push_back(left);
  return dims;
}

CollectiveTime CollectiveSeconds(const hlo::Instruction& collective, int64_t group,
                                 const Interconnect& link) {
  CollectiveTime time;
  time.group = group;
  if (group <= 1 || link.bytes_per_second <= 0) return time;
  const double n = static_cast<double>(group);
  const bool through_switch = link.topology == Topology::kSwitch;
  // The buffer S the formulas start from, and whether the collective reduces (two phases).
  double whole = 0;
  bool all_reduce = false;
  switch (collective.opcode()) {
    case hlo::Opcode::kAllReduce:
    case hlo::Opcode::kAllReduceStart:
      all_reduce = true;
      whole = OperandBytes(collective);
      break;
    case hlo::Opcode::kAllGather:
      whole = Bytes(collective.shape());
      break;
    case hlo::Opcode::kAllGatherStart:  // (operands, results): the results are gathered
      whole = Bytes(collective.shape().tuple_shapes.at(1));
      break;
    case hlo::Opcode::kReduceScatter:
    case hlo::Opcode::kAllToAll:
      whole = OperandBytes(collective);
      break;
    case hlo::Opcode::kCollectivePermute:
    case hlo::Opcode::kCollectivePermuteStart:
      time.group = 2;
      time.bytes_sent = OperandBytes(collective);
      time.seconds = time.bytes_sent / link.bytes_per_second + link.step_latency_seconds +
                     (through_switch ? link.hop_seconds : 0);
      return time;
    default:
      return time;  // partition-id, replica-id, the -done halves
  }
  // Every topology sends the ring's bytes, (n-1)/n of the buffer per phase (a torus's rings send
  // (d-1)/d of what is left per dimension, which sums to the same). Steps: one exchange per
  // phase through a switch; (d-1) per phase and dimension on rings.
  const double phases = all_reduce ? 2 : 1;
  const double bytes = phases * (n - 1) / n * whole;
  double steps = phases;
  if (!through_switch) {
    steps = 0;
    for (int64_t d : TorusDimensions(group, link.topology)) {
      steps += phases * static_cast<double>(d - 1);
    }
  }
  time.bytes_sent = bytes;
  time.seconds = bytes / link.bytes_per_second +
                 steps * (link.step_latency_seconds + (through_switch ? link.hop_seconds : 0));
  return time;
}

}  // namespace compiler

// Placement of an instruction for the fusion passes (contract in fusion_placement.h).
#include "compiler/fusion/fusion_placement.h"

#include "compiler/ownership.h"
#include "compiler/passes/dot_canonicalizer.h"

namespace compiler::fusion {
namespace {

Placement FromOwner(Owner owner) {
  switch (owner) {
    case Owner::kNoCode:
      return Placement::kEither;
    case Owner::kGeneratedKernel:
    case Owner::kLibrary:
    case Owner::kAcceleratorNative:
      return Placement::kDevice;
    case Owner::kHostFallback:
    case Owner::kUnsupportedCustomCall:
    case Owner::kCollective:
      return Placement::kHost;
  }
  return Placement::kEither;  // unreachable: the switch is exhaustive
}

// "natively", "as a generated kernel", "in cuBLASLt", "on the host": how `owner` runs.
std::string HowItRuns(const OwnerInfo& owner) {
  switch (owner.owner) {
    case Owner::kAcceleratorNative: return "natively";
    case Owner::kGeneratedKernel: return "as a generated kernel";
    case Owner::kLibrary: return "in " + (owner.library.empty() ? "a library" : owner.library);
    case Owner::kNoCode: return "without code";
    case Owner::kHostFallback:
    case Owner::kUnsupportedCustomCall:
    case Owner::kCollective:
      return "on the host";
  }
  return "";
}

std::string Name(const hlo::Instruction& inst) {
  std::string op(hlo::OpcodeName(inst.opcode()));
  if (inst.opcode() == hlo::Opcode::kFusion && inst.has_attr<hlo::FusionAttrs>()) {
    op += " (" + std::string(hlo::FusionKindName(inst.attr<hlo::FusionAttrs>().kind)) + ")";
  }
  return op;
}

// A transpose of the last two dimensions whose readers are all dots.
bool IsTransposeReadByDots(const hlo::Instruction& inst) {
  if (!SwapsLastTwoDims(inst) || inst.users().empty()) return false;
  for (const hlo::Instruction* user : inst.users())
    if (user->opcode() != hlo::Opcode::kDot) return false;
  return true;
}

}  // namespace

Placement PlacementOf(const hlo::Instruction& inst, const TargetDescription& target) {
  // A fusion's owner is already "host fallback" when any member is (ownership.cc, OwnFusion).
  const Placement side = FromOwner(InstructionOwner(inst, target).owner);
  if (side == Placement::kDevice && target.unfused_opcodes.count(inst.opcode())) {
    return Placement::kAlone;
  }
  if (side == Placement::kDevice && target.gemm_reads_transposed_operands &&
      IsTransposeReadByDots(inst)) {
    return Placement::kAlone;
  }
  return side;
}

bool Compatible(Placement a, Placement b) {
  if (a == Placement::kAlone || b == Placement::kAlone) return false;
  return a == Placement::kEither || b == Placement::kEither || a == b;
}

Placement Combine(Placement a, Placement b) { return a == Placement::kEither ? b : a; }

std::string PlacementConflict(const hlo::Instruction& a, const hlo::Instruction& b,
                              const TargetDescription& target) {
  const Placement pa = PlacementOf(a, target), pb = PlacementOf(b, target);
  if (Compatible(pa, pb)) return "";
  if (pa == Placement::kAlone || pb == Placement::kAlone) {
    return Name(pa == Placement::kAlone ? a : b) + " runs as an instruction of its own on " +
           target.name;
  }
  // Name the host side first: it is the one that forces the split.
  const bool a_is_host = pa == Placement::kHost;
  const hlo::Instruction& host = a_is_host ? a : b;
  const hlo::Instruction& device = a_is_host ? b : a;
  const OwnerInfo device_owner = InstructionOwner(device, target);
  return Name(host) + " runs on the host on " + target.name + ", " + Name(device) + " " +
         HowItRuns(device_owner);
}

}  // namespace compiler::fusion

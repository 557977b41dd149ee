// TargetDescription lookups (target_description.h): the opcode rule of one instruction and owner
// names. The instances live beside their backends (targets/<name>/description.cc).
//
// Guarantees: HandlingFor never throws and answers for every opcode/type pair (missing rules
// fall back to default_handling); `library` is filled exactly when the answer is kLibrary.
#include "compiler/target_description.h"

namespace compiler {

std::string_view OwnerName(Owner owner) {
  switch (owner) {
    case Owner::kNoCode:
      return "no-code";
    case Owner::kGeneratedKernel:
      return "generated-kernel";
    case Owner::kLibrary:
      return "library";
    case Owner::kAcceleratorNative:
      return "accelerator-native";
    case Owner::kHostFallback:
      return "host-fallback";
    case Owner::kUnsupportedCustomCall:
      return "unsupported-custom-call";
    case Owner::kCollective:
      return "collective";
  }
  return "unknown";
}

OpHandling TargetDescription::HandlingFor(hlo::Opcode op, hlo::PrimitiveType type,
                                          std::string* library) const {
  OpHandling handling = default_handling;
  std::string chosen_library;
  if (auto it = op_rules.find(op); it != op_rules.end()) {
    const OpRule& rule = it->second;
    // A rule restricted to some element types applies to those only; e.g. Eigen's GEMM covers
    // f32 (and bf16 through f32) but an s32 dot is generated code.
    bool applies = rule.types.empty() || rule.types.count(type) != 0;
    handling = applies ? rule.handling : rule.otherwise;
    // The library name belongs to the rule's own handling; `otherwise` names no library unless
    // it is itself a library answer (then the same library serves it, e.g. through a convert).
    if (handling == OpHandling::kLibrary) chosen_library = rule.library;
  }
  if (library != nullptr) *library = chosen_library;
  return handling;
}

}  // namespace compiler

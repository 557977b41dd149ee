// TargetDescription lookups (target_description.h): the opcode rule of one instruction and owner
// names. The instances live beside their backends (targets/<name>/description.cc).
//
// Guarantees: HandlingFor never throws and answers for every opcode/type pair (missing rules
// fall back to default_handling); `library` is filled exactly when the answer is kLibrary.
#include "compiler/target_description.h"

#include "hlo/ir.h"
#include "hlo/minifloat.h"

namespace compiler {
namespace {

std::optional<hlo::PrimitiveType> FirstListed(const hlo::Shape& shape,
                                              const std::set<hlo::PrimitiveType>& types) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes)
      if (auto found = FirstListed(element, types)) return found;
    return std::nullopt;
  }
  if (shape.IsArray() && types.count(shape.type)) return shape.type;
  return std::nullopt;
}

}  // namespace

std::set<hlo::PrimitiveType> ComplexAndNarrowTypes() {
  static constexpr hlo::PrimitiveType kAllTypes[] = {
#define RETARGET_PRIMITIVE_TYPE(e, name, proto, bytes, ctype) hlo::PrimitiveType::e,
#include "hlo/types.def"
#undef RETARGET_PRIMITIVE_TYPE
  };
  std::set<hlo::PrimitiveType> types;
  for (hlo::PrimitiveType t : kAllTypes) {
    if (hlo::IsComplex(t) || hlo::IsMinifloat(t) || t == hlo::PrimitiveType::kS4 ||
        t == hlo::PrimitiveType::kU4) {
      types.insert(t);
    }
  }
  return types;
}

std::optional<hlo::PrimitiveType> HostElementType(const hlo::Instruction& inst,
                                                  const TargetDescription& target) {
  if (target.host_element_types.empty()) return std::nullopt;
  switch (inst.opcode()) {
    case hlo::Opcode::kWhile:
    case hlo::Opcode::kConditional:
    case hlo::Opcode::kCall:
      return std::nullopt;
    default:
      break;
  }
  if (auto found = FirstListed(inst.shape(), target.host_element_types)) return found;
  for (const hlo::Instruction* operand : inst.operands())
    if (auto found = FirstListed(operand->shape(), target.host_element_types)) return found;
  if (inst.opcode() == hlo::Opcode::kFusion) {
    for (const hlo::Computation* callee : inst.called_computations())
      for (const auto& member : callee->instructions())
        if (auto found = HostElementType(*member, target)) return found;
  }
  return std::nullopt;
}

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

// The catalogue of target descriptions (descriptions.h).
#include "targets/descriptions.h"

namespace targets {

const compiler::TargetDescription* FindDescription(std::string_view name) {
  if (name == "interp") return &InterpDescription();
  if (name == "cpu") return &CpuDescription();
  if (name == "gpu") return &GpuDescription();
  if (name == "systolic") return &SystolicDescription();
  return nullptr;
}

std::vector<std::string> DescriptionNames() { return {"interp", "cpu", "gpu", "systolic"}; }

}  // namespace targets

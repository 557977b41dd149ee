// Every target's description by name, for the tools and tests that compare targets (the CLI's
// --target, the portability report, the price table). Each description lives beside its backend
// (targets/<name>/description.{h,cc}); this catalogue only lists them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "targets/cpu/description.h"
#include "targets/gpu/description.h"
#include "targets/interp/description.h"
#include "targets/systolic/description.h"

namespace targets {

// "interp", "cpu", "gpu", "systolic"; nullptr for any other name.
const compiler::TargetDescription* FindDescription(std::string_view name);
std::vector<std::string> DescriptionNames();  // in that order

}  // namespace targets

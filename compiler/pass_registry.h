// Every pass by name, for `retarget opt --passes a,b,c`, golden tests and --list-passes.
// An explicit table in pass_registry.cc (no static-initializer registration): adding a pass
// means adding one row there.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pass.h"
#include "compiler/target_description.h"

namespace compiler {

using PassFactory = std::function<std::unique_ptr<Pass>(const TargetDescription&)>;

struct PassEntry {
  std::string name;
  PassFactory make;
};

const std::vector<PassEntry>& AllPasses();
// Throws hlo::Error listing the valid names when `name` is unknown.
std::unique_ptr<Pass> MakePass(const std::string& name, const TargetDescription& target);

}  // namespace compiler

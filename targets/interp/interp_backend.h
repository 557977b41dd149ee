// The reference interpreter backend: runs the module on hlo/'s evaluator, unoptimized. It is the
// numeric truth the other backends are compared against.
#pragma once

#include <memory>

#include "hlo/evaluator.h"
#include "targets/backend.h"

namespace targets {

std::unique_ptr<Backend> MakeInterpBackend(const hlo::CustomCallRegistry* custom_calls = nullptr);

}  // namespace targets

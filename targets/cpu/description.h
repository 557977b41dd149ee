// What the `cpu` target runs natively, through libraries or on the host, and its rates, memory,
// energy and price: the TargetDescription the shared passes and the portability report read.
// It lives beside the cpu backend (description.cc says where each claim comes from) so that the
// claim and the code that makes it true are read and changed together.
#pragma once

#include "compiler/target_description.h"

namespace targets {

// Built on first use and kept for the process.
const compiler::TargetDescription& CpuDescription();

}  // namespace targets

// What the `systolic` target runs natively, through libraries or on the host, and its rates, memory,
// energy and price: the TargetDescription the shared passes and the portability report read.
// It lives beside the systolic backend (description.cc says where each claim comes from) so that the
// claim and the code that makes it true are read and changed together.
#pragma once

#include "compiler/target_description.h"
#include "simulator/isa/arch_config.h"

namespace targets {

// Built on first use and kept for the process.
const compiler::TargetDescription& SystolicDescription();

// The chip-to-chip links of an accelerator configuration (the link.* keys) as the interconnect
// the collectives are costed over (compiler/communication.h): what the portability report
// estimates and what the simulated chips pay (targets/systolic/chip_links.h) are one formula.
// No links (link.bandwidth_gbps = 0): bytes_per_second 0.
compiler::Interconnect ChipLinks(const systolic::ArchConfig& config);

}  // namespace targets

// One simulated run of a module on the accelerator, on as many chips as the module is written
// for: shared by the report's latency (report_latency.cc) and each sweep point
// (cmd_sweep_point.cc), so both read a sharded module's time the same way.
#pragma once

#include <map>
#include <string>

#include "hlo/ir.h"
#include "targets/backend.h"

namespace cli {

// Runs `module` once on `backend` (a simulating one: its profile has "seconds") with inputs
// random:0: one chip, or every device of the module's replica_count x num_partitions grid as a
// chip of its own, exchanging over the configured links (targets/systolic/chip_links.h). Returns
// the profile counters of the slowest chip: the step ends when its last chip does. Throws
// hlo::Error when the backend reports no "seconds".
std::map<std::string, double> SimulateSlowestChip(targets::Backend& backend,
                                                  const hlo::Module& module);

}  // namespace cli

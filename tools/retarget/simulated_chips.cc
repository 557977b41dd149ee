// SimulateSlowestChip (simulated_chips.h).
#include "tools/retarget/simulated_chips.h"

#include <memory>
#include <vector>

#include "hlo/collective_runtime.h"
#include "hlo/multi_device.h"
#include "tools/io/device_arrays.h"
#include "tools/io/inputs.h"

namespace cli {

std::map<std::string, double> SimulateSlowestChip(targets::Backend& backend,
                                                  const hlo::Module& module) {
  const hlo::DeviceGrid grid = hlo::ModuleDeviceGrid(module);
  const auto chips = targets::CompileForDevices(backend, module, grid.size());
  if (grid.size() == 1) {
    chips[0]->Run(io::MakeRandomInputs(module, /*seed=*/0));
  } else {
    targets::RunAsDevices(chips, grid, io::ResolveDeviceInputs(module, "random:0", grid.size()));
  }
  std::map<std::string, double> slowest;
  for (const auto& chip : chips) {
    std::map<std::string, double> counters = chip->profile().counters;
    auto seconds = counters.find("seconds");
    if (seconds == counters.end()) {
      throw hlo::Error("the " + backend.name() + " backend reported no simulated 'seconds'");
    }
    if (slowest.empty() || seconds->second > slowest.at("seconds")) slowest = std::move(counters);
  }
  return slowest;
}

}  // namespace cli

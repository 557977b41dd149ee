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
  std::vector<std::unique_ptr<targets::Executable>> chips;
  for (int64_t d = 0; d < grid.size(); ++d) chips.push_back(backend.Compile(module));
  if (grid.size() == 1) {
    chips[0]->Run(io::MakeRandomInputs(module, /*seed=*/0));
  } else {
    const std::vector<std::vector<hlo::Literal>> inputs =
        io::ResolveDeviceInputs(module, "random:0", grid.size());
    hlo::RunOnDevices(grid, [&](const hlo::DeviceView& view) {
      const auto d = static_cast<size_t>(view.device);
      return chips[d]->RunAsDevice(inputs[d], view);
    });
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

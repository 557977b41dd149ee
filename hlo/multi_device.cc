// Multi-device runs (multi_device.h): one thread per device, every device meeting the others at
// collectives through one CollectiveRuntime.
#include "hlo/multi_device.h"

#include <charconv>
#include <exception>
#include <string>
#include <system_error>
#include <thread>

#include "hlo/collective_runtime.h"

namespace hlo {
namespace {

int64_t HeaderCount(const Module& module, const std::string& name) {
  for (const OpaqueAttribute& attribute : module.header_attributes()) {
    if (attribute.name != name) continue;
    int64_t value = 0;
    const char* begin = attribute.value.data();
    const char* end = begin + attribute.value.size();
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || ptr != end || value < 1 || value > kMaxDevices) {
      throw Error("module '" + module.name() + "': " + name + "=" + attribute.value +
                  " is not a device count from 1 to " + std::to_string(kMaxDevices));
    }
    return value;
  }
  return 1;
}

}  // namespace

DeviceGrid ModuleDeviceGrid(const Module& module) {
  DeviceGrid grid;
  grid.replicas = HeaderCount(module, "replica_count");
  grid.partitions = HeaderCount(module, "num_partitions");
  if (grid.size() > kMaxDevices) {
    throw Error("module '" + module.name() + "' asks for " + std::to_string(grid.size()) +
                " devices; a run has at most " + std::to_string(kMaxDevices));
  }
  return grid;
}

DeviceGrid GridForDevices(const Module& module, int64_t devices) {
  const DeviceGrid declared = ModuleDeviceGrid(module);
  if (devices == 1) return DeviceGrid{};  // device 0 alone, whatever the module declares
  if (devices < 1 || devices > kMaxDevices || devices % declared.partitions != 0) {
    throw Error(std::to_string(devices) + " devices: module '" + module.name() + "' has " +
                std::to_string(declared.partitions) +
                " partitions, so a run has a multiple of that many devices, at most " +
                std::to_string(kMaxDevices));
  }
  return DeviceGrid{devices / declared.partitions, declared.partitions};
}

std::vector<Literal> RunOnDevices(const DeviceGrid& grid,
                                  const std::function<Literal(const DeviceView&)>& run_device) {
  const int64_t n = grid.size();
  if (n < 1 || n > kMaxDevices) {
    throw Error(std::to_string(n) + " devices: a run has 1 to " + std::to_string(kMaxDevices));
  }
  CollectiveRuntime runtime(grid);
  std::vector<Literal> results(static_cast<size_t>(n));
  auto run_one = [&](int64_t device) {
    try {
      const DeviceView view{&runtime, grid, device};
      results[static_cast<size_t>(device)] = run_device(view);
      runtime.Finished(device);
    } catch (const Error& e) {
      runtime.Failed(device, e);
    } catch (const std::exception& e) {
      runtime.Failed(device, Error(e.what()));
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int64_t device = 0; device < n; ++device) {
    try {
      threads.emplace_back(run_one, device);
    } catch (const std::system_error& e) {
      // The devices without a thread count as failed, so the started ones stop, not hang.
      for (int64_t rest = device; rest < n; ++rest) {
        runtime.Failed(rest, Error(std::string("cannot start a thread: ") + e.what()));
      }
      break;
    }
  }
  for (std::thread& thread : threads) thread.join();
  if (std::optional<Error> failure = runtime.FirstFailure()) throw *failure;
  return results;
}

std::vector<Literal> EvaluateOnDevices(const Module& module, const DeviceGrid& grid,
                                       std::span<const std::vector<Literal>> arguments,
                                       const EvaluatorOptions& options) {
  if (module.entry() == nullptr) throw Error("module '" + module.name() + "' has no entry");
  if (static_cast<int64_t>(arguments.size()) != grid.size()) {
    throw Error("a run on " + std::to_string(grid.size()) +
                " devices needs arguments for each, got " + std::to_string(arguments.size()));
  }
  return RunOnDevices(grid, [&](const DeviceView& view) {
    EvaluatorOptions mine = options;
    mine.device = &view;
    // Progress lines come from device 0 only: the callback need not be thread-safe.
    if (view.device != 0) mine.progress = nullptr;
    return Evaluate(module, arguments[static_cast<size_t>(view.device)], mine);
  });
}

}  // namespace hlo

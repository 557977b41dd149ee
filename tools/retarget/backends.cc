// RegisterBackends: see backends.h.
#include "tools/retarget/backends.h"

#include <optional>

#include "targets/cpu/cpu_backend.h"
#include "targets/cpu/kernel_cache.h"
#include "targets/gpu/emulator/gpu_backend.h"
#include "targets/interp/interp_backend.h"
#include "targets/systolic/systolic_backend.h"
#include "tools/retarget/systolic_config.h"

namespace cli {

void RegisterBackends(targets::BackendRegistry& registry) {
  registry.Add(targets::MakeInterpBackend());
  cpu::CpuBackendOptions cpu_options;
  cpu_options.cache_dir = cpu::DefaultKernelCacheDirectory().string();
  registry.Add(cpu::MakeCpuBackend(cpu_options));
  registry.Add(gpu::emulator::MakeGpuBackend());
  registry.Add(targets::MakeSystolicBackend(SystolicRunConfig(std::nullopt, {}),
                                            registry.Find("interp")));
}

}  // namespace cli

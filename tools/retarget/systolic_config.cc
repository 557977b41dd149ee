// SystolicRunConfig: see systolic_config.h.
#include "tools/retarget/systolic_config.h"

namespace cli {

systolic::ArchConfig SystolicRunConfig(const std::optional<std::string>& config,
                                       std::vector<std::string> overrides) {
  if (!config) overrides.insert(overrides.begin(), "array.dtypes=int8,bf16,f32");
  return systolic::LoadArchConfig(config.value_or("tpu-v1"), overrides);
}

}  // namespace cli

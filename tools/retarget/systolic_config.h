// The accelerator configuration a command runs the systolic backend with, shared by
// `run --target systolic` and the report's simulated latency so they simulate the same machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "simulator/isa/arch_config.h"

namespace cli {

// `config` (a preset or a config file) with `overrides` applied in order. Without `config`:
// tpu-v1 with array.dtypes=int8,bf16,f32 — the multi-pass bf16/f32 MXU modes that the systolic
// target description assumes (targets/systolic/description.cc), applied before the overrides.
systolic::ArchConfig SystolicRunConfig(const std::optional<std::string>& config,
                                       std::vector<std::string> overrides);

}  // namespace cli

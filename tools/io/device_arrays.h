// The inputs and outputs of a run on N devices (hlo/multi_device.h) as one .npz: every entry
// (`arg0`, `out1`, …) carries a leading dimension of N, device d's array at index d — the
// layout of a jax.Array stacked over its devices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "tools/io/npz.h"

namespace io {

// Device d's seed for random:SEED: SEED itself for device 0 (a one-device run draws what it
// always drew), a mix of SEED and d for the others, so every device gets different arrays.
uint64_t DeviceSeed(uint64_t seed, int64_t device);

// Each device's entry arguments for the --inputs spec: random:SEED (per DeviceSeed) or an .npz
// whose entries have a leading dimension of `devices`. Throws hlo::Error naming the file and
// the entry when one lacks that dimension.
std::vector<std::vector<hlo::Literal>> ResolveDeviceInputs(const hlo::Module& module,
                                                           const std::string& spec,
                                                           int64_t devices);

// Stacks the same-named arrays of every device (each device's list in the same order) into one
// array per name with a leading dimension of the device count.
std::vector<NpyArray> StackDevices(const std::vector<std::vector<NpyArray>>& per_device);

// Splits every array along its leading dimension of `devices` into each device's list.
std::vector<std::vector<NpyArray>> SplitDevices(const std::vector<NpyArray>& stacked,
                                                int64_t devices, const std::string& path);

}  // namespace io

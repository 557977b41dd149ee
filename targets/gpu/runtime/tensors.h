// Host-side tensor plumbing between .npz files and the artifact's parameter/result slots.
//
// Guarantees: no GPU needed, so every input mistake (missing entry, wrong dtype or shape) is
// reported before the driver is touched. bf16 follows DESIGN.md: read from float32 (rounded to
// nearest even) or from uint16 bit patterns, written as float32 (exact).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "targets/gpu/artifact.h"
#include "targets/gpu/runtime/npz.h"

namespace gpu::runtime {

// The device bytes of each parameter, in manifest order, from .npz entries matched by name.
std::vector<std::string> BindInputs(const Manifest& manifest, const std::vector<NpyArray>& arrays,
                                    const std::string& source);
// Deterministic inputs: floats uniform in [-1, 1), integers in [0, 8), pred 0/1.
std::vector<std::string> RandomInputs(const Manifest& manifest, uint64_t seed);
// The .npz entries for the results' device bytes (bf16 widened to float32).
std::vector<NpyArray> ResultsToNpz(const Manifest& manifest, const std::vector<std::string>& device_bytes);

uint16_t FloatToBf16(float value);
float Bf16ToFloat(uint16_t bits);

}  // namespace gpu::runtime

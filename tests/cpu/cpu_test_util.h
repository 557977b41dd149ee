// Helpers for the CPU backend tests: run a module on the cpu and interp backends (both from the
// test main's registry) and compare the flattened results with io::CompareArrays.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "targets/backend.h"
#include "tools/io/compare.h"

namespace cpu_tests {

targets::Backend& Cpu();
targets::Backend& Interp();

struct CpuRun {
  hlo::Literal result;
  targets::Profile profile;
  std::map<std::string, std::string> artifacts;
};
CpuRun RunCpu(const hlo::Module& module, const std::vector<hlo::Literal>& inputs);

// Runs `module` on both backends with io::MakeRandomInputs(module, seed) and compares;
// `tolerance` nullptr: the per-type defaults. Returns the cpu run for further checks.
CpuRun ExpectMatchesInterp(const hlo::Module& module, uint64_t seed = 0,
                           const io::Tolerance* tolerance = nullptr);
CpuRun ExpectMatchesInterp(const std::string& hlo_text, uint64_t seed = 0,
                           const io::Tolerance* tolerance = nullptr);

double Counter(const CpuRun& run, const std::string& name);  // 0 when absent

}  // namespace cpu_tests

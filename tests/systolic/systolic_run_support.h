// Shared by the systolic lowering tests: run a module on the systolic backend (host steps on the
// interpreter) and compare it with the interpreter, keeping the counters and the assembly.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hlo/literal.h"
#include "targets/descriptions.h"
#include "targets/systolic/systolic_backend.h"
#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace systolic_testing {

struct Outcome {
  io::CompareResult compare;
  std::map<std::string, double> counters;
  std::string assembly;  // the backend's program.sasm: segments and "# host:" lines
};

// No difference allowed: for results the accelerator moves or computes exactly.
inline constexpr io::Tolerance kExact{0, 0};

// `inputs` empty: io::MakeRandomInputs(module, seed); `tolerance` null: the per-type defaults.
inline Outcome RunAgainstInterpreter(const std::string& text, const systolic::ArchConfig& config,
                                     uint64_t seed, std::vector<hlo::Literal> inputs = {},
                                     const io::Tolerance* tolerance = nullptr) {
  auto module = testing_support::ParseAndVerify(text);
  auto backend =
      targets::MakeSystolicBackend(config, testing_support::Backends().Find("interp"));
  if (inputs.empty()) inputs = io::MakeRandomInputs(*module, seed);
  testing_support::ComparedRun run =
      testing_support::RunAgainstInterpreter(*backend, *module, inputs, tolerance);
  const auto artifacts = run.executable->artifacts();
  const auto assembly = artifacts.find("program.sasm");
  return {run.comparison, run.executable->profile().counters,
          assembly == artifacts.end() ? "" : assembly->second};
}

// The outcome matched, nothing ran on the host and `native` instructions ran on the accelerator.
inline void ExpectNative(const Outcome& outcome, double native) {
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0) << outcome.assembly;
  EXPECT_EQ(outcome.counters.at("native_instructions"), native) << outcome.assembly;
}

}  // namespace systolic_testing

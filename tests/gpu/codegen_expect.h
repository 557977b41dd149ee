// The GPU code generator tests' common check: compile HLO text for the gpu, run the artifact in
// the host emulator and compare every output element with the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "targets/gpu/codegen/gpu_compiler.h"
#include "targets/gpu/emulator/host_emulator.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace gpu_codegen_test {

using gpu::codegen::CompileModule;
using gpu::codegen::GpuCompileOptions;
using gpu::codegen::GpuCompileResult;

using Tolerance = io::Tolerance;

// Compiles `text` for the gpu, emulates it and compares every output with the interpreter
// (testing_support's comparison; `tolerance` replaces compare.h's per-type defaults when
// given); `grid` is the emulated launch (any grid must give the same values).
inline GpuCompileResult ExpectMatchesInterpreter(const std::string& text, uint64_t seed = 1,
                                                 std::optional<Tolerance> tolerance = {},
                                                 gpu::emulator::EmulatedGrid grid = {}) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, seed);
  GpuCompileOptions options;
  options.assemble = false;  // ptxas is codegen_ptx_test's business
  // The reference is computed from a second parse: compilation rewrites `module` in place.
  std::unique_ptr<hlo::Module> reference = testing_support::ParseAndVerify(text);
  GpuCompileResult compiled = CompileModule(*module, options);
  const io::CompareResult comparison = testing_support::CompareLeavesWithInterpreter(
      *reference, inputs, gpu::emulator::EmulateArtifact(compiled, inputs, grid),
      tolerance ? &*tolerance : nullptr);
  EXPECT_TRUE(comparison.matched) << comparison.summary;
  return compiled;
}

}  // namespace gpu_codegen_test

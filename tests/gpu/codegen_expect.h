// The GPU code generator tests' common check: compile HLO text for the gpu, run the artifact in
// the host emulator and compare every output element with the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hlo/evaluator.h"
#include "targets/gpu/codegen/gpu_compiler.h"
#include "targets/gpu/emulator/host_emulator.h"
#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace gpu_codegen_test {

using gpu::codegen::CompileModule;
using gpu::codegen::GpuCompileOptions;
using gpu::codegen::GpuCompileResult;

struct Tolerance {
  double rtol, atol;
};

inline Tolerance ToleranceFor(hlo::PrimitiveType type) {
  // bf16 keeps 8 significant bits; sums are reassociated by the lanes and the butterfly.
  if (type == hlo::PrimitiveType::kBF16 || type == hlo::PrimitiveType::kF16) return {2e-2, 2e-2};
  return {1e-4, 1e-5};
}

inline void FlattenLeaves(const hlo::Literal& literal, std::vector<const hlo::Literal*>& leaves) {
  if (literal.IsTuple()) {
    for (const hlo::Literal& element : literal.elements()) FlattenLeaves(element, leaves);
  } else {
    leaves.push_back(&literal);
  }
}

// Compiles `text` for the gpu, emulates it and compares every output with the interpreter.
// `tolerance` replaces ToleranceFor(type) for every output when given; `grid` is the emulated
// launch (any grid must give the same values).
inline GpuCompileResult ExpectMatchesInterpreter(const std::string& text, uint64_t seed = 1,
                                                 std::optional<Tolerance> tolerance_override = {},
                                                 gpu::emulator::EmulatedGrid grid = {}) {
  std::unique_ptr<hlo::Module> reference = testing_support::ParseAndVerify(text);
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*reference, seed);
  hlo::Literal expected = hlo::Evaluate(*reference, inputs);
  GpuCompileOptions options;
  options.assemble = false;  // ptxas is codegen_ptx_test's business
  GpuCompileResult compiled = CompileModule(*module, options);
  std::vector<hlo::Literal> actual = gpu::emulator::EmulateArtifact(compiled, inputs, grid);
  std::vector<const hlo::Literal*> leaves;
  FlattenLeaves(expected, leaves);
  EXPECT_EQ(actual.size(), leaves.size());
  for (size_t o = 0; o < std::min(actual.size(), leaves.size()); ++o) {
    const hlo::Literal& want = *leaves[o];
    EXPECT_EQ(actual[o].shape().dims, want.shape().dims) << "out" << o;
    if (actual[o].shape().dims != want.shape().dims) continue;
    const Tolerance tolerance = tolerance_override.value_or(ToleranceFor(want.shape().type));
    int reported = 0;
    for (int64_t i = 0; i < want.shape().ElementCount(); ++i) {
      const double w = want.GetAsDouble(i), a = actual[o].GetAsDouble(i);
      const bool same = a == w || (std::isnan(w) && std::isnan(a)) ||
                        std::abs(a - w) <= tolerance.atol + tolerance.rtol * std::abs(w);
      if (!same && reported++ < 5)
        ADD_FAILURE() << "out" << o << "[" << i << "]: " << a << " vs " << w;
    }
  }
  return compiled;
}

}  // namespace gpu_codegen_test

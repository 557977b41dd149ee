// Helpers for the basic-pass tests: parse, run a pass with verification, check that the result
// evaluates like the input, and check the honest-"changed" rule.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/pass.h"
#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace passes_test {

inline std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  return testing_support::ParseAndVerify(text);
}

// Number of instructions with `opcode` in computation `c`.
inline int64_t CountOpcode(const hlo::Computation& c, hlo::Opcode opcode) {
  int64_t n = 0;
  for (const auto& inst : c.instructions()) n += inst->opcode() == opcode ? 1 : 0;
  return n;
}
inline int64_t CountOpcode(const hlo::Module& m, hlo::Opcode opcode) {
  int64_t n = 0;
  for (const auto& c : m.computations()) n += CountOpcode(*c, opcode);
  return n;
}

// Runs `pass` on a clone of `module` and returns the result. Checks: the result verifies, it
// evaluates to the same values as the input on seeded random inputs (when `evaluate`), the
// reported change matches whether the printed text changed, and a second run reports no change
// and leaves the text identical.
inline std::unique_ptr<hlo::Module> RunAndCheck(compiler::Pass& pass, const hlo::Module& module,
                                                bool expect_changed, bool evaluate = true) {
  std::unique_ptr<hlo::Module> result = module.Clone();
  const std::string before = hlo::PrintModule(module);
  const bool changed = pass.Run(*result);
  EXPECT_EQ(changed, expect_changed) << pass.name();
  EXPECT_NO_THROW(hlo::Verify(*result)) << hlo::PrintModule(*result);
  const std::string after = hlo::PrintModule(*result);
  if (changed) {
    EXPECT_NE(before, after) << pass.name() << " reported a change but made none";
  } else {
    EXPECT_EQ(before, after) << pass.name() << " reported no change";
  }
  // Honest "changed": a second run finds nothing to do and changes nothing.
  EXPECT_FALSE(pass.Run(*result)) << pass.name() << " is not idempotent";
  EXPECT_EQ(after, hlo::PrintModule(*result)) << pass.name();
  if (evaluate) {
    for (uint64_t seed : {1u, 2u}) {
      std::vector<hlo::Literal> inputs = io::MakeRandomInputs(module, seed);
      hlo::Literal expected = hlo::Evaluate(module, inputs);
      hlo::Literal actual = hlo::Evaluate(*result, inputs);
      io::CompareResult cmp =
          io::CompareArrays(io::FlattenOutputs(expected), io::FlattenOutputs(actual), nullptr);
      EXPECT_TRUE(cmp.matched) << pass.name() << ": " << cmp.summary;
    }
  }
  return result;
}

}  // namespace passes_test

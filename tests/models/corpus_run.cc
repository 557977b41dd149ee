// Implementation of corpus_run.h: load, random inputs (seed 0), timed interpreter run, checks.
#include "tests/models/corpus_run.h"

#include <gtest/gtest.h>

#include <iostream>

#include "tests/models/model_test_util.h"
#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace model_tests {

CorpusRun RunCorpusModel(const std::string& stem, const InputAdjuster& adjust) {
  CorpusRun run;
  run.loaded = hlo::LoadModule(testing_support::CorpusPath(stem + ".hlo"));
  const hlo::Module& module = *run.loaded.module;
  run.inputs = io::MakeRandomInputs(module, /*seed=*/0);
  if (adjust) adjust(module, run.inputs);

  targets::Backend* interp = InterpBackend();
  if (interp == nullptr) return run;
  TimedRun timed = CompileAndRun(*interp, module, run.inputs);
  run.run_ms = timed.run_ms;
  run.outputs = io::FlattenOutputs(timed.result);
  std::cout << "[ corpus   ] " << stem << ": interp run " << timed.run_ms << " ms (compile "
            << timed.compile_ms << " ms, " << module.instruction_count() << " instructions)\n";

  ExpectShapesAsDeclared(module, run.outputs);
  ExpectAllFinite(run.outputs);
  ExpectNotDegenerate(run.outputs);
  return run;
}

int ExpectPassThroughOutputsEqualArguments(const CorpusRun& run) {
  const hlo::Instruction* root = run.loaded.module->entry()->root();
  if (root->opcode() != hlo::Opcode::kTuple) return 0;
  int checked = 0;
  for (int64_t i = 0; i < root->operand_count() && i < int64_t(run.outputs.size()); ++i) {
    const hlo::Instruction* element = root->operand(i);
    if (element->opcode() != hlo::Opcode::kParameter || element->shape().IsTuple()) continue;
    int64_t number = element->attr<hlo::ParameterAttrs>().number;
    EXPECT_TRUE(run.outputs[size_t(i)].literal.BitwiseEqual(run.inputs[size_t(number)]))
        << "out" << i << " should be argument " << number << " unchanged";
    ++checked;
  }
  return checked;
}

}  // namespace model_tests

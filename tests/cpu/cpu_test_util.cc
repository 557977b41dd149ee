#include "tests/cpu/cpu_test_util.h"

#include <gtest/gtest.h>

#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace cpu_tests {

targets::Backend& Cpu() {
  targets::Backend* backend = testing_support::Backends().Find("cpu");
  if (backend == nullptr) throw std::runtime_error("the cpu backend is not registered");
  return *backend;
}

targets::Backend& Interp() {
  targets::Backend* backend = testing_support::Backends().Find("interp");
  if (backend == nullptr) throw std::runtime_error("the interp backend is not registered");
  return *backend;
}

CpuRun RunCpu(const hlo::Module& module, const std::vector<hlo::Literal>& inputs) {
  std::unique_ptr<targets::Executable> executable = Cpu().Compile(module);
  CpuRun run;
  run.result = executable->Run(inputs);
  run.profile = executable->profile();
  run.artifacts = executable->artifacts();
  return run;
}

CpuRun ExpectMatchesInterp(const hlo::Module& module, uint64_t seed,
                           const io::Tolerance* tolerance) {
  testing_support::ComparedRun compared = testing_support::RunAgainstInterpreter(
      Cpu(), module, io::MakeRandomInputs(module, seed), tolerance);
  CpuRun run{std::move(compared.result), compared.executable->profile(),
             compared.executable->artifacts()};
  EXPECT_TRUE(compared.comparison.matched) << module.name() << ": " << compared.comparison.summary
                                           << "\nfallbacks:\n" << run.artifacts["fallbacks.txt"];
  return run;
}

CpuRun ExpectMatchesInterp(const std::string& hlo_text, uint64_t seed,
                           const io::Tolerance* tolerance) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(hlo_text);
  return ExpectMatchesInterp(*module, seed, tolerance);
}

double Counter(const CpuRun& run, const std::string& name) {
  auto it = run.profile.counters.find(name);
  return it == run.profile.counters.end() ? 0.0 : it->second;
}

}  // namespace cpu_tests

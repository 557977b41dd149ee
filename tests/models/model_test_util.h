// Helpers shared by the whole-model tests (reference_models_test, corpus_run_test): timed runs
// on a backend, element access in double, and the checks every model run must pass (result
// shapes as the module declares them, finite floating-point outputs).
//
// These helpers compute nothing model-specific: each test writes its own independent reference.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "targets/backend.h"
#include "tools/io/npz.h"

namespace model_tests {

struct TimedRun {
  hlo::Literal result;
  double compile_ms = 0;
  double run_ms = 0;
};

// Compiles `module` for `backend` and runs it once, timing both steps. Throws hlo::Error.
TimedRun CompileAndRun(targets::Backend& backend, const hlo::Module& module,
                       std::span<const hlo::Literal> inputs);

// The interpreter backend from the test registry; fails the test (returns nullptr) if missing.
targets::Backend* InterpBackend();

// Every element of an array literal as a double, in row-major order.
std::vector<double> ToDoubles(const hlo::Literal& literal);

// GoogleTest expectations: the flattened result has one array per leaf of the entry root's
// declared shape, with the same element type and dimensions; float arrays hold no NaN/inf.
void ExpectShapesAsDeclared(const hlo::Module& module, const std::vector<io::NpyArray>& outputs);
void ExpectAllFinite(const std::vector<io::NpyArray>& outputs);
// GoogleTest expectations: no array is all zero, and none of two or more elements holds a single
// value (NaN counts as a value that differs from itself: pair with ExpectAllFinite). A result
// that degenerate checks nothing when backends are compared on it.
void ExpectNotDegenerate(const std::vector<io::NpyArray>& outputs);

// The arrays as an .npz file stores them: bf16 and f16 become float32 (exactly; numpy has no
// bf16), everything else is unchanged. Expected files hold bf16 results as float32, and
// io::CompareArrays compares element types strictly.
std::vector<io::NpyArray> AsStoredInNpz(std::vector<io::NpyArray> arrays);

// The largest |actual - expected| over all arrays (matched by name), for logging how close a
// passing comparison was. NaN == NaN and equal infinities count as 0.
struct WorstError {
  double abs_error = 0;
  std::string where;  // "out0[17]"; empty when every element is exact
};
WorstError FindWorstError(const std::vector<io::NpyArray>& expected,
                          const std::vector<io::NpyArray>& actual);

// Follows reshape/bitcast/copy/transpose/broadcast back from `instruction`; returns the
// parameter number of the entry parameter it comes from, or -1.
int64_t SourceEntryParameter(const hlo::Instruction* instruction);

}  // namespace model_tests

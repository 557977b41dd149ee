// Running a model from the XLA corpus (../shared/corpus/xla) on the interpreter with the
// standard random inputs (io::MakeRandomInputs, seed 0), for corpus_run_test.
//
// RunCorpusModel guarantees, as GoogleTest expectations, that the result has the shapes the
// module declares, that every floating-point output is finite and that no output is all zero or
// one repeated value (what the inputs of value_domains.h / index_ranges.h are for); it logs the
// wall time.
// Value checks are the caller's: each test computes its own independent reference.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/module_io.h"
#include "tools/io/npz.h"

namespace model_tests {

struct CorpusRun {
  hlo::LoadedModule loaded;
  std::vector<hlo::Literal> inputs;    // after any adjustment, as passed to the run
  std::vector<io::NpyArray> outputs;   // flattened result: out0, out1, …
  double run_ms = 0;
};

// Rewrites random inputs for a test that needs a particular regime; called after
// MakeRandomInputs, before the run. The corpus models need none: MakeRandomInputs already keeps
// ids inside their tables, variances positive and kernels scaled.
using InputAdjuster = std::function<void(const hlo::Module&, std::vector<hlo::Literal>&)>;

// `stem` is the corpus file name without ".hlo". Throws hlo::Error if the model fails to load.
CorpusRun RunCorpusModel(const std::string& stem, const InputAdjuster& adjust = {});

// For a tuple root, every output that is an entry parameter passed through unchanged (a model's
// state returned as-is) must be bitwise equal to that argument. Returns how many were checked.
int ExpectPassThroughOutputsEqualArguments(const CorpusRun& run);

}  // namespace model_tests

// Helpers shared by the benchmarks: corpus access, deterministic argument filling, and an
// independent count of the floating-point work in dot/convolution instructions.
//
// Guarantees: nothing here calls the evaluator, so the FLOP counts that turn benchmark times into
// GFLOP/s are computed from shapes and attributes alone (2 flops per multiply-accumulate).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"

namespace bench {

// ../shared/corpus/xla/<file>, as configured by CMake (RETARGET_CORPUS_DIR).
std::string CorpusPath(const std::string& file);
// The whole file; throws hlo::Error when it cannot be read (the benchmark then skips).
std::string ReadFileOrThrow(const std::string& path);

// Parses (warnings suppressed) and verifies. Throws hlo::Error.
std::unique_ptr<hlo::Module> ParseAndVerify(const std::string& text, const std::string& name);

// One argument per entry parameter, filled from a fixed-seed generator: floats uniform in
// [0.5, 1.5) (positive, so batch-norm variances and rsqrt stay finite and no NaN/denormal slow
// path distorts the timing), integers 0, pred false. Tuple parameters become tuple literals.
std::vector<hlo::Literal> MakeArguments(const hlo::Module& module, uint64_t seed = 1);

// Multiply-accumulate work ×2 of every dot and convolution in the entry computation and in the
// computations it reaches through call/fusion (once per call site). Loop bodies (while) and
// conditional branches are not counted: the models benchmarked here have none on the hot path.
double ContractionFlops(const hlo::Module& module);

}  // namespace bench

// Whole-model interpreter runs from the XLA corpus: the DLRM training-metrics step and
// ResNet-50 inference (Keras on JAX, f32), both on the standard random inputs (seed 0) as
// `retarget run` draws them: embedding ids inside their tables (index_ranges.h), positive
// batch-norm variances and example counts, LeCun-scaled kernels (value_domains.h). Without those
// domains N(0,1) "variances" make ResNet's logits NaN and every backend comparison vacuous.
// Each test checks what can be computed independently of the run: state passed through
// unchanged, counters, identities between outputs, softmax properties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "tests/models/corpus_run.h"
#include "tests/models/model_test_util.h"

namespace {

using model_tests::CorpusRun;
using model_tests::RunCorpusModel;

double AsScalar(const CorpusRun& run, size_t output) {
  return run.outputs.at(output).literal.GetAsDouble(0);
}

// jit_test_step of a DLRM (5 embeddings, dot interaction, 3-layer MLP) over 3616 examples:
// returns (loss, rmse, model state unchanged, the four metric accumulators updated).
TEST(CorpusRunSlow, DlrmTestStepUpdatesItsMetrics) {
  CorpusRun run = RunCorpusModel("dlrm_keras_jax_f32_test_step");
  ASSERT_EQ(run.outputs.size(), 23u);
  EXPECT_EQ(model_tests::ExpectPassThroughOutputsEqualArguments(run), 17);

  auto arg = [&](size_t i) { return run.inputs.at(i).GetAsDouble(0); };
  constexpr double kBatch = 3616;
  // Counters: state_2[1] and state_2[3] count examples (computed in f32, as the module does).
  EXPECT_EQ(AsScalar(run, 20), double(float(arg(18)) + float(kBatch)));
  EXPECT_EQ(AsScalar(run, 22), double(float(arg(20)) + float(kBatch)));
  // Both sum-of-squares accumulators grew by the same sum of squared errors: once as
  // mean * batch (state_2[0]) and once as a plain sum (state_2[2]).
  double squared_errors_a = AsScalar(run, 19) - arg(17);
  double squared_errors_b = AsScalar(run, 21) - arg(19);
  EXPECT_GT(squared_errors_b, 0);
  EXPECT_NEAR(squared_errors_a, squared_errors_b, 1e-5 * std::fabs(squared_errors_b) + 1e-3);
  // The reported metrics are the ratios of the accumulators.
  EXPECT_NEAR(AsScalar(run, 0), AsScalar(run, 19) / AsScalar(run, 20),
              1e-6 * std::fabs(AsScalar(run, 0)));
  EXPECT_NEAR(AsScalar(run, 1), std::sqrt(AsScalar(run, 21) / AsScalar(run, 22)),
              1e-6 * std::fabs(AsScalar(run, 1)));
}

// predict_step of ResNet-50 at batch 1 (224x224x3, 25.6M parameters): softmax probabilities
// plus the model state returned unchanged. The floor is 30 s for the interpreter in Release.
TEST(CorpusRunSlow, ResNet50ProducesAProbabilityDistribution) {
  CorpusRun run = RunCorpusModel("resnet50_keras_jax_f32");
  ASSERT_GE(run.outputs.size(), 2u);
  EXPECT_EQ(model_tests::ExpectPassThroughOutputsEqualArguments(run),
            int(run.outputs.size()) - 1);

  std::vector<double> probabilities = model_tests::ToDoubles(run.outputs[0].literal);
  ASSERT_EQ(probabilities.size(), 1000u);
  double total = 0, largest = 0;
  for (double p : probabilities) {
    EXPECT_GE(p, 0.0);
    EXPECT_LE(p, 1.0);
    total += p;
    largest = std::max(largest, p);
  }
  EXPECT_NEAR(total, 1.0, 1e-4);
  // Logits that neither vanished (uniform 1/1000) nor blew up (one-hot): a distribution that
  // tells backends apart.
  EXPECT_GT(largest, 2.0 / 1000);
  EXPECT_LT(largest, 0.999);
  std::cout << "[ check    ] resnet50: sum of probabilities " << total << ", largest " << largest
            << "\n";
#ifdef NDEBUG
  EXPECT_LT(run.run_ms, 30000.0) << "ResNet-50 on the interpreter is slower than the 30 s floor";
#endif
}

}  // namespace

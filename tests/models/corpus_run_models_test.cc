// Whole-model interpreter runs from the XLA corpus: the DLRM training-metrics step and
// ResNet-50 inference (Keras on JAX, f32). These are the slow tests (label "slow" in ctest).
//
// Random N(0,1) inputs do not fit these models as they are: embedding ids must index inside
// their tables (jnp.take fills out-of-range rows with NaN), and ResNet's unscaled weights and
// negative "variances" overflow to inf/NaN within a few layers. Each test maps the random inputs
// into the model's regime first, then checks what can be computed independently of the run:
// state passed through unchanged, counters, identities between outputs, softmax properties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <vector>

#include "tests/models/corpus_run.h"
#include "tests/models/model_test_util.h"

namespace {

using model_tests::CorpusRun;
using model_tests::RunCorpusModel;
using model_tests::SourceEntryParameter;

// jnp.take(table, ids) appears as `call(table, ids)` of a computation that gathers; reduce each
// s32 id argument modulo the row count of the table it is taken from.
void KeepIdsInsideTables(const hlo::Module& module, std::vector<hlo::Literal>& inputs) {
  for (const auto& instruction : module.entry()->instructions()) {
    if (instruction->opcode() != hlo::Opcode::kCall || instruction->operand_count() != 2) continue;
    int64_t table = SourceEntryParameter(instruction->operand(0));
    int64_t ids = SourceEntryParameter(instruction->operand(1));
    if (table < 0 || ids < 0 || inputs[size_t(ids)].shape().type != hlo::PrimitiveType::kS32) {
      continue;
    }
    const int64_t rows = inputs[size_t(table)].shape().dims.at(0);
    hlo::Literal& id_values = inputs[size_t(ids)];
    for (int64_t i = 0; i < id_values.element_count(); ++i) {
      id_values.SetFromInt64(i, (id_values.GetAsInt64(i) % rows + rows) % rows);
    }
  }
}

void Scale(hlo::Literal& literal, double factor) {
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    literal.SetFromDouble(i, literal.GetAsDouble(i) * factor);
  }
}

// He-style scaling of convolution kernels and dense weights (variance 2/fan_in), and positive
// batch-norm variances (|v| + 1 for every parameter that reaches an rsqrt through add/reshape),
// so that activations stay O(1) through 50 layers.
void MakeResNetWeightsSane(const hlo::Module& module, std::vector<hlo::Literal>& inputs) {
  std::vector<bool> adjusted(inputs.size(), false);
  auto adjust_once = [&](int64_t parameter, const std::function<void(hlo::Literal&)>& fn) {
    if (parameter < 0 || adjusted[size_t(parameter)]) return;
    adjusted[size_t(parameter)] = true;
    fn(inputs[size_t(parameter)]);
  };
  for (const auto& instruction : module.entry()->instructions()) {
    const hlo::Opcode opcode = instruction->opcode();
    if (opcode == hlo::Opcode::kConvolution) {
      const hlo::Shape& kernel = instruction->operand(1)->shape();
      const auto& dnums = instruction->attr<hlo::ConvolutionAttrs>().dnums;
      const int64_t out_features = kernel.dims[size_t(dnums.kernel_output_feature)];
      double fan_in = double(kernel.ElementCount() / out_features);
      adjust_once(SourceEntryParameter(instruction->operand(1)),
                  [&](hlo::Literal& w) { Scale(w, std::sqrt(2.0 / fan_in)); });
    } else if (opcode == hlo::Opcode::kDot) {
      const hlo::Shape& rhs = instruction->operand(1)->shape();
      double fan_in = 1;
      for (int64_t d : instruction->attr<hlo::DotAttrs>().dnums.rhs_contracting) {
        fan_in *= double(rhs.dims[size_t(d)]);
      }
      adjust_once(SourceEntryParameter(instruction->operand(1)),
                  [&](hlo::Literal& w) { Scale(w, std::sqrt(1.0 / fan_in)); });
    } else if (opcode == hlo::Opcode::kRsqrt &&
               instruction->operand(0)->opcode() == hlo::Opcode::kAdd) {
      for (const hlo::Instruction* term : instruction->operand(0)->operands()) {
        adjust_once(SourceEntryParameter(term), [](hlo::Literal& variance) {
          for (int64_t i = 0; i < variance.element_count(); ++i) {
            variance.SetFromDouble(i, std::fabs(variance.GetAsDouble(i)) + 1.0);
          }
        });
      }
    }
  }
}

double AsScalar(const CorpusRun& run, size_t output) {
  return run.outputs.at(output).literal.GetAsDouble(0);
}

// jit_test_step of a DLRM (5 embeddings, dot interaction, 3-layer MLP) over 3616 examples:
// returns (loss, rmse, model state unchanged, the four metric accumulators updated).
TEST(CorpusRunSlow, DlrmTestStepUpdatesItsMetrics) {
  CorpusRun run = RunCorpusModel("dlrm_keras_jax_f32_test_step", KeepIdsInsideTables);
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
  CorpusRun run = RunCorpusModel("resnet50_keras_jax_f32", MakeResNetWeightsSane);
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
  std::cout << "[ check    ] resnet50: sum of probabilities " << total << ", largest " << largest
            << "\n";
#ifdef NDEBUG
  EXPECT_LT(run.run_ms, 30000.0) << "ResNet-50 on the interpreter is slower than the 30 s floor";
#endif
}

}  // namespace

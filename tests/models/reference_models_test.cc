// Whole-model tests against independent references: each small model in tests/data/models/ was
// lowered from JAX to HLO text, and its expected outputs were computed by a plain-numpy
// re-implementation in float64 (scripts/gen_reference_models.py; see docs/testing.md). Every
// registered backend must reproduce them within the model's tolerance.
//
// Guarantees checked: the HLO loads and verifies, the .npz inputs conform to the entry
// parameters, and every backend's flattened result MATCHES the expected .npz (same names,
// shapes and values within tolerance; NaN where numpy has NaN).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "hlo/module_io.h"
#include "tests/models/model_test_util.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"
#include "tools/io/npz.h"

namespace {

struct ReferenceModel {
  const char* name;
  io::Tolerance tolerance;  // the same (rtol, atol) the generator checked numpy against JAX with
};

// Mirrors the (rtol, atol) of each model in scripts/gen_reference_models.py. f32 models: a few
// f32 ulps of accumulated rounding against a float64 reference. attention_bf16: every stored
// tensor is bf16 (8-bit significand, ~0.4% per rounding) through softmax and two dots; numpy vs
// JAX differ by up to 0.011 there. Index-valued and permutation outputs must be exact;
// integer_and_overflow's floats allow for exp/log not being correctly rounded (its infinities
// and NaNs must match exactly).
const ReferenceModel kModels[] = {
    {"mlp", {1e-5, 1e-6}},
    {"conv_block", {1e-5, 1e-6}},
    {"attention_f32", {1e-5, 1e-5}},
    {"attention_bf16", {3e-2, 3e-2}},
    {"layer_norm", {1e-5, 1e-5}},
    {"while_loop", {1e-5, 1e-5}},
    {"embedding_lookup", {1e-6, 1e-6}},
    {"argmax", {0, 0}},
    {"sort_pairs", {0, 0}},
    {"dynamic_slice_loop", {1e-6, 1e-6}},
    {"cumsum", {1e-5, 1e-6}},
    {"integer_and_overflow", {1e-6, 0}},
    {"empty_shapes", {0, 0}},
};

// Names the model in gtest's output instead of dumping the struct's bytes.
void PrintTo(const ReferenceModel& model, std::ostream* out) { *out << model.name; }

std::string ModelPath(const std::string& name, const std::string& suffix) {
  return testing_support::TestDataPath("models/" + name + suffix);
}

class ReferenceModelTest : public ::testing::TestWithParam<ReferenceModel> {};

TEST_P(ReferenceModelTest, EveryBackendMatchesNumpy) {
  const ReferenceModel& model = GetParam();
  hlo::LoadedModule loaded = hlo::LoadModule(ModelPath(model.name, ".hlo"));
  std::vector<hlo::Literal> inputs =
      io::LoadInputs(*loaded.module, ModelPath(model.name, ".inputs.npz"));
  std::vector<io::NpyArray> expected = io::ReadNpz(ModelPath(model.name, ".expected.npz"));
  ASSERT_FALSE(expected.empty());

  const auto& backends = testing_support::Backends().backends();
  ASSERT_FALSE(backends.empty()) << "no backend registered";
  for (const auto& backend : backends) {
    SCOPED_TRACE("backend " + backend->name());
    model_tests::TimedRun run = model_tests::CompileAndRun(*backend, *loaded.module, inputs);
    std::vector<io::NpyArray> actual = io::FlattenOutputs(run.result);
    model_tests::ExpectShapesAsDeclared(*loaded.module, actual);
    actual = model_tests::AsStoredInNpz(std::move(actual));

    io::CompareResult comparison = io::CompareArrays(expected, actual, &model.tolerance);
    model_tests::WorstError worst = model_tests::FindWorstError(expected, actual);
    std::cout << "[ model    ] " << model.name << " on " << backend->name() << ": "
              << comparison.summary << "; worst |error| " << worst.abs_error
              << (worst.where.empty() ? "" : " at " + worst.where) << " (rtol "
              << model.tolerance.rtol << ", atol " << model.tolerance.atol << "), run "
              << run.run_ms << " ms\n";
    EXPECT_TRUE(comparison.matched) << comparison.summary;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ReferenceModelTest, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<ReferenceModel>& info) {
                           return std::string(info.param.name);
                         });

// Every generated model has a test above, and every test has its three files.
TEST(ReferenceModelData, EachModelFileIsListed) {
  std::vector<std::string> listed;
  for (const ReferenceModel& model : kModels) listed.push_back(model.name);
  for (const auto& entry :
       std::filesystem::directory_iterator(testing_support::TestDataPath("models"))) {
    if (entry.path().extension() != ".hlo") continue;
    std::string stem = entry.path().stem().string();
    EXPECT_NE(std::find(listed.begin(), listed.end(), stem), listed.end())
        << stem << ".hlo has no entry in kModels";
  }
  for (const std::string& name : listed) {
    for (const char* suffix : {".hlo", ".inputs.npz", ".expected.npz"}) {
      EXPECT_TRUE(std::filesystem::exists(ModelPath(name, suffix))) << name << suffix;
    }
  }
}

// The comparison is not vacuous: moving one expected element by well over the tolerance is
// reported as a mismatch at that element.
TEST(ReferenceModelData, PerturbedExpectationIsAMismatch) {
  hlo::LoadedModule loaded = hlo::LoadModule(ModelPath("mlp", ".hlo"));
  std::vector<hlo::Literal> inputs =
      io::LoadInputs(*loaded.module, ModelPath("mlp", ".inputs.npz"));
  std::vector<io::NpyArray> expected = io::ReadNpz(ModelPath("mlp", ".expected.npz"));
  ASSERT_EQ(expected.size(), 1u);
  // out0 is softmax probabilities of shape [4, 10]; element [2, 3] is linear index 23.
  expected[0].literal.SetFromDouble(23, expected[0].literal.GetAsDouble(23) + 1e-3);

  targets::Backend* interp = model_tests::InterpBackend();
  ASSERT_NE(interp, nullptr);
  std::vector<io::NpyArray> actual =
      io::FlattenOutputs(model_tests::CompileAndRun(*interp, *loaded.module, inputs).result);
  io::Tolerance tolerance{1e-5, 1e-6};
  io::CompareResult comparison = io::CompareArrays(expected, actual, &tolerance);
  EXPECT_FALSE(comparison.matched);
  EXPECT_EQ(comparison.worst_array, "out0");
  EXPECT_EQ(comparison.worst_index, (std::vector<int64_t>{2, 3}));
  EXPECT_NE(comparison.summary.find("MISMATCH"), std::string::npos) << comparison.summary;
}

// Inputs of the wrong shape are refused with an error that names the offending entry.
TEST(ReferenceModelData, InputsOfAnotherModelAreRejected) {
  hlo::LoadedModule loaded = hlo::LoadModule(ModelPath("mlp", ".hlo"));
  try {
    io::LoadInputs(*loaded.module, ModelPath("layer_norm", ".inputs.npz"));
    FAIL() << "layer_norm's inputs were accepted for mlp";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find("arg0"), std::string::npos) << error.message();
  }
}

TEST(ReferenceModelData, MissingModelFileIsAnError) {
  std::string path = ModelPath("no_such_model", ".hlo");
  try {
    hlo::LoadModule(path);
    FAIL() << "loading a missing file succeeded";
  } catch (const hlo::Error& error) {
    // The file must be named by the error itself (its location or its message).
    std::string located = error.location().file ? *error.location().file : "";
    EXPECT_TRUE(located.find("no_such_model.hlo") != std::string::npos ||
                error.message().find("no_such_model.hlo") != std::string::npos)
        << hlo::FormatError(error);
  }
}

}  // namespace

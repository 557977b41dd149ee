// The standard random inputs (io::MakeRandomInputs, seed 0 — `retarget run`'s default
// random:0) drive every corpus inference module the interpreter runs to a meaningful result:
// each output finite, not all zero and not one repeated value. Backends are compared with the
// interpreter on these inputs, so a degenerate result here (ResNet-50's logits were all NaN
// with N(0,1) batch-norm variances) would make every such comparison check nothing.
//
// RunCorpusModel (corpus_run.h) asserts the three properties; this list is the list of
// modules, so a model that starts to degenerate is named here even if its value test moves.
#include <gtest/gtest.h>

#include <string>

#include "tests/models/corpus_run.h"

namespace {

class CorpusInputs : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusInputs, EveryOutputIsFiniteAndVaries) {
  model_tests::CorpusRun run = model_tests::RunCorpusModel(GetParam());
  EXPECT_FALSE(run.outputs.empty());
}

INSTANTIATE_TEST_SUITE_P(Models, CorpusInputs,
                         ::testing::Values("layer_norm_1x4096x768_bf16",
                                           "mean_axis_1x4096x1024_bf16",
                                           "sum_axis_1x4096x1024_bf16",
                                           "mha_block_1x12x128x64_bf16",
                                           "depthwise_conv_3x3_1x256x56x56_bf16",
                                           "dynamic_slice_loop_1x2048x768_bf16",
                                           "xnn.parallel_dots.optimized",
                                           "topk_logits_k10_1x50000_bf16",
                                           "dlrm_keras_jax_f32_test_step",
                                           "resnet50_keras_jax_f32"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace

// Every corpus inference module the interpreter runs, lowered for the systolic accelerator on two
// presets with different array sizes and MATCHED against the reference interpreter on the
// standard random inputs (seed 0; see tools/io/value_domains.h for why those are meaningful):
//
//   small  gemmini (16x16 array, 256 KiB scratchpad, 64 KiB accumulators); for ResNet-50, whose
//          large layers do not fit that scratchpad, tpu-v1 reduced to a 64x64 array
//   large  tpu-v4-mxu (128x128 array, 16 MiB unified buffer)
//
// both with array.dtypes=int8,bf16,f32 so that f32 and bf16 dots and convolutions run natively
// on the matrix unit (the presets themselves multiply only int8, or int8 and bf16). Besides the
// values, each run checks who did the work: the native MAC count against the module's own
// contraction sizes (counted here from shapes), and the host-fallback share.
//
// Tolerances (|actual - expected| <= atol + rtol * |expected|):
//   bf16   compare.h's default, rtol = atol = 1e-2 (tighter than the 2e-2 the issue allows).
//   f32    compare.h's default (1e-5, 1e-6) where the accumulation order does not change the
//          result beyond that; else the bound below, named per model with its reason. The
//          matrix unit sums each k block of R rows in f32 and adds the blocks to the
//          accumulator; the interpreter sums k in one sequence. Products are rounded to f32
//          on both sides (the simulator does no fused multiply-add), so only the order of the
//          additions differs — and with it, the rounding (u = 2^-24 per addition).
// ResNet-50 takes ~25 s on its two presets (Release): its test is labelled slow
// (slow_tests.cmake).
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <iostream>
#include <optional>
#include <ostream>

#include "hlo/evaluator.h"
#include "targets/systolic/systolic_backend.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace {

struct Preset {
  std::string name;
  std::vector<std::string> overrides;  // applied after the f32-capable MXU types
};
const Preset kSmall{"gemmini", {}};
const Preset kLarge{"tpu-v4-mxu", {}};
// ResNet-50's large layers do not fit gemmini's 256 KiB scratchpad (the lowering then sends
// them to the host): its small array is a 64x64 tpu-v1 with TPU v1's 24 MiB buffer.
const Preset kResNetSmall{"tpu-v1", {"array.rows=64", "array.cols=64"}};

systolic::ArchConfig ConfigOf(const Preset& preset) {
  std::vector<std::string> overrides = {"array.dtypes=int8,bf16,f32"};
  overrides.insert(overrides.end(), preset.overrides.begin(), preset.overrides.end());
  return systolic::LoadArchConfig(preset.name, overrides);
}

// Multiply-accumulates of every dot and convolution in the module, from shapes alone: output
// elements times the contracted size (dot), or times kernel elements per output feature
// (convolution: window x input features per group; padding taps count, as the array runs them).
double ContractionMacs(const hlo::Module& module) {
  double macs = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      const double outputs = static_cast<double>(instruction->shape().ElementCount());
      if (instruction->opcode() == hlo::Opcode::kDot) {
        const hlo::Shape& lhs = instruction->operand(0)->shape();
        double contracted = 1;
        for (int64_t d : instruction->attr<hlo::DotAttrs>().dnums.lhs_contracting)
          contracted *= static_cast<double>(lhs.dims[static_cast<size_t>(d)]);
        macs += outputs * contracted;
      } else if (instruction->opcode() == hlo::Opcode::kConvolution) {
        const hlo::Shape& kernel = instruction->operand(1)->shape();
        const int64_t out_dim =
            instruction->attr<hlo::ConvolutionAttrs>().dnums.kernel_output_feature;
        macs += outputs * static_cast<double>(kernel.ElementCount()) /
                static_cast<double>(kernel.dims[static_cast<size_t>(out_dim)]);
      }
    }
  }
  return macs;
}

enum class Macs { kNone, kAll };  // no contraction runs natively / every one does

struct Expectation {
  Macs macs;
  double max_host_share;  // of all cycles; 0: every instruction runs on the accelerator
};

struct CorpusCase {
  std::string model;
  std::optional<io::Tolerance> tolerance;  // nullopt: compare.h's per-type defaults
  Expectation small, large;
};

// GoogleTest prints the parameter in test names and failures: the model, not the bytes.
void PrintTo(const CorpusCase& c, std::ostream* os) { *os << c.model; }

// Runs `model` on the interpreter once and on the systolic backend with each preset.
void ExpectMatchesOnBothPresets(const CorpusCase& c, const Preset& small = kSmall,
                                const Preset& large = kLarge) {
  auto module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::CorpusPath(c.model + ".hlo")));
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 0);
  const std::vector<io::NpyArray> expected = io::FlattenOutputs(hlo::Evaluate(*module, inputs));
  const double total_macs = ContractionMacs(*module);
  for (const auto& [preset, expectation] : {std::pair{small, c.small}, {large, c.large}}) {
    const systolic::ArchConfig config = ConfigOf(preset);
    SCOPED_TRACE(preset.name + " with a " + std::to_string(config.array_rows) + "x" +
                 std::to_string(config.array_cols) + " array");
    const auto start = std::chrono::steady_clock::now();
    auto backend =
        targets::MakeSystolicBackend(config, testing_support::Backends().Find("interp"));
    auto executable = backend->Compile(*module);
    const std::vector<io::NpyArray> actual = io::FlattenOutputs(executable->Run(inputs));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const io::CompareResult compare =
        io::CompareArrays(expected, actual, c.tolerance ? &*c.tolerance : nullptr);
    EXPECT_TRUE(compare.matched) << compare.summary;

    const auto& counters = executable->profile().counters;
    const double macs = counters.at("macs");
    const double host_share = counters.at("host_fallback_share");
    switch (expectation.macs) {
      case Macs::kNone: EXPECT_EQ(macs, 0); break;
      case Macs::kAll:
        EXPECT_GT(macs, 0);
        EXPECT_EQ(macs, total_macs);
        break;
    }
    if (expectation.max_host_share == 0) {
      EXPECT_EQ(counters.at("host_instructions"), 0);
    } else {
      EXPECT_GT(host_share, 0);
      EXPECT_LE(host_share, expectation.max_host_share);
    }
    std::cout << "[ systolic ] " << c.model << " on " << preset.name << ": " << compare.summary
              << "; " << macs << " native MACs, host share " << host_share << ", "
              << counters.at("cycles") << " cycles; compile+run " << seconds << " s\n";
  }
}

// Vector-unit only: normalization and reductions, no contraction.
constexpr Expectation kVectorOnly{Macs::kNone, 0};
// Every instruction on the accelerator, every contraction on the matrix unit.
constexpr Expectation kAllNative{Macs::kAll, 0};

class SystolicCorpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(SystolicCorpus, MatchesTheInterpreterOnTwoArraySizes) {
  ExpectMatchesOnBothPresets(GetParam());
}

// xnn.parallel_dots: out[i] = sum over 4 dots and 512 columns of (A B_d)[i, j]: 2048 terms of
// magnitude ~1 (the B_d are LeCun-scaled), partial sums up to ~4 sqrt(2048) ~ 180. The k-block
// order of the 512-long dots and the vector unit's order for the 512-long row sums change each
// rounding; errors of random sign grow like sqrt(n) u max|partial sum| ~ 45 * 6e-8 * 180 ~ 5e-4
// (the worst case, n u max|partial sum|, is 2e-2). Observed: 4.5e-5 (small), 6.7e-5 (large) on
// outputs that cancel down to 0.1, where a 1e-5 relative bound is meaningless.
constexpr io::Tolerance kParallelDotsOrder{1e-5, 5e-4};

INSTANTIATE_TEST_SUITE_P(
    Models, SystolicCorpus,
    ::testing::Values(
        CorpusCase{"layer_norm_1x4096x768_bf16", std::nullopt, kVectorOnly, kVectorOnly},
        CorpusCase{"mean_axis_1x4096x1024_bf16", std::nullopt, kVectorOnly, kVectorOnly},
        CorpusCase{"sum_axis_1x4096x1024_bf16", std::nullopt, kVectorOnly, kVectorOnly},
        CorpusCase{"mha_block_1x12x128x64_bf16", std::nullopt, kAllNative, kAllNative},
        // A depthwise convolution is a window fold on the vector unit (no matrix-unit MACs),
        // the transposes of its layout DMA programs of their own.
        CorpusCase{"depthwise_conv_3x3_1x256x56x56_bf16", std::nullopt, kVectorOnly,
                   kVectorOnly},
        CorpusCase{"xnn.parallel_dots.optimized", kParallelDotsOrder, kAllNative, kAllNative},
        // A column gather and a fusion with a non-scalar constant run on the host; every dot
        // (including the batched interaction), the embedding gathers and the reductions
        // natively.
        CorpusCase{"dlrm_keras_jax_f32_test_step", std::nullopt, {Macs::kAll, 0.25},
                   {Macs::kAll, 0.5}}),
    [](const ::testing::TestParamInfo<CorpusCase>& info) {
      std::string name = info.param.model;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// ResNet-50: softmax probabilities p = exp(l - max l) / sum, so a logit error d changes p by a
// relative d. The logits come through 53 convolutions (K up to 3x3x512 = 4608, summed in k
// blocks of 16 or 128) and the classifier (K = 2048); each reordering moves an activation by a
// few f32 ulps, and batch norm and residual adds carry those errors to the end. Observed logit
// errors: 1.4e-5 for the CPU backend (its own order), 2.9e-5 for this one on tpu-v1 (256x256),
// above the 1e-5 default; we allow 1e-4. (The 320 state outputs pass through bit-exactly.)
constexpr io::Tolerance kResNetOrder{1e-4, 1e-6};

TEST(SystolicCorpusSlow, ResNet50MatchesTheInterpreterOnTwoArraySizes) {
  // All of it on the accelerator: the stem's pads are DMA programs, its max pool strided boxes
  // folded by vmax (emit_reduce_window.h), the softmax's max a column reduction.
  ExpectMatchesOnBothPresets(CorpusCase{"resnet50_keras_jax_f32", kResNetOrder,
                                        {Macs::kAll, 0}, {Macs::kAll, 0}},
                             kResNetSmall);
}

}  // namespace

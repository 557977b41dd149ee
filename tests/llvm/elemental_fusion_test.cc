// Whole fusions from real models: each corpus module goes through the CPU target's pipeline,
// and every kLoop / kInput fusion whose body the emitter covers is JIT-compiled and compared,
// element by element, with the interpreter evaluating the same fused computation (whose
// instructions are clones of the original, unfused ones).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "hlo/evaluator.h"
#include "hlo/parser.h"
#include "targets/llvm/elemental_emitter.h"
#include "tests/llvm/elemental_test_util.h"
#include "tests/llvm/jit_harness.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace {

// Moderate random values (models' activations), small integers (indices).
hlo::Literal RandomArgument(const hlo::Shape& shape, std::mt19937_64& random) {
  hlo::Literal literal(shape);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (hlo::IsFloating(shape.type)) {
      literal.SetFromDouble(i, uniform(random));
    } else {
      literal.SetFromInt64(i, static_cast<int64_t>(random() % 8));
    }
  }
  return literal;
}

bool EmitterCovers(const hlo::Computation& computation) {
  for (const auto& inst : computation.instructions()) {
    if (!llvm_codegen::FusibleInEmitter(inst->opcode())) return false;
  }
  return true;
}

struct Tally {
  int checked = 0;
  int skipped = 0;
};

// Compares every covered kLoop/kInput fusion of `file` after the CPU pipeline.
// `shrink` replaces a batch-like extent in the text (e.g. 4096 rows -> 16) so the fusions keep
// their structure but the test stays fast: an elemental reduce is recomputed per output element.
Tally CheckFusions(const std::string& file, const std::string& extent = "",
                   const std::string& smaller = "") {
  std::string text = testing_support::ReadFile(testing_support::CorpusPath(file));
  for (size_t at = extent.empty() ? std::string::npos : text.find(extent); at != std::string::npos;
       at = text.find(extent, at + smaller.size())) {
    text.replace(at, extent.size(), smaller);
  }
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  auto module = hlo::ParseHloText(text, file, quiet);
  compiler::MakeTargetPipeline(targets::CpuDescription()).Run(*module);
  std::mt19937_64 random(1234);
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& computation : module->computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() != hlo::Opcode::kFusion) continue;
      const hlo::FusionKind kind = inst->attr<hlo::FusionAttrs>().kind;
      const hlo::Computation& body = *inst->called_computations().at(0);
      if ((kind != hlo::FusionKind::kLoop && kind != hlo::FusionKind::kInput) ||
          !EmitterCovers(body)) {
        ++tally.skipped;
        continue;
      }
      std::vector<hlo::Literal> arguments;
      std::vector<const hlo::Literal*> pointers;
      for (const hlo::Instruction* parameter : body.parameters()) {
        arguments.push_back(RandomArgument(parameter->shape(), random));
      }
      for (const hlo::Literal& argument : arguments) pointers.push_back(&argument);
      hlo::Literal expected = hlo::EvaluateComputation(body, pointers);
      hlo::Literal actual = llvm_test::RunComputation(body, arguments);
      std::vector<const hlo::Literal*> expected_parts, actual_parts;
      if (expected.IsTuple()) {
        for (const hlo::Literal& part : expected.elements()) expected_parts.push_back(&part);
        for (const hlo::Literal& part : actual.elements()) actual_parts.push_back(&part);
      } else {
        expected_parts = {&expected};
        actual_parts = {&actual};
      }
      int64_t worst = 0;
      for (size_t k = 0; k < expected_parts.size(); ++k) {
        const hlo::PrimitiveType type = expected_parts[k]->shape().type;
        for (int64_t i = 0; i < expected_parts[k]->element_count(); ++i) {
          if (hlo::IsFloating(type)) {
            worst = std::max(worst, llvm_test::UlpDistance(type, expected_parts[k]->GetAsDouble(i),
                                                           actual_parts[k]->GetAsDouble(i)));
          } else if (expected_parts[k]->GetAsInt64(i) != actual_parts[k]->GetAsInt64(i)) {
            worst = std::numeric_limits<int64_t>::max();
          }
        }
      }
      // Transcendentals inside (exp, rsqrt, tanh) may differ by an ulp from the interpreter's
      // std:: functions, and a bf16 rounding flip can carry through a few more ops.
      EXPECT_LE(worst, 4) << file << " " << inst->name();
      ++tally.checked;
    }
  }
  std::cout << file << ": " << tally.checked << " fusions checked, " << tally.skipped
            << " skipped, "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s" << std::endl;
  return tally;
}

TEST(FusionTest, LayerNormFusionsMatchTheInterpreter) {
  Tally tally = CheckFusions("layer_norm_1x4096x768_bf16.hlo", "4096", "24");
  EXPECT_GT(tally.checked, 0);
}

TEST(FusionTest, AttentionBlockFusionsMatchTheInterpreter) {
  Tally tally = CheckFusions("mha_block_1x12x128x64_bf16.hlo");
  EXPECT_GT(tally.checked, 0);
}

}  // namespace

namespace {

TEST(FusionTest, ReductionAndLoopModelsFusionsMatchTheInterpreter) {
  int checked = 0;
  checked += CheckFusions("mean_axis_1x4096x1024_bf16.hlo", "4096", "16").checked;
  checked += CheckFusions("sum_axis_1x4096x1024_bf16.hlo", "4096", "16").checked;
  checked += CheckFusions("dynamic_slice_loop_1x2048x768_bf16.hlo", "2048", "64").checked;
  checked += CheckFusions("dlrm_keras_jax_f32_test_step.hlo").checked;
  EXPECT_GT(checked, 0);
}

TEST(FusionTest, ResNet50FusionsMatchTheInterpreter) {
  EXPECT_GT(CheckFusions("resnet50_keras_jax_f32.hlo").checked, 0);
}

}  // namespace

namespace {

// A chain of diamonds, a_i = add(a_{i-1}, a_{i-1}): each generator uses its operand twice, so
// emitting (or merely copying) generators without sharing is 2^n work. With n = 64 the kernel
// must hold one fadd per link — code linear in the chain — and compute x * 2^64 exactly.
TEST(FusionTest, ChainOfDiamondsEmitsEachInstructionOnce) {
  constexpr int kLinks = 64;
  std::string text = "HloModule diamonds\nENTRY e {\n  a0 = f32[8] parameter(0)\n";
  for (int i = 1; i <= kLinks; ++i) {
    text += "  a" + std::to_string(i) + " = f32[8] add(a" + std::to_string(i - 1) + ", a" +
            std::to_string(i - 1) + ")\n";
  }
  text += "  ROOT r = f32[8] negate(a" + std::to_string(kLinks) + ")\n}\n";
  auto module = testing_support::ParseAndVerify(text);
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kF32, {8}));
  for (int64_t i = 0; i < 8; ++i) x.mutable_data<float>()[i] = 0.25f * static_cast<float>(i - 3);
  std::string ir;
  llvm_test::JitOptions options;
  options.ir_out = &ir;
  std::vector<hlo::Literal> arguments;
  arguments.push_back(std::move(x));
  hlo::Literal result = llvm_test::RunEntry(*module, arguments, options);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(result.data<float>()[i], -std::ldexp(0.25f * static_cast<float>(i - 3), kLinks));
  }
  int64_t fadds = 0;
  for (size_t at = ir.find(" fadd "); at != std::string::npos; at = ir.find(" fadd ", at + 1))
    ++fadds;
  EXPECT_EQ(fadds, kLinks) << ir.substr(0, 2000);
}

}  // namespace

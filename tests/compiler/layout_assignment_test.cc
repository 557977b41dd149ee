// Tests of the layout-assignment pass: copies where a user needs another layout, pinned
// parameters / root / bitcast operands, honest "changed", and unchanged results on small corpus
// modules.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "compiler/pass_registry.h"
#include "compiler/passes/layout_assignment.h"
#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "hlo/evaluator.h"
#include "hlo/module_io.h"
#include "tests/compiler/passes_test_util.h"
#include "targets/descriptions.h"

namespace {

using passes_test::CountOpcode;
using passes_test::Parse;
using passes_test::RunAndCheck;

std::string Layout(const hlo::Module& m, const std::string& name) {
  const hlo::Instruction* inst = m.entry()->FindInstruction(name);
  if (inst == nullptr) return "<missing " + name + ">";
  return inst->shape().ToString();
}

TEST(LayoutAssignment, ColumnMajorParameterAndRootGetCopies) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  q = f32[2,3]{1,0} parameter(1)
  a = f32[2,3]{0,1} add(p, q)
  ROOT n = f32[2,3]{0,1} negate(a)
})");
  compiler::LayoutAssignment pass(targets::CpuDescription());
  auto out = RunAndCheck(pass, *m, /*expect_changed=*/true);
  // p keeps its layout, add reads a row-major copy of it; the root's column-major layout is
  // restored by a final copy of the row-major negate.
  EXPECT_EQ(Layout(*out, "p"), "f32[2,3]{0,1}");
  EXPECT_EQ(Layout(*out, "p.copy"), "f32[2,3]{1,0}");
  EXPECT_EQ(Layout(*out, "a"), "f32[2,3]{1,0}");
  EXPECT_EQ(Layout(*out, "n"), "f32[2,3]{1,0}");
  EXPECT_EQ(CountOpcode(*out, hlo::Opcode::kCopy), 2);
  const hlo::Instruction* root = out->entry()->root();
  EXPECT_EQ(root->opcode(), hlo::Opcode::kCopy);
  EXPECT_EQ(root->shape().ToString(), "f32[2,3]{0,1}");
  EXPECT_EQ(root->operand(0)->name(), "n");
  EXPECT_EQ(out->entry()->FindInstruction("a")->operand(0)->name(), "p.copy");
}

TEST(LayoutAssignment, OneCopyIsSharedByAllUsers) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4,2]{0,1} parameter(0)
  a = f32[4,2] exponential(p)
  b = f32[4,2] negate(p)
  ROOT s = f32[4,2] add(a, b)
})");
  compiler::LayoutAssignment pass(targets::GpuDescription());
  auto out = RunAndCheck(pass, *m, true);
  EXPECT_EQ(CountOpcode(*out, hlo::Opcode::kCopy), 1);
  EXPECT_EQ(out->entry()->FindInstruction("a")->operand(0)->name(), "p.copy");
  EXPECT_EQ(out->entry()->FindInstruction("b")->operand(0)->name(), "p.copy");
}

// bitcast of a column-major [2,3] to a row-major [3,2] is a transpose. When the producer
// becomes row-major, a copy back to {0,1} must feed the bitcast or the result changes.
TEST(LayoutAssignment, BitcastKeepsSeeingItsOriginalOperandLayout) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  t = f32[2,3]{0,1} negate(p)
  ROOT b = f32[3,2]{1,0} bitcast(t)
})");
  compiler::LayoutAssignment pass(targets::CpuDescription());
  auto out = RunAndCheck(pass, *m, true);
  EXPECT_EQ(Layout(*out, "t"), "f32[2,3]{1,0}");
  const hlo::Instruction* bitcast = out->entry()->root();
  ASSERT_EQ(bitcast->operand(0)->opcode(), hlo::Opcode::kCopy);
  EXPECT_EQ(bitcast->operand(0)->shape().ToString(), "f32[2,3]{0,1}");
  // Hand-computed: p = [[1,2,3],[4,5,6]]; -p stored column-major is -1,-4,-2,-5,-3,-6, which
  // the bitcast reads as the row-major [3,2] array [[-1,-4],[-2,-5],[-3,-6]].
  hlo::Literal p(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2, 3}));
  for (int64_t i = 0; i < 6; ++i) p.SetFromDouble(i, static_cast<double>(i + 1));
  std::vector<hlo::Literal> args;
  args.push_back(std::move(p));
  hlo::Literal result = hlo::Evaluate(*out, args);
  const double expected[] = {-1, -4, -2, -5, -3, -6};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(result.GetAsDouble(i), expected[i]) << i;
}

TEST(LayoutAssignment, TupleRootKeepsElementLayouts) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  a = f32[2,3]{0,1} exponential(p)
  c = s32[5] iota(), iota_dimension=0
  ROOT t = (f32[2,3]{0,1}, s32[5]) tuple(a, c)
})");
  compiler::LayoutAssignment pass(targets::SystolicDescription());
  auto out = RunAndCheck(pass, *m, true);
  EXPECT_EQ(Layout(*out, "a"), "f32[2,3]{1,0}");
  EXPECT_EQ(Layout(*out, "t"), "(f32[2,3]{0,1}, s32[5]{0})");
  EXPECT_EQ(out->entry()->root()->operand(0)->name(), "a.copy");
  EXPECT_EQ(out->entry()->root()->operand(1)->name(), "c");
}

TEST(LayoutAssignment, WhileOperandMatchesTheBodyParameter) {
  auto m = Parse(R"(
HloModule m
body {
  s = (s32[], f32[2,3]{0,1}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2,3]{0,1} get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = f32[2,3]{0,1} add(x, x)
  ROOT r = (s32[], f32[2,3]{0,1}) tuple(i2, x2)
}
cond {
  s = (s32[], f32[2,3]{0,1}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  p = f32[2,3] parameter(0)
  x0 = f32[2,3]{0,1} negate(p)
  z = s32[] constant(0)
  init = (s32[], f32[2,3]{0,1}) tuple(z, x0)
  w = (s32[], f32[2,3]{0,1}) while(init), condition=cond, body=body
  ROOT out = f32[2,3]{0,1} get-tuple-element(w), index=1
})");
  compiler::LayoutAssignment pass(targets::CpuDescription());
  auto out = RunAndCheck(pass, *m, true);
  const hlo::Instruction* w = out->entry()->FindInstruction("w");
  ASSERT_NE(w, nullptr);
  // The loop state stays column-major (pinned); the row-major negate is copied into it.
  EXPECT_EQ(w->shape().ToString(), "(s32[], f32[2,3]{0,1})");
  EXPECT_TRUE(w->operand(0)->shape().Equal(w->shape()));
  EXPECT_EQ(Layout(*out, "x0"), "f32[2,3]{1,0}");
  // Inside the body, the add is row-major between a copy of the state and a copy back.
  const hlo::Computation* body = out->FindComputation("body");
  EXPECT_EQ(body->FindInstruction("x2")->shape().ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(body->root()->shape().ToString(), "(s32[], f32[2,3]{0,1})");
}

TEST(LayoutAssignment, DefaultLayoutsEverywhereIsNoChange) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  ROOT d = f32[2,2] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  compiler::LayoutAssignment pass(targets::CpuDescription());
  auto out = RunAndCheck(pass, *m, /*expect_changed=*/false);
  // Layouts are explicit now even though nothing printable changed.
  for (const auto& inst : out->entry()->instructions()) {
    EXPECT_TRUE(inst->shape().has_layout) << inst->name();  // all rank 2 here
  }
}

TEST(LayoutAssignment, KeepsLayoutsWhenTheTargetHasNoPreference) {
  compiler::TargetDescription target = targets::CpuDescription();
  target.prefers_row_major = false;
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p)
})");
  compiler::LayoutAssignment pass(target);
  auto out = RunAndCheck(pass, *m, false);
  EXPECT_EQ(CountOpcode(*out, hlo::Opcode::kCopy), 0);
}

// Small corpus modules: results unchanged, idempotent, honest "changed", every array shape
// has an explicit layout afterwards.
class LayoutAssignmentCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(LayoutAssignmentCorpus, PreservesResults) {
  hlo::LoadedModule loaded = hlo::LoadModule(testing_support::CorpusPath(GetParam()));
  const hlo::Module& module = *loaded.module;
  compiler::LayoutAssignment pass(targets::CpuDescription());
  std::unique_ptr<hlo::Module> copy = module.Clone();
  const bool changed = pass.Run(*copy);
  auto out = RunAndCheck(pass, module, changed);
  for (const auto& computation : out->computations()) {
    for (const auto& inst : computation->instructions()) {
      std::vector<const hlo::Shape*> leaves;
      hlo::FlattenShape(inst->shape(), leaves);
      for (const hlo::Shape* leaf : leaves) {
        EXPECT_TRUE(leaf->has_layout || leaf->rank() == 0) << inst->name();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Small, LayoutAssignmentCorpus,
                         ::testing::Values("layer_norm_1x4096x768_bf16.hlo",
                                           "mha_block_1x12x128x64_bf16.hlo",
                                           "dlrm_keras_jax_f32_test_step.hlo",
                                           "xnn.parallel_dots.optimized.hlo"),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Every corpus module (large ones included): verifies afterwards, is idempotent, and the pass
// stays fast (gemma3, ~10k instructions, well under the pipeline's 1 s budget).
TEST(LayoutAssignment, VerifiesAndIsFastOnEveryCorpusModule) {
  for (const std::string& file : testing_support::CorpusFiles()) {
    SCOPED_TRACE(file);
    auto module = hlo::LoadModule(testing_support::CorpusPath(file)).module;
    compiler::LayoutAssignment pass(targets::CpuDescription());
    const auto start = std::chrono::steady_clock::now();
    pass.Run(*module);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NO_THROW(hlo::Verify(*module));
    const std::string once = hlo::PrintModule(*module);
    EXPECT_FALSE(pass.Run(*module));
    EXPECT_EQ(once, hlo::PrintModule(*module));
    EXPECT_LT(ms, 150.0) << file;
  }
}

// After the whole cpu pipeline (fusions included) the module still evaluates like the input.
TEST(LayoutAssignment, FullCpuPipelinePreservesResults) {
  for (const char* file : {"mha_block_1x12x128x64_bf16.hlo", "layer_norm_1x4096x768_bf16.hlo"}) {
    SCOPED_TRACE(file);
    auto module = hlo::LoadModule(testing_support::CorpusPath(file)).module;
    auto optimized = module->Clone();
    compiler::MakeTargetPipeline(targets::CpuDescription()).Run(*optimized);
    EXPECT_NO_THROW(hlo::Verify(*optimized));
    std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 7);
    io::CompareResult cmp =
        io::CompareArrays(io::FlattenOutputs(hlo::Evaluate(*module, inputs)),
                          io::FlattenOutputs(hlo::Evaluate(*optimized, inputs)), nullptr);
    EXPECT_TRUE(cmp.matched) << cmp.summary;
  }
}

}  // namespace

// Control flow in GPU artifacts (gpu_compiler_control.cc): the programs a while, a conditional
// and a nested loop become, the copies that carry the loop state, and the emulator's trip limit.
// Values on every target are the run corpus's business (tests/run/control/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "targets/gpu/artifact.h"
#include "tests/gpu/codegen_expect.h"
#include "tests/small_modules.h"

namespace {

using gpu_codegen_test::ExpectMatchesInterpreter;
using ::testing::HasSubstr;

// tests/run/control/nested_while_f32.hlo: a loop inside a loop.
std::string NestedLoops() {
  return testing_support::ReadFile(std::string(RETARGET_SOURCE_DIR) +
                                   "/tests/run/control/nested_while_f32.hlo");
}

TEST(GpuCodegenControl, NestedLoopsArePrograms) {
  const gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(NestedLoops());
  const gpu::Manifest& m = compiled.artifact.manifest;
  // The inner loop's programs are built first: a program runs only earlier ones.
  ASSERT_EQ(m.programs.size(), 4u);
  EXPECT_EQ(m.programs[0].name, "loop.condition");
  EXPECT_EQ(m.programs[1].name, "w.condition");
  EXPECT_EQ(m.programs[2].name, "w.body");
  EXPECT_EQ(m.programs[3].name, "loop.body");
  const gpu::Step& last = m.steps.back();
  ASSERT_STREQ(gpu::StepKindName(last), "while");
  EXPECT_EQ(std::get<gpu::WhileLoop>(last.call).condition, 0u);
  EXPECT_EQ(std::get<gpu::WhileLoop>(last.call).body, 3u);
  bool inner_loop_in_outer_body = false;
  for (const gpu::Step& step : m.programs[3].steps) {
    if (const auto* loop = std::get_if<gpu::WhileLoop>(&step.call)) {
      inner_loop_in_outer_body = loop->condition == 1 && loop->body == 2;
    }
  }
  EXPECT_TRUE(inner_loop_in_outer_body);
  // The outer body ends by copying its root into the loop state: the counter (its old value
  // goes into the inner loop's init tuple, read there) and the row (the inner loop's result).
  const gpu::Step& tail = m.programs[3].steps.back();
  EXPECT_STREQ(gpu::StepKindName(tail), "copy");
  EXPECT_THAT(tail.name, HasSubstr("loop.next."));
  // The inner body computes its counter and its row straight into the loop state: no copy.
  for (const gpu::Step& step : m.programs[2].steps) {
    EXPECT_STRNE(gpu::StepKindName(step), "copy") << step.name;
  }
  gpu::ValidateArtifact(compiled.artifact);
  // Serialized and read back, the programs survive.
  const gpu::Artifact back = gpu::ParseArtifact(gpu::SerializeArtifact(compiled.artifact));
  EXPECT_EQ(back.manifest.programs.size(), 4u);
}

// A scan's carry is computed in place: the counter and the state row go straight into the
// loop state's slices, so a trip copies nothing; a body that swaps two leaves, or reads a leaf
// after the op that computes its next value, keeps the copies that make it right.
TEST(GpuCodegenControl, TheCarryIsComputedInPlaceWhenNothingReadsItsOldValueLater) {
  auto copies_in_body = [](const gpu::codegen::GpuCompileResult& compiled) {
    int copies = 0;
    for (const gpu::Program& program : compiled.artifact.manifest.programs) {
      if (program.name.find(".body") == std::string::npos) continue;
      for (const gpu::Step& step : program.steps) {
        copies += std::string(gpu::StepKindName(step)) == "copy" ? 1 : 0;
      }
    }
    return copies;
  };
  const std::string loop_head = R"(HloModule scan
cond {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64] get-tuple-element(s), index=1
  w = f32[64] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
)";
  const std::string loop_tail = R"(}
ENTRY e {
  x = f32[64] parameter(0)
  w = f32[64] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[64], f32[64]) tuple(zero, x, w)
  ROOT loop = (s32[], f32[64], f32[64]) while(init), condition=cond, body=body
}
)";
  // h = tanh(x * w + x): the counter and the carry in place, the weights passed through.
  EXPECT_EQ(copies_in_body(ExpectMatchesInterpreter(loop_head + R"(  m = f32[64] multiply(x, w)
  a = f32[64] add(m, x)
  h = f32[64] tanh(a)
  ROOT t = (s32[], f32[64], f32[64]) tuple(next, h, w)
)" + loop_tail)),
            0);
  // Swapping the row and the weights: each is the other's old value, so both are copied.
  EXPECT_EQ(copies_in_body(ExpectMatchesInterpreter(loop_head + R"(
  ROOT t = (s32[], f32[64], f32[64]) tuple(next, w, x)
)" + loop_tail)),
            4);  // each staged through scratch, then copied in
  // The row's old value is also the weights' next value: the new row goes to a slice of its
  // own and is copied in after the old one was staged (three copies).
  EXPECT_EQ(copies_in_body(ExpectMatchesInterpreter(loop_head + R"(  h = f32[64] negate(x)
  ROOT t = (s32[], f32[64], f32[64]) tuple(next, h, x)
)" + loop_tail)),
            3);
}

TEST(GpuCodegenControl, ConditionalBranchesWriteTheResultSlices) {
  const gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(R"(HloModule cond
neg {
  p = f32[16] parameter(0)
  ROOT n = f32[16] negate(p)
}
square {
  p = f32[16] parameter(0)
  ROOT s = f32[16] multiply(p, p)
}
keep {
  p = f32[16] parameter(0)
  ROOT c = f32[16] copy(p)
}
ENTRY e {
  k = s32[] parameter(0)
  x = f32[16] parameter(1)
  ROOT c = f32[16] conditional(k, x, x, x), branch_computations={neg, square, keep}
})");
  const gpu::Manifest& m = compiled.artifact.manifest;
  ASSERT_EQ(m.programs.size(), 3u);
  const auto& step = std::get<gpu::Conditional>(m.steps.back().call);
  EXPECT_EQ(step.selector_dtype, gpu::DType::kS32);
  EXPECT_EQ(step.branches, (std::vector<uint32_t>{0, 1, 2}));
  const gpu::Slice result = m.results.at(0).slice;
  for (const gpu::Program& branch : m.programs) {
    // Each branch computes into its own slice and copies into the conditional's result.
    const auto& copy = std::get<gpu::DeviceCopy>(branch.steps.back().call);
    EXPECT_EQ(copy.destination, result) << branch.name;
  }
}

// A loop that never ends stops at the trip limit with an error naming it (the emulator and
// retarget-gpu-run --max-iterations alike): never a hang.
TEST(GpuCodegenControl, RunawayLoopStopsAtTheLimitNamingIt) {
  std::unique_ptr<hlo::Module> module =
      testing_support::ParseAndVerify(small_modules::kRunawayLoop);
  gpu::codegen::GpuCompileOptions options;
  options.assemble = false;
  const gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*module, options);
  testing_support::ScopedWhileLimit limit(1000);
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 1);
  try {
    gpu::emulator::EmulateArtifact(compiled, inputs);
    FAIL() << "the runaway loop returned";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("the loop 'spin' (while) exceeded 1000 iterations"));
  }
}

}  // namespace

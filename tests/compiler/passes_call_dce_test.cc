// call-inliner and dce on small handwritten modules: structure checked by hand, semantics by
// evaluation before/after, honest "changed" by a second run.
#include <gtest/gtest.h>

#include "compiler/pass_registry.h"
#include "compiler/passes/async_wrapper_expander.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/target_pipelines.h"
#include "compiler/passes/dce.h"
#include "compiler/target_description.h"
#include "tests/compiler/passes_test_util.h"
#include "targets/descriptions.h"

namespace {

using hlo::Opcode;
using passes_test::CountOpcode;
using passes_test::Parse;
using passes_test::RunAndCheck;

constexpr char kNestedCalls[] = R"(
HloModule nested_calls

square {
  x = f32[4] parameter(0)
  ROOT m = f32[4] multiply(x, x)
}

add_square {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  m = f32[4] call(a), to_apply=square
  ROOT s = f32[4] add(m, b)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  m = f32[4] negate(p0)
  c1 = f32[4] call(p0, p1), to_apply=add_square
  ROOT c2 = f32[4] call(c1, m), to_apply=add_square
}
)";

TEST(CallInliner, InlinesNestedCallsAndDropsCallees) {
  auto module = Parse(kNestedCalls);
  compiler::CallInliner pass;
  auto result = RunAndCheck(pass, *module, /*expect_changed=*/true);
  EXPECT_EQ(CountOpcode(*result, Opcode::kCall), 0);
  ASSERT_EQ(result->computations().size(), 1u);  // square and add_square are unreachable now
  const hlo::Computation& entry = *result->entry();
  // 2 parameters + negate + 2 x (multiply + add).
  EXPECT_EQ(entry.instructions().size(), 7u);
  EXPECT_EQ(CountOpcode(entry, Opcode::kMultiply), 2);
  EXPECT_EQ(entry.root()->opcode(), Opcode::kAdd);
  // Names stay unique: `m` exists in the entry already, so the inlined multiplies get suffixes.
  EXPECT_NE(entry.FindInstruction("m"), nullptr);
  EXPECT_EQ(entry.FindInstruction("m")->opcode(), Opcode::kNegate);
  // add_square's own call was named `m` too, so its inlined multiply became `m.1` there; the
  // entry has no `m.1`, so the first copy keeps it and the second gets `m.1.1`.
  ASSERT_NE(entry.FindInstruction("m.1"), nullptr);
  ASSERT_NE(entry.FindInstruction("m.1.1"), nullptr);
  EXPECT_EQ(entry.FindInstruction("m.1")->opcode(), Opcode::kMultiply);
  EXPECT_EQ(entry.FindInstruction("m.1.1")->opcode(), Opcode::kMultiply);
}

TEST(CallInliner, ComputesTheSameValuesByHand) {
  // ((p0*p0 + p1)^2 + (-p0)) at p0 = 2, p1 = 1: (4 + 1)^2 - 2 = 23.
  auto module = Parse(kNestedCalls);
  compiler::CallInliner pass;
  ASSERT_TRUE(pass.Run(*module));
  hlo::Literal a(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4}));
  hlo::Literal b(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4}));
  for (int i = 0; i < 4; ++i) {
    a.SetFromDouble(i, 2.0);
    b.SetFromDouble(i, 1.0);
  }
  std::vector<hlo::Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  hlo::Literal out = hlo::Evaluate(*module, args);
  EXPECT_EQ(out.GetAsDouble(3), 23.0);
}

TEST(CallInliner, CallReturningItsParameterAndCallsInsideLoopBodies) {
  auto module = Parse(R"(
HloModule calls_in_body

identity {
  ROOT x = s32[] parameter(0)
}

increment {
  x = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT y = s32[] add(x, one)
}

body {
  t = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = s32[] get-tuple-element(t), index=1
  i1 = s32[] call(i), to_apply=increment
  v1 = s32[] call(v), to_apply=identity
  v2 = s32[] add(v1, i1)
  ROOT r = (s32[], s32[]) tuple(i1, v2)
}

cond {
  t = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  zero = s32[] constant(0)
  p = s32[] parameter(0)
  pc = s32[] call(p), to_apply=identity
  init = (s32[], s32[]) tuple(zero, pc)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT out = s32[] get-tuple-element(w), index=1
}
)");
  compiler::CallInliner pass;
  auto result = RunAndCheck(pass, *module, true);
  EXPECT_EQ(CountOpcode(*result, Opcode::kCall), 0);
  EXPECT_EQ(result->computations().size(), 3u);  // body, cond, main
  // The identity call disappears entirely: init reads the parameter directly.
  const hlo::Instruction* init = result->entry()->FindInstruction("init");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->operand(1)->opcode(), Opcode::kParameter);
  // p + (1 + 2 + 3 + 4 + 5) with p = 7.
  hlo::Literal p(hlo::Shape::Scalar(hlo::PrimitiveType::kS32));
  p.SetFromInt64(0, 7);
  std::vector<hlo::Literal> args;
  args.push_back(std::move(p));
  EXPECT_EQ(hlo::Evaluate(*result, args).GetAsInt64(0), 22);
}

TEST(CallInliner, NoCallsMeansNoChange) {
  auto module = Parse(R"(
HloModule no_calls
unused {
  ROOT x = f32[] parameter(0)
}
ENTRY main {
  ROOT p = f32[] parameter(0)
}
)");
  compiler::CallInliner pass;
  auto result = RunAndCheck(pass, *module, false);
  EXPECT_EQ(result->computations().size(), 2u);  // unreachable computations are dce's job then
}

TEST(CallInliner, ExponentialCallTreeIsABoundedError) {
  // Each level calls the next twice: 2^30 leaf copies if fully inlined.
  std::string text =
      "HloModule blowup\n\nlevel0 {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n";
  for (int level = 1; level <= 30; ++level) {
    const std::string prev = "level" + std::to_string(level - 1);
    text += "\nlevel" + std::to_string(level) +
            " {\n  x = f32[] parameter(0)\n  a = f32[] call(x), to_apply=" + prev +
            "\n  ROOT b = f32[] call(a), to_apply=" + prev + "\n}\n";
  }
  text +=
      "\nENTRY main {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=level30\n}\n";
  auto module = Parse(text);
  compiler::CallInliner pass;
  try {
    pass.Run(*module);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("would grow the module past"), std::string::npos) << e.message();
    EXPECT_GT(e.location().line, 0u);  // located at a call in the input
  }
}

TEST(Dce, RemovesDeadChainsKeepsSideEffectsAndParameters) {
  auto module = Parse(R"(
HloModule dead_code

unused_computation {
  ROOT x = f32[] parameter(0)
}

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  dead1 = f32[4] exponential(p0)
  dead2 = f32[4] add(dead1, p0)
  zero = f32[] constant(0)
  dead_reduce = f32[] reduce(dead2, zero), dimensions={0}, to_apply=sum
  effect = f32[4] custom-call(p0), custom_call_target="print", custom_call_has_side_effect=true
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT n = f32[4] negate(p0)
}
)");
  compiler::DeadCodeElimination pass;
  auto result = RunAndCheck(pass, *module, true, /*evaluate=*/false);  // custom-call "print"
  const hlo::Computation& entry = *result->entry();
  EXPECT_EQ(entry.FindInstruction("dead1"), nullptr);
  EXPECT_EQ(entry.FindInstruction("dead2"), nullptr);
  EXPECT_EQ(entry.FindInstruction("dead_reduce"), nullptr);
  EXPECT_EQ(entry.FindInstruction("zero"), nullptr);
  EXPECT_NE(entry.FindInstruction("effect"), nullptr);
  EXPECT_NE(entry.FindInstruction("r"), nullptr);   // rng is kept
  EXPECT_NE(entry.FindInstruction("lo"), nullptr);  // ... and its operands
  EXPECT_NE(entry.FindInstruction("p1"), nullptr);  // parameters are the signature
  EXPECT_EQ(entry.instructions().size(), 7u);
  // Both `sum` (its only caller died) and `unused_computation` are gone.
  EXPECT_EQ(result->computations().size(), 1u);
}

TEST(Dce, KeepsLoopsWhoseBodyHasSideEffectsAndDropsPureDeadLoops) {
  auto module = Parse(R"(
HloModule loops

effect_body {
  t = (s32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  e = () custom-call(j), custom_call_target="log", custom_call_has_side_effect=true
  ROOT r = (s32[]) tuple(j)
}

pure_body {
  t = (s32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[]) tuple(j)
}

cond1 {
  t = (s32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

cond2 {
  t = (s32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  zero = s32[] constant(0)
  init = (s32[]) tuple(zero)
  w_effect = (s32[]) while(init), condition=cond1, body=effect_body
  w_pure = (s32[]) while(init), condition=cond2, body=pure_body
  ROOT p = f32[] parameter(0)
}
)");
  compiler::DeadCodeElimination pass;
  auto result = RunAndCheck(pass, *module, true, false);
  EXPECT_NE(result->entry()->FindInstruction("w_effect"), nullptr);
  EXPECT_EQ(result->entry()->FindInstruction("w_pure"), nullptr);
  EXPECT_EQ(result->FindComputation("pure_body"), nullptr);
  EXPECT_EQ(result->FindComputation("cond2"), nullptr);
  EXPECT_NE(result->FindComputation("effect_body"), nullptr);
}

TEST(Dce, NothingDeadMeansNoChange) {
  auto module = Parse(R"(
HloModule live
ENTRY main {
  p = f32[2] parameter(0)
  e = f32[2] exponential(p)
  ROOT a = f32[2] add(e, p)
}
)");
  compiler::DeadCodeElimination pass;
  RunAndCheck(pass, *module, false);
}

TEST(Registry, BasicPassesAreRegisteredUnderTheirNames) {
  const compiler::TargetDescription& cpu = targets::CpuDescription();
  for (const char* name : {"call-inliner", "dce", "cse", "constant-folding", "tuple-simplifier",
                           "while-loop-invariant-hoisting"}) {
    std::unique_ptr<compiler::Pass> pass = compiler::MakePass(name, cpu);
    ASSERT_NE(pass, nullptr);
    EXPECT_EQ(pass->name(), name);
    EXPECT_FALSE(pass->description().empty());
  }
}

// async-wrapper-expander: the wrapping becomes a call (values unchanged: RunAndCheck evaluates
// before and after), and the pipelines then leave the wrapped op inline.
TEST(AsyncWrapperExpander, WrappingBecomesACallOfTheComputation) {
  auto module = Parse(R"(HloModule wrapped
square {
  x = f32[4] parameter(0)
  ROOT m = f32[4] multiply(x, x)
}
ENTRY main {
  p = f32[4] parameter(0)
  start = ((f32[4]), f32[4], u32[]) async-start(p), calls=square
  update = ((f32[4]), f32[4], u32[]) async-update(start)
  done = f32[4] async-done(update)
  ctx = u32[] get-tuple-element(update), index=2
  ROOT t = (f32[4], u32[]) tuple(done, ctx)
}
)");
  compiler::AsyncWrapperExpander pass;
  auto result = RunAndCheck(pass, *module, /*expect_changed=*/true);
  for (Opcode op : {Opcode::kAsyncStart, Opcode::kAsyncUpdate, Opcode::kAsyncDone})
    EXPECT_EQ(CountOpcode(*result, op), 0) << hlo::OpcodeName(op);
  EXPECT_EQ(CountOpcode(*result->entry(), Opcode::kCall), 1);
  // The whole pipeline: the multiply lands in the entry, no call or wrapping left.
  auto piped = module->Clone();
  compiler::MakeTargetPipeline(targets::CpuDescription()).Run(*piped);
  EXPECT_EQ(CountOpcode(*piped, Opcode::kCall), 0);
  EXPECT_EQ(CountOpcode(*piped, Opcode::kAsyncStart), 0);
}

}  // namespace

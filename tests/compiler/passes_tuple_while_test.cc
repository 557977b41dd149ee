// tuple-simplifier and while-loop-invariant-hoisting on small handwritten modules.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/passes/tuple_simplifier.h"
#include "compiler/passes/while_loop_invariant_hoisting.h"
#include "tests/compiler/passes_test_util.h"

namespace {

using hlo::Opcode;
using passes_test::CountOpcode;
using passes_test::Parse;
using passes_test::RunAndCheck;

TEST(TupleSimplifier, ForwardsElementsThroughNestedTuples) {
  auto module = Parse(R"(
HloModule nested
ENTRY main {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  inner = (f32[2], s32[]) tuple(a, b)
  outer = ((f32[2], s32[]), f32[2]) tuple(inner, a)
  g0 = (f32[2], s32[]) get-tuple-element(outer), index=0
  g01 = s32[] get-tuple-element(g0), index=1
  g1 = f32[2] get-tuple-element(outer), index=1
  c = f32[] convert(g01)
  cb = f32[2] broadcast(c), dimensions={}
  ROOT r = f32[2] add(g1, cb)
}
)");
  compiler::TupleSimplifier pass;
  auto result = RunAndCheck(pass, *module, true);
  const hlo::Computation& entry = *result->entry();
  EXPECT_EQ(CountOpcode(entry, Opcode::kTuple), 0);  // all unused after forwarding
  EXPECT_EQ(CountOpcode(entry, Opcode::kGetTupleElement), 0);
  EXPECT_EQ(entry.root()->operand(0)->name(), "a");
  EXPECT_EQ(entry.FindInstruction("c")->operand(0)->name(), "b");
}

TEST(TupleSimplifier, RepackedTupleIsTheOriginal) {
  auto module = Parse(R"(
HloModule repack
ENTRY main {
  p = (f32[2], s32[], pred[]) parameter(0)
  x = f32[2] get-tuple-element(p), index=0
  y = s32[] get-tuple-element(p), index=1
  z = pred[] get-tuple-element(p), index=2
  ROOT t = (f32[2], s32[], pred[]) tuple(x, y, z)
}
)");
  compiler::TupleSimplifier pass;
  auto result = RunAndCheck(pass, *module, true);
  EXPECT_EQ(result->entry()->root()->opcode(), Opcode::kParameter);
  EXPECT_EQ(result->entry()->instructions().size(), 1u);
}

TEST(TupleSimplifier, LeavesPartialReorderedAndLayoutChangingTuples) {
  auto module = Parse(R"(
HloModule keep
ENTRY main {
  p = (f32[2,2]{1,0}, s32[], s32[]) parameter(0)
  x = f32[2,2]{1,0} get-tuple-element(p), index=0
  y = s32[] get-tuple-element(p), index=1
  z = s32[] get-tuple-element(p), index=2
  swapped = (f32[2,2]{1,0}, s32[], s32[]) tuple(x, z, y)
  partial = (f32[2,2]{1,0}, s32[]) tuple(x, y)
  relaid = (f32[2,2]{0,1}, s32[], s32[]) tuple(x, y, z)
  ROOT t = ((f32[2,2]{1,0}, s32[], s32[]), (f32[2,2]{1,0}, s32[]), (f32[2,2]{0,1}, s32[], s32[])) tuple(swapped, partial, relaid)
}
)");
  compiler::TupleSimplifier pass;
  RunAndCheck(pass, *module, false);
}

// sum_{i<5} (v + exp(a) * 2): exp(a) * 2 depends only on the pass-through element `a`.
constexpr char kLoop[] = R"(
HloModule loop

body {
  t = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = f32[4] get-tuple-element(t), index=1
  a = f32[4] get-tuple-element(t), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[4] exponential(a)
  two = f32[] constant(2)
  b2 = f32[4] broadcast(two), dimensions={}
  k = f32[4] multiply(e, b2)
  v1 = f32[4] add(v, k)
  ROOT r = (s32[], f32[4], f32[4]) tuple(i1, v1, a)
}

cond {
  t = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  zero = s32[] constant(0)
  v0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  init = (s32[], f32[4], f32[4]) tuple(zero, v0, a0)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
}
)";

TEST(WhileLoopInvariantHoisting, HoistsInvariantChainAndWidensTheLoop) {
  auto module = Parse(kLoop);
  compiler::WhileLoopInvariantHoisting pass;
  auto result = RunAndCheck(pass, *module, true);
  const hlo::Computation& body = *result->FindComputation("body");
  // exp and the multiply left the body; the broadcast of a constant is not worth a loop slot
  // (it inflates data) but is cloned outside as an operand of the hoisted multiply.
  EXPECT_EQ(CountOpcode(body, Opcode::kExp), 0);
  EXPECT_EQ(CountOpcode(body, Opcode::kMultiply), 0);
  EXPECT_EQ(CountOpcode(*result->entry(), Opcode::kExp), 1);
  EXPECT_EQ(CountOpcode(*result->entry(), Opcode::kMultiply), 1);
  // One new element (the multiply's value), appended at index 3 everywhere.
  const hlo::Instruction* loop = result->entry()->FindInstruction("w");
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->shape().tuple_shapes.size(), 4u);
  EXPECT_EQ(body.parameter(0)->shape().tuple_shapes.size(), 4u);
  EXPECT_EQ(result->FindComputation("cond")->parameter(0)->shape().tuple_shapes.size(), 4u);
  EXPECT_EQ(body.root()->operand_count(), 4);
  EXPECT_EQ(body.root()->operand(3)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(body.root()->operand(3)->attr<hlo::TupleIndexAttrs>().index, 3);
  // The entry root was the loop: users still see the 3-element result.
  EXPECT_EQ(result->entry()->root()->shape().tuple_shapes.size(), 3u);
}

TEST(WhileLoopInvariantHoisting, ValuesMatchAClosedForm) {
  auto module = Parse(kLoop);
  compiler::WhileLoopInvariantHoisting pass;
  ASSERT_TRUE(pass.Run(*module));
  std::vector<hlo::Literal> args;
  for (double fill : {1.0, 0.5}) {
    hlo::Literal l(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4}));
    for (int k = 0; k < 4; ++k) l.SetFromDouble(k, fill);
    args.push_back(std::move(l));
  }
  hlo::Literal out = hlo::Evaluate(*module, args);
  ASSERT_EQ(out.elements().size(), 3u);
  const double expected = 1.0 + 5 * static_cast<double>(std::exp(0.5f)) * 2;  // v0 + 5*2e^a
  EXPECT_NEAR(out.elements()[1].GetAsDouble(0), expected, 1e-5);
  EXPECT_EQ(out.elements()[0].GetAsInt64(0), 5);
}

TEST(WhileLoopInvariantHoisting, NothingInvariantOrSharedBodyMeansNoChange) {
  auto module = Parse(R"(
HloModule shared

body {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = f32[4] get-tuple-element(t), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[4] exponential(v)
  ROOT r = (s32[], f32[4]) tuple(i1, e)
}

body2 {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = f32[4] get-tuple-element(t), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[4] exponential(v)
  l = f32[4] log(v)
  s = f32[4] add(e, l)
  ROOT r = (s32[], f32[4]) tuple(i1, v)
}

cond {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  zero = s32[] constant(0)
  v0 = f32[4] parameter(0)
  init = (s32[], f32[4]) tuple(zero, v0)
  w1 = (s32[], f32[4]) while(init), condition=cond, body=body
  w2 = (s32[], f32[4]) while(init), condition=cond, body=body2
  ROOT t = ((s32[], f32[4]), (s32[], f32[4])) tuple(w1, w2)
}
)");
  // w1: exp(v) depends on the loop-carried v. w2: the condition is shared with w1, and its
  // invariant exp/log/add are dead anyway.
  compiler::WhileLoopInvariantHoisting pass;
  RunAndCheck(pass, *module, false);
}

TEST(WhileLoopInvariantHoisting, NestedLoopsHoistThroughBothLevelsAndRngStays) {
  auto module = Parse(R"(
HloModule nested

inner_body {
  t = (s32[], f32[4], f32[4]) parameter(0)
  j = s32[] get-tuple-element(t), index=0
  acc = f32[4] get-tuple-element(t), index=1
  a = f32[4] get-tuple-element(t), index=2
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  s = f32[4] sine(a)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  noise = f32[4] rng(lo, hi), distribution=rng_uniform
  zero4 = f32[4] multiply(noise, lo4)
  lo4 = f32[4] broadcast(lo), dimensions={}
  acc1 = f32[4] add(acc, s)
  acc2 = f32[4] add(acc1, zero4)
  ROOT r = (s32[], f32[4], f32[4]) tuple(j1, acc2, a)
}

inner_cond {
  t = (s32[], f32[4], f32[4]) parameter(0)
  j = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(j, n), direction=LT
}

outer_body {
  t = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = f32[4] get-tuple-element(t), index=1
  a = f32[4] get-tuple-element(t), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, v, a)
  inner = (s32[], f32[4], f32[4]) while(init), condition=inner_cond, body=inner_body
  v1 = f32[4] get-tuple-element(inner), index=1
  ROOT r = (s32[], f32[4], f32[4]) tuple(i1, v1, a)
}

outer_cond {
  t = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  zero = s32[] constant(0)
  v0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  init = (s32[], f32[4], f32[4]) tuple(zero, v0, a0)
  w = (s32[], f32[4], f32[4]) while(init), condition=outer_cond, body=outer_body
  ROOT v = f32[4] get-tuple-element(w), index=1
}
)");
  compiler::WhileLoopInvariantHoisting pass;
  auto result = RunAndCheck(pass, *module, true, /*evaluate=*/false);  // rng in the body
  // sine(a) left the inner body, then the outer body: it is computed once, in the entry.
  EXPECT_EQ(CountOpcode(*result->FindComputation("inner_body"), Opcode::kSin), 0);
  EXPECT_EQ(CountOpcode(*result->FindComputation("outer_body"), Opcode::kSin), 0);
  EXPECT_EQ(CountOpcode(*result->entry(), Opcode::kSin), 1);
  // rng and what depends on it stay inside.
  EXPECT_EQ(CountOpcode(*result->FindComputation("inner_body"), Opcode::kRng), 1);
  EXPECT_EQ(CountOpcode(*result->FindComputation("inner_body"), Opcode::kMultiply), 1);
}

TEST(WhileLoopInvariantHoisting, RootNotATupleOrWholeParameterUseIsLeftAlone) {
  auto module = Parse(R"(
HloModule opaque_body

body {
  t = (s32[], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(t), index=1
  e = f32[4] exponential(a)
  ROOT same = (s32[], f32[4]) custom-call(t, e), custom_call_target="step"
}

cond {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  zero = s32[] constant(0)
  v0 = f32[4] parameter(0)
  init = (s32[], f32[4]) tuple(zero, v0)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)");
  compiler::WhileLoopInvariantHoisting pass;
  RunAndCheck(pass, *module, false, /*evaluate=*/false);  // "step" is not a known custom-call
}

// A loop whose body scales the pass-through element `a` by `count` different constants and
// adds every product to the carried `v`: `count` hoistable values.
std::string ManyInvariantsLoop(int count) {
  std::string body =
      "body {\n  t = (s32[], f32[4], f32[4]) parameter(0)\n"
      "  i = s32[] get-tuple-element(t), index=0\n  v = f32[4] get-tuple-element(t), index=1\n"
      "  a = f32[4] get-tuple-element(t), index=2\n  one = s32[] constant(1)\n"
      "  i1 = s32[] add(i, one)\n";
  std::string acc = "v";
  for (int k = 0; k < count; ++k) {
    const std::string n = std::to_string(k);
    body += "  c" + n + " = f32[] constant(" + std::to_string(k + 2) + ")\n";
    body += "  b" + n + " = f32[4] broadcast(c" + n + "), dimensions={}\n";
    body += "  m" + n + " = f32[4] multiply(a, b" + n + ")\n";
    body += "  s" + n + " = f32[4] add(" + acc + ", m" + n + ")\n";
    acc = "s" + n;
  }
  body += "  ROOT r = (s32[], f32[4], f32[4]) tuple(i1, " + acc + ", a)\n}\n";
  return "HloModule many\n\n" + body +
         "\ncond {\n  t = (s32[], f32[4], f32[4]) parameter(0)\n"
         "  i = s32[] get-tuple-element(t), index=0\n  n = s32[] constant(2)\n"
         "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
         "ENTRY main {\n  zero = s32[] constant(0)\n  v0 = f32[4] parameter(0)\n"
         "  a0 = f32[4] parameter(1)\n  init = (s32[], f32[4], f32[4]) tuple(zero, v0, a0)\n"
         "  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body\n"
         "  ROOT out = f32[4] get-tuple-element(w), index=1\n}\n";
}

TEST(WhileLoopInvariantHoisting, GrowthIsBounded) {
  constexpr int kMax = static_cast<int>(compiler::WhileLoopInvariantHoisting::kMaxHoistedPerLoop);
  compiler::WhileLoopInvariantHoisting pass;
  auto at_limit = RunAndCheck(pass, *Parse(ManyInvariantsLoop(kMax)), true);
  EXPECT_EQ(at_limit->entry()->FindInstruction("w")->shape().tuple_shapes.size(), 3u + kMax);
  EXPECT_EQ(CountOpcode(*at_limit->FindComputation("body"), Opcode::kMultiply), 0);
  // One more than the bound: the loop is left as it is.
  RunAndCheck(pass, *Parse(ManyInvariantsLoop(kMax + 1)), false);
}

}  // namespace

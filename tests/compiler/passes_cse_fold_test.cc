// cse and constant-folding on small handwritten modules.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "tests/compiler/passes_test_util.h"

namespace {

using hlo::Opcode;
using passes_test::CountOpcode;
using passes_test::Parse;
using passes_test::RunAndCheck;

TEST(Cse, MergesCascadingDuplicatesAndConstantsByValue) {
  auto module = Parse(R"(
HloModule dupes
ENTRY main {
  p = f32[4] parameter(0)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  b1 = f32[4] broadcast(c1), dimensions={}
  b2 = f32[4] broadcast(c2), dimensions={}
  m1 = f32[4] multiply(p, b1), metadata={op_name="first"}
  m2 = f32[4] multiply(p, b2), metadata={op_name="second"}
  e1 = f32[4] exponential(m1)
  e2 = f32[4] exponential(m2)
  ROOT s = f32[4] add(e1, e2)
}
)");
  compiler::CommonSubexpressionElimination pass;
  auto result = RunAndCheck(pass, *module, true);
  const hlo::Computation& entry = *result->entry();
  // One constant, broadcast, multiply and exponential survive: the first of each pair.
  EXPECT_EQ(entry.instructions().size(), 6u);
  EXPECT_NE(entry.FindInstruction("m1"), nullptr);
  EXPECT_EQ(entry.FindInstruction("m2"), nullptr);
  EXPECT_EQ(entry.root()->operand(0), entry.root()->operand(1));
  EXPECT_EQ(entry.root()->operand(0)->name(), "e1");
}

TEST(Cse, KeepsDifferentAttributesLayoutsValuesAndSideEffects) {
  auto module = Parse(R"(
HloModule distinct
ENTRY main {
  p = f32[2,3] parameter(0)
  s1 = f32[1,3] slice(p), slice={[0:1], [0:3]}
  s2 = f32[1,3] slice(p), slice={[1:2], [0:3]}
  t1 = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  t2 = f32[3,2]{0,1} transpose(p), dimensions={1,0}
  z = f32[] constant(0)
  negz = f32[] constant(-0)
  nan1 = f32[] constant(nan)
  nan2 = f32[] constant(nan)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[2] rng(lo, hi), distribution=rng_uniform
  r2 = f32[2] rng(lo, hi), distribution=rng_uniform
  ROOT t = (f32[1,3], f32[1,3], f32[3,2]{1,0}, f32[3,2]{0,1}, f32[], f32[], f32[], f32[], f32[2], f32[2]) tuple(s1, s2, t1, t2, z, negz, nan1, nan2, r1, r2)
}
)");
  compiler::CommonSubexpressionElimination pass;
  auto result = RunAndCheck(pass, *module, true, /*evaluate=*/false);  // rng differs per run
  const hlo::Computation& entry = *result->entry();
  const hlo::Instruction* root = entry.root();
  EXPECT_NE(root->operand(0), root->operand(1));  // different slices
  EXPECT_NE(root->operand(2), root->operand(3));  // same transpose, different layouts
  EXPECT_NE(root->operand(4), root->operand(5));  // +0 and -0 differ bit for bit
  EXPECT_EQ(root->operand(6), root->operand(7));  // the same NaN bits are one constant
  EXPECT_NE(root->operand(8), root->operand(9));  // rng never merges
  // lo merged into z (both +0), nan2 into nan1.
  EXPECT_EQ(entry.FindInstruction("lo"), nullptr);
  EXPECT_EQ(entry.FindInstruction("nan2"), nullptr);
}

TEST(Cse, ElidedConstantsAndBackendConfigsAreNotMerged) {
  auto module = Parse(R"(
HloModule elided
ENTRY main {
  a = f32[64] constant({...})
  b = f32[64] constant({...})
  p = f32[64] parameter(0)
  x = f32[64] add(p, a), backend_config={"k":1}
  y = f32[64] add(p, a), backend_config={"k":2}
  ROOT t = (f32[64], f32[64], f32[64], f32[64]) tuple(a, b, x, y)
}
)");
  compiler::CommonSubexpressionElimination pass;
  auto result = RunAndCheck(pass, *module, false);
  EXPECT_EQ(result->entry()->instructions().size(), 6u);
}

TEST(Cse, MergesInsideCalledComputationsAndSameCallees) {
  auto module = Parse(R"(
HloModule nested
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  n1 = f32[] negate(a)
  n2 = f32[] negate(a)
  s = f32[] add(n1, n2)
  ROOT r = f32[] add(s, b)
}
ENTRY main {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=sum
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=sum
  ROOT m = f32[] multiply(r1, r2)
}
)");
  compiler::CommonSubexpressionElimination pass;
  auto result = RunAndCheck(pass, *module, true);
  EXPECT_EQ(CountOpcode(*result->entry(), Opcode::kReduce), 1);
  EXPECT_EQ(CountOpcode(*result->FindComputation("sum"), Opcode::kNegate), 1);
}

TEST(ConstantFolding, FoldsChainsWithIntegerAndFloatEdgeCases) {
  auto module = Parse(R"(
HloModule fold
ENTRY main {
  imax = s32[] constant(2147483647)
  one = s32[] constant(1)
  wrapped = s32[] add(imax, one)
  zero = s32[] constant(0)
  div0 = s32[] divide(one, zero)
  inf = f32[] constant(inf)
  ninf = f32[] constant(-inf)
  nan = f32[] add(inf, ninf)
  m = f32[] maximum(nan, inf)
  two = f32[2] constant({1.5, -2.5})
  r = f32[2] round-nearest-even(two)
  p = f32[2] parameter(0)
  use = f32[2] add(p, r)
  ROOT t = (s32[], s32[], f32[], f32[2]) tuple(wrapped, div0, m, use)
}
)");
  compiler::ConstantFolding pass;
  auto result = RunAndCheck(pass, *module, true);
  const hlo::Computation& entry = *result->entry();
  auto value = [&](const char* name) -> const hlo::Literal& {
    const hlo::Instruction* inst = entry.FindInstruction(name);
    EXPECT_NE(inst, nullptr) << name;
    EXPECT_EQ(inst->opcode(), Opcode::kConstant) << name;
    return inst->attr<hlo::ConstantAttrs>().literal;
  };
  EXPECT_EQ(value("wrapped").GetAsInt64(0), -2147483648LL);  // two's complement wrap
  EXPECT_EQ(value("div0").GetAsInt64(0), -1);                // x/0 = -1 (ir.h)
  EXPECT_TRUE(std::isnan(value("m").GetAsDouble(0)));        // max propagates NaN
  EXPECT_EQ(value("r").GetAsDouble(0), 2.0);                 // ties to even
  EXPECT_EQ(value("r").GetAsDouble(1), -2.0);
  // The intermediate NaN of the chain was folded into `m` and removed; the parameter's add
  // stays.
  EXPECT_EQ(entry.FindInstruction("nan"), nullptr);
  EXPECT_EQ(entry.FindInstruction("use")->opcode(), Opcode::kAdd);
}

TEST(ConstantFolding, FoldsReduceAndKeepsLayoutAndName) {
  auto module = Parse(R"(
HloModule fold_reduce
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  c = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})
  t = f32[3,2]{0,1} transpose(c), dimensions={1,0}
  z = f32[] constant(0)
  ROOT rows = f32[3]{0} reduce(t, z), dimensions={1}, to_apply=sum
}
)");
  compiler::ConstantFolding pass;
  auto result = RunAndCheck(pass, *module, true);
  const hlo::Instruction* root = result->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kConstant);
  EXPECT_EQ(root->name(), "rows");
  const hlo::Literal& rows = root->attr<hlo::ConstantAttrs>().literal;
  EXPECT_EQ(rows.GetAsDouble(0), 5.0);                        // 1 + 4
  EXPECT_EQ(rows.GetAsDouble(1), 7.0);                        // 2 + 5
  EXPECT_EQ(rows.GetAsDouble(2), 9.0);                        // 3 + 6
  EXPECT_EQ(result->entry()->FindInstruction("t"), nullptr);  // folded on the way
}

TEST(ConstantFolding, SkipsBroadcastLargeIotaElidedRngAndHugeResults) {
  auto module = Parse(R"(
HloModule no_fold
ENTRY main {
  c = f32[] constant(3)
  b = f32[1024] broadcast(c), dimensions={}
  i = s32[1024] iota(), iota_dimension=0
  e = f32[16] constant({...})
  n = f32[16] negate(e)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  big = f32[300,300] constant({...})
  c2 = f32[] constant(2)
  ROOT t = (f32[1024], s32[1024], f32[16], f32[4], f32[300,300], f32[]) tuple(b, i, n, r, big, c2)
}
)");
  compiler::ConstantFolding pass;
  RunAndCheck(pass, *module, false, /*evaluate=*/false);
}

TEST(ConstantFolding, SmallIotaFoldsAndResultSizeLimitHolds) {
  auto module = Parse(R"(
HloModule small_iota
ENTRY main {
  i = s32[4] iota(), iota_dimension=0
  two = s32[4] constant({2, 2, 2, 2})
  m = s32[4] multiply(i, two)
  big = f32[65537] iota(), iota_dimension=0
  ROOT t = (s32[4], f32[65537]) tuple(m, big)
}
)");
  compiler::ConstantFolding pass;
  auto result = RunAndCheck(pass, *module, true);
  const hlo::Instruction* m = result->entry()->FindInstruction("m");
  ASSERT_EQ(m->opcode(), Opcode::kConstant);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(m->attr<hlo::ConstantAttrs>().literal.GetAsInt64(k), 2 * k);
  EXPECT_EQ(result->entry()->FindInstruction("big")->opcode(), Opcode::kIota);
}

TEST(ConstantFolding, EmptyArraysFoldAndMerge) {
  auto module = Parse(R"(
HloModule empty
ENTRY main {
  e = f32[0,3] constant({})
  n = f32[0,3] negate(e)
  n2 = f32[0,3] negate(e)
  p = f32[0,3] parameter(0)
  a = f32[0,3] add(p, n)
  ROOT t = (f32[0,3], f32[0,3]) tuple(a, n2)
}
)");
  compiler::ConstantFolding fold;
  auto folded = RunAndCheck(fold, *module, true);
  EXPECT_EQ(folded->entry()->FindInstruction("n")->opcode(), Opcode::kConstant);
  EXPECT_EQ(
      folded->entry()->FindInstruction("n")->attr<hlo::ConstantAttrs>().literal.element_count(), 0);
  // The two folded empty constants are equal by value, so CSE merges them.
  compiler::CommonSubexpressionElimination cse;
  auto merged = RunAndCheck(cse, *folded, true);
  EXPECT_EQ(merged->entry()->FindInstruction("n2"), nullptr);
}

TEST(ConstantFolding, SmallDotFoldsLongDotIsBoundedByWork) {
  auto module = Parse(R"(
HloModule dots
ENTRY main {
  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})
  small = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  l = f32[256,2048] constant({...})
  r = f32[2048,256] constant({...})
  long = f32[256,256] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,2], f32[256,256]) tuple(small, long)
}
)");
  // Pretend the big operands were real values (a proto dump carries them): only the work
  // bound (256*256 results x 2048 steps = 2^27 > kMaxFoldWork) may keep `long` unfolded.
  for (const char* name : {"l", "r"}) {
    module->entry()->FindInstruction(name)->mutable_attr<hlo::ConstantAttrs>().elided = false;
  }
  compiler::ConstantFolding pass;
  auto result = RunAndCheck(pass, *module, true, /*evaluate=*/false);
  const hlo::Instruction* small = result->entry()->FindInstruction("small");
  ASSERT_EQ(small->opcode(), Opcode::kConstant);
  // [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[1+3, 2+3], [4+6, 5+6]].
  const hlo::Literal& v = small->attr<hlo::ConstantAttrs>().literal;
  EXPECT_EQ(v.GetAsDouble(0), 4.0);
  EXPECT_EQ(v.GetAsDouble(1), 5.0);
  EXPECT_EQ(v.GetAsDouble(2), 10.0);
  EXPECT_EQ(v.GetAsDouble(3), 11.0);
  EXPECT_EQ(result->entry()->FindInstruction("long")->opcode(), Opcode::kDot);
}

}  // namespace

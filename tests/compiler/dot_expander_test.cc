// DotExpander: which dots it rewrites for a target whose dot rule is "a library for f32, bf16
// and f16, generated code otherwise" (the cpu and gpu form), which it leaves, and that every
// rewrite computes bit-identical values to the original on the interpreter.
#include <gtest/gtest.h>

#include "compiler/passes/dot_expander.h"
#include "tests/compiler/simplify_test_util.h"

namespace {

using compiler::OpHandling;
using simplify_test::Compare;
using simplify_test::CountOpcode;
using simplify_test::Entry;
using simplify_test::RunPass;

compiler::TargetDescription LibraryForFloats(OpHandling otherwise) {
  compiler::TargetDescription target;
  target.name = "test";
  target.op_rules[hlo::Opcode::kDot] =
      compiler::OpRule{OpHandling::kLibrary, "gemm",
                       {hlo::PrimitiveType::kF32, hlo::PrimitiveType::kBF16,
                        hlo::PrimitiveType::kF16},
                       otherwise};
  return target;
}

TEST(DotExpander, Int8DotBecomesOneMultiplyReduceWithTheSameValues) {
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = s8[5,7] parameter(0)
  p1 = s8[7,3] parameter(1)
  ROOT r = s32[5,3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0})"));
  compiler::DotExpander pass(LibraryForFloats(OpHandling::kGenerated));
  auto result = RunPass(pass, *module, /*expect_changed=*/true, Compare::kBitExact);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kDot), 0);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kReduce), 1);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kMultiply), 1);
  const hlo::Instruction* root = result->entry()->root();
  ASSERT_EQ(root->opcode(), hlo::Opcode::kReduce);
  EXPECT_EQ(root->operand(0)->shape().dims, (std::vector<int64_t>{5, 3, 7}));
}

TEST(DotExpander, GeneralDimensionNumbersKeepTheirValues) {
  // Batch dim in the middle, contracting dims out of order, free dims on both sides.
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = s32[2,3,4,5] parameter(0)
  p1 = s32[5,3,6,2] parameter(1)
  ROOT r = s32[3,4,6] dot(p0, p1), lhs_batch_dims={1}, rhs_batch_dims={1}, lhs_contracting_dims={3,0}, rhs_contracting_dims={0,3})"));
  compiler::DotExpander pass(LibraryForFloats(OpHandling::kGenerated));
  auto result = RunPass(pass, *module, true, Compare::kBitExact);
  EXPECT_EQ(CountOpcode(*result, hlo::Opcode::kDot), 0);
}

TEST(DotExpander, MixedPrecisionDotGetsWideningConverts) {
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = bf16[4,6] parameter(0)
  p1 = bf16[6,3] parameter(1)
  ROOT r = f32[4,3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0})"));
  compiler::DotExpander pass(LibraryForFloats(OpHandling::kGenerated));
  auto result = RunPass(pass, *module, true, Compare::kBitExact);
  const hlo::Instruction* dot = result->entry()->root();
  ASSERT_EQ(dot->opcode(), hlo::Opcode::kDot);
  EXPECT_EQ(dot->operand(0)->opcode(), hlo::Opcode::kConvert);
  EXPECT_EQ(dot->operand(0)->shape().type, hlo::PrimitiveType::kF32);
  EXPECT_EQ(dot->operand(1)->shape().type, hlo::PrimitiveType::kF32);
}

// f64 operands into an f32 result: converting them to f32 would round them before the sum; an
// f64 dot (its sum in f64, as the original's) converted once keeps the values bit for bit.
TEST(DotExpander, F64OperandsIntoANarrowerResultSumInF64ThenConvert) {
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = f64[9,40] parameter(0)
  p1 = f32[40,5] parameter(1)
  ROOT r = f32[9,5] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0})"));
  compiler::DotExpander pass(LibraryForFloats(OpHandling::kGenerated));
  auto result = RunPass(pass, *module, true, Compare::kBitExact);
  const hlo::Instruction* root = result->entry()->root();
  ASSERT_EQ(root->opcode(), hlo::Opcode::kConvert);
  EXPECT_EQ(root->shape().type, hlo::PrimitiveType::kF32);
  const hlo::Instruction* dot = root->operand(0);
  ASSERT_EQ(dot->opcode(), hlo::Opcode::kDot);
  EXPECT_EQ(dot->shape().type, hlo::PrimitiveType::kF64);
  EXPECT_EQ(dot->operand(0)->shape().type, hlo::PrimitiveType::kF64);
  EXPECT_EQ(dot->operand(1)->opcode(), hlo::Opcode::kConvert);  // f32 -> f64: exact
  EXPECT_EQ(dot->operand(1)->shape().type, hlo::PrimitiveType::kF64);
}

TEST(DotExpander, LeavesWhatTheTargetRunsItself) {
  // f64 is outside the library's types but not an integer: the target's own path (the cpu's
  // f64 contraction) keeps it. A library dot stays a dot.
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = f64[4,6] parameter(0)
  p1 = f64[6,3] parameter(1)
  d = f64[4,3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  p2 = f32[4,6] parameter(2)
  p3 = f32[6,3] parameter(3)
  e = f32[4,3] dot(p2, p3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f64[4,3], f32[4,3]) tuple(d, e))"));
  compiler::DotExpander pass(LibraryForFloats(OpHandling::kGenerated));
  RunPass(pass, *module, /*expect_changed=*/false, Compare::kNone);
}

TEST(DotExpander, IntegerDotsStayWhereTheRuleSaysHostFallback) {
  // The description decides: when other types are not generated code, an integer dot is left
  // for the target's fallback (and the report counts it as such).
  auto module = testing_support::ParseAndVerify(Entry(R"(p0 = s8[5,7] parameter(0)
  p1 = s8[7,3] parameter(1)
  ROOT r = s32[5,3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0})"));
  compiler::DotExpander host(LibraryForFloats(OpHandling::kHostFallback));
  RunPass(host, *module, false, Compare::kNone);
  compiler::DotExpander no_rule{compiler::TargetDescription{}};
  RunPass(no_rule, *module, false, Compare::kNone);
}

}  // namespace

// reduce (plain and variadic) and the emitter's API contract: memoization of shared
// subexpressions per index, scalar computations, and hlo::Errors for what it cannot emit.
#include <gtest/gtest.h>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "targets/llvm/elemental_emitter.h"
#include "tests/llvm/elemental_test_util.h"
#include "tests/llvm/jit_harness.h"
#include "tests/test_support.h"

namespace {

using hlo::PrimitiveType;

std::vector<hlo::Literal> Arguments(const hlo::Module& module) {
  std::vector<hlo::Literal> arguments;
  uint64_t seed = 11;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    arguments.push_back(llvm_test::MakeInput(parameter->shape(), static_cast<int>(seed % 2), seed));
    ++seed;
  }
  return arguments;
}

std::string Check(const std::string& text, int64_t max_ulp = 0) {
  auto module = testing_support::ParseAndVerify(text);
  return llvm_test::CompareWithInterpreter(*module, Arguments(*module), max_ulp);
}

const char* kReducers = R"(HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
mul_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] multiply(a, b)
}
or_pred {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] or(a, b)
}
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
)";

TEST(ReduceTest, SumsInTheInterpretersOrderBitForBit) {
  // Float sums are order-sensitive: bit equality shows the loop nest runs in row-major order.
  EXPECT_EQ(Check(std::string(kReducers) + R"(ENTRY e {
  p = f32[5,7,9]{0,2,1} parameter(0)
  z = f32[] constant(0)
  a = f32[5,9] reduce(p, z), dimensions={1}, to_apply=add_f32
  b = f32[7]{0} reduce(p, z), dimensions={0,2}, to_apply=add_f32
  c = f32[] reduce(p, z), dimensions={0,1,2}, to_apply=add_f32
  ROOT o = (f32[5,9], f32[7]{0}, f32[]) tuple(a, b, c)
})"),
            "");
}

TEST(ReduceTest, OtherTypesAndEmptyReductions) {
  EXPECT_EQ(Check(std::string(kReducers) + R"(ENTRY e {
  p = bf16[6,33] parameter(0)
  i = bf16[] constant(-inf)
  m = bf16[6] reduce(p, i), dimensions={1}, to_apply=max_bf16
  z = bf16[] constant(0)
  s = bf16[33] reduce(p, z), dimensions={0}, to_apply=add_bf16
  q = s32[4,3] parameter(1)
  one = s32[] constant(1)
  r = s32[3] reduce(q, one), dimensions={0}, to_apply=mul_s32
  e = f32[0,4] parameter(2)
  ze = f32[] constant(7)
  x = f32[4] reduce(e, ze), dimensions={0}, to_apply=add_f32
  b = pred[5,2] parameter(3)
  f = pred[] constant(false)
  y = pred[2] reduce(b, f), dimensions={0}, to_apply=or_pred
  ROOT o = (bf16[6], bf16[33], s32[3], f32[4], pred[2]) tuple(m, s, r, x, y)
})"),
            "");
}

TEST(ReduceTest, VariadicArgmax) {
  EXPECT_EQ(Check(R"(HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[4,50] parameter(0)
  idx = s32[4,50] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[4], s32[4]) reduce(p, idx, ninf, zero), dimensions={1}, to_apply=argmax
  v = f32[4] get-tuple-element(r), index=0
  i = s32[4] get-tuple-element(r), index=1
  ROOT o = (f32[4], s32[4]) tuple(v, i)
})"),
            "");
}

// The emitter used directly: IR text of a function that evaluates a computation at index 0.
std::string EmitAtIndexZero(const std::string& text) {
  auto module = testing_support::ParseAndVerify(text);
  std::string ir;
  llvm_test::JitOptions options;
  options.ir_out = &ir;
  options.optimize = false;
  std::vector<hlo::Literal> arguments = Arguments(*module);
  llvm_test::RunEntry(*module, arguments, options);
  return ir;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

TEST(EmitterTest, SharedSubexpressionIsEmittedOncePerIndex) {
  // x is used twice at the same index: one exp call. y reads x at a reversed index: a second.
  const std::string same = EmitAtIndexZero(
      "HloModule m\nENTRY e {\n  p = f64[8] parameter(0)\n  x = f64[8] exponential(p)\n"
      "  ROOT r = f64[8] multiply(x, x)\n}\n");
  EXPECT_EQ(Count(same, "call double @exp("), 1u) << same;
  const std::string different = EmitAtIndexZero(
      "HloModule m\nENTRY e {\n  p = f64[8] parameter(0)\n  x = f64[8] exponential(p)\n"
      "  y = f64[8] reverse(x), dimensions={0}\n  ROOT r = f64[8] add(x, y)\n}\n");
  EXPECT_EQ(Count(different, "call double @exp("), 2u) << different;
}

TEST(EmitterTest, ReductionReusedInsideAnotherReductionIsEmittedOnce) {
  // softmax: the row maximum feeds both the numerator and the loop of the row sum; the sum's
  // loop reuses the maximum computed before it (one loop nest for `m`, not one per iteration),
  // also when reached through a reshape that only drops a unit dimension.
  const std::string text = std::string(kReducers) + R"(max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,16] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  m1 = f32[4,1] reshape(m)
  m2 = f32[4] reshape(m1)
  mb = f32[4,16] broadcast(m2), dimensions={0}
  d = f32[4,16] subtract(x, mb)
  ex = f32[4,16] exponential(d)
  zero = f32[] constant(0)
  s = f32[4] reduce(ex, zero), dimensions={1}, to_apply=add_f32
  sb = f32[4,16] broadcast(s), dimensions={0}
  ROOT r = f32[4,16] divide(ex, sb)
})";
  const std::string ir = EmitAtIndexZero(text);
  EXPECT_EQ(Count(ir, "\nm.reduce.header"), 1u) << ir;
  EXPECT_EQ(Count(ir, "\ns.reduce.header"), 1u) << ir;
  EXPECT_EQ(Check(text, 2), "");
}

TEST(EmitterTest, ScalarComputationAndErrors) {
  llvm::LLVMContext context;
  llvm::Module module("m", context);
  llvm::IRBuilder<> builder(context);
  llvm::Function* function =
      llvm::Function::Create(llvm::FunctionType::get(builder.getVoidTy(), false),
                             llvm::Function::ExternalLinkage, "f", module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
  llvm_codegen::ElementalEmitter emitter(builder, module);
  auto hlo_module = testing_support::ParseAndVerify(std::string(kReducers) + R"(ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[2,2] convert(d)
  ROOT n = f32[2,2] negate(c)
})");
  // add_f32 on two constants folds to the constant 5.
  llvm::Value* two = llvm::ConstantFP::get(builder.getFloatTy(), 2.0);
  llvm::Value* three = llvm::ConstantFP::get(builder.getFloatTy(), 3.0);
  std::vector<llvm::Value*> arguments = {two, three};
  std::vector<llvm::Value*> sum =
      emitter.EmitScalarComputation(*hlo_module->FindComputation("add_f32"), arguments);
  ASSERT_EQ(sum.size(), 1u);
  auto* constant = llvm::dyn_cast<llvm::ConstantFP>(sum[0]);
  ASSERT_NE(constant, nullptr);
  EXPECT_EQ(constant->getValueAPF().convertToFloat(), 5.0f);

  const hlo::Computation& entry = *hlo_module->entry();
  try {
    emitter.MakeGenerator(*entry.FindInstruction("d"), {});
    FAIL() << "dot is not elemental";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find("cannot emit 'd' (dot): not an elemental opcode"),
              std::string::npos)
        << error.message();
  }
  try {
    emitter.MakeGenerator(*entry.FindInstruction("n"), {});
    FAIL() << "missing operand generators";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find("given 0 operand generators for 1 operands"), std::string::npos)
        << error.message();
  }
  try {
    emitter.MakeComputationGenerator(entry, {});
    FAIL() << "a computation with a dot is not elemental";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find("(parameter): no generator for parameter 0"), std::string::npos)
        << error.message();
  }
  // An integer-only op on floats is refused when the generator is made.
  auto bad = testing_support::ParseAndVerify(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] exponential(p)\n}\n");
  hlo::Instruction* root = bad->entry()->root();
  hlo::Instruction fake_not("fake", hlo::Opcode::kNot, root->shape());
  fake_not.AppendOperand(root->operand(0));
  try {
    emitter.MakeGenerator(fake_not, {[](const llvm_codegen::IrIndex&) { return nullptr; }});
    FAIL() << "not on f32";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find("cannot emit 'fake' (not): not defined for f32"),
              std::string::npos)
        << error.message();
  }
  fake_not.ClearOperands();  // leave the module's user lists as they were
  EXPECT_TRUE(llvm_codegen::FusibleInEmitter(hlo::Opcode::kReduce));
  EXPECT_FALSE(llvm_codegen::FusibleInEmitter(hlo::Opcode::kGather));
  EXPECT_FALSE(llvm_codegen::FusibleInEmitter(hlo::Opcode::kDot));
}

}  // namespace

// Control flow, calls, custom-calls, collectives, rng and the evaluator core (progress,
// located errors) against hand-computed values.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "tests/hlo/eval_test_util.h"
#include "tests/test_support.h"

namespace {

using namespace eval_test;
constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType S32 = PrimitiveType::kS32;

using testing_support::ScopedWhileLimit;

std::string ExpectError(const std::string& text, const std::vector<Literal>& args,
                        const hlo::EvaluatorOptions& options = {}) {
  try {
    RunHlo(text, args, options);
  } catch (const hlo::Error& e) {
    return e.message();
  }
  ADD_FAILURE() << "expected an hlo::Error";
  return "";
}

// (i, acc) -> (i + 1, acc * 2) while i < limit.
const char* kDoublingLoop = R"(HloModule m
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  limit = s32[] constant(10)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  two = f32[] constant(2)
  next_i = s32[] add(i, one)
  next_acc = f32[] multiply(acc, two)
  ROOT t = (s32[], f32[]) tuple(next_i, next_acc)
}
ENTRY e {
  i0 = s32[] parameter(0)
  acc0 = f32[] constant(1)
  init = (s32[], f32[]) tuple(i0, acc0)
  loop = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT acc = f32[] get-tuple-element(loop), index=1
})";

TEST(EvalControl, WhileWithCounter) {
  EXPECT_FLOATS(RunHlo(kDoublingLoop, {MakeInt(S32, {}, {0})}), {1024});
  EXPECT_FLOATS(RunHlo(kDoublingLoop, {MakeInt(S32, {}, {7})}), {8});
  EXPECT_FLOATS(RunHlo(kDoublingLoop, {MakeInt(S32, {}, {10})}), {1});  // body never runs
}

TEST(EvalControl, WhileIsBoundedByTheIterationLimit) {
  ScopedWhileLimit limit(5);
  EXPECT_FLOATS(RunHlo(kDoublingLoop, {MakeInt(S32, {}, {5})}), {32});  // exactly 5 iterations
  std::string message = ExpectError(kDoublingLoop, {MakeInt(S32, {}, {0})});
  EXPECT_NE(message.find("exceeded 5 iterations"), std::string::npos) << message;
  EXPECT_NE(message.find("loop"), std::string::npos) << message;
}

TEST(EvalControl, InfiniteLoopIsAnErrorNotAHang) {
  ScopedWhileLimit limit(1000);
  std::string text = R"(HloModule m
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = s32[] parameter(0)
  ROOT n = s32[] negate(s)
}
ENTRY e {
  x = s32[] parameter(0)
  ROOT w = s32[] while(x), condition=cond, body=body
})";
  std::string message = ExpectError(text, {MakeInt(S32, {}, {1})});
  EXPECT_NE(message.find("exceeded 1000"), std::string::npos) << message;
}

TEST(EvalControl, WhileUpdatingACarriedBuffer) {
  // Writes i into element i of a carried buffer for i = 0..4 (exercises the in-place
  // dynamic-update-slice path inside a loop body).
  std::string text = R"(HloModule m
cond {
  s = (s32[], s32[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  buf = s32[5] get-tuple-element(s), index=1
  sq = s32[] multiply(i, i)
  v = s32[1] broadcast(sq), dimensions={}
  upd = s32[5] dynamic-update-slice(buf, v, i)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[5]) tuple(next, upd)
}
ENTRY e {
  zero = s32[] constant(0)
  b = s32[5] parameter(0)
  init = (s32[], s32[5]) tuple(zero, b)
  loop = (s32[], s32[5]) while(init), condition=cond, body=body
  ROOT r = s32[5] get-tuple-element(loop), index=1
})";
  EXPECT_EQ(Ints(RunHlo(text, {MakeInt(S32, {5}, {-1, -1, -1, -1, -1})})),
            (std::vector<int64_t>{0, 1, 4, 9, 16}));
}

TEST(EvalControl, ConditionalWithPredSelector) {
  std::string text = R"(HloModule m
on_true {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
on_false {
  y = f32[2] parameter(0)
  ROOT s = f32[2] add(y, y)
}
ENTRY e {
  p = pred[] parameter(0)
  a = f32[2] parameter(1)
  b = f32[2] parameter(2)
  ROOT c = f32[2] conditional(p, a, b), true_computation=on_true, false_computation=on_false
})";
  Literal a = Make(F32, {2}, {1, -2});
  Literal b = Make(F32, {2}, {3, 4});
  EXPECT_FLOATS(RunHlo(text, {MakeInt(PrimitiveType::kPred, {}, {1}), a, b}), {-1, 2});
  EXPECT_FLOATS(RunHlo(text, {MakeInt(PrimitiveType::kPred, {}, {0}), a, b}), {6, 8});
}

TEST(EvalControl, ConditionalWithIndexSelectorRunsLastBranchWhenOutOfRange) {
  std::string text = R"(HloModule m
b0 {
  x = s32[] parameter(0)
  ROOT r = s32[] constant(100)
}
b1 {
  x = s32[] parameter(0)
  ROOT r = s32[] negate(x)
}
b2 {
  x = s32[] parameter(0)
  ROOT r = s32[] multiply(x, x)
}
ENTRY e {
  i = s32[] parameter(0)
  v = s32[] parameter(1)
  ROOT c = s32[] conditional(i, v, v, v), branch_computations={b0, b1, b2}
})";
  auto run = [&](int64_t index) {
    return RunHlo(text, {MakeInt(S32, {}, {index}), MakeInt(S32, {}, {6})}).GetAsInt64(0);
  };
  EXPECT_EQ(run(0), 100);
  EXPECT_EQ(run(1), -6);
  EXPECT_EQ(run(2), 36);
  EXPECT_EQ(run(3), 36);   // out of range -> last branch
  EXPECT_EQ(run(-1), 36);
}

TEST(EvalControl, CallAndFusion) {
  std::string text = R"(HloModule m
add_mul {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  s = f32[3] add(x, y)
  ROOT m = f32[3] multiply(s, y)
}
fused {
  a = f32[3] parameter(0)
  ROOT e = f32[3] negate(a)
}
ENTRY e {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  c = f32[3] call(p, q), to_apply=add_mul
  ROOT f = f32[3] fusion(c), kind=kLoop, calls=fused
})";
  // -((p + q) * q)
  EXPECT_FLOATS(RunHlo(text, {Make(F32, {3}, {1, 2, 3}), Make(F32, {3}, {2, -1, 0})}), {-6, 1, -0.0});
}

TEST(EvalControl, UnknownCustomCallNamesTargetAndInstruction) {
  std::string text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT cc = f32[2] custom-call(p), custom_call_target="my_missing_kernel"
})";
  std::string message = ExpectError(text, {Make(F32, {2}, {1, 2})});
  EXPECT_NE(message.find("my_missing_kernel"), std::string::npos) << message;
  EXPECT_NE(message.find("'cc'"), std::string::npos) << message;
}

TEST(EvalControl, UserCustomCallRegistry) {
  std::string text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT cc = f32[2] custom-call(p), custom_call_target="twice"
})";
  hlo::CustomCallRegistry registry;
  registry.Register("twice", [](const hlo::Instruction&, std::span<const Literal* const> ops) {
    Literal out(ops[0]->shape());
    for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromDouble(i, 2 * ops[0]->GetAsDouble(i));
    return out;
  });
  hlo::EvaluatorOptions options;
  options.custom_calls = &registry;
  EXPECT_FLOATS(RunHlo(text, {Make(F32, {2}, {1.5, -2})}, options), {3, -4});
}

TEST(EvalControl, BuiltinTopKCustomCall) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK"
})";
  // Ties keep the lower index first; +0 ranks above -0 (total order).
  Literal x = Make(F32, {2, 4}, {1, 5, 3, 5, -1, -0.0, 0, -kInf});
  Literal result = RunHlo(text, {x});
  ASSERT_TRUE(result.IsTuple());
  EXPECT_FLOATS(result.elements()[0], {5, 5, 0, -0.0});
  EXPECT_EQ(Ints(result.elements()[1]), (std::vector<int64_t>{1, 3, 2, 1}));
}

// The work budget counts result elements: the doubling loop with i0 = 0 makes 10 iterations of
// (i, acc, next_i, next_acc, tuple of 2) plus the entry's and the condition's results.
TEST(EvalControl, WorkBudgetStopsALongEvaluationWithAClearError) {
  hlo::EvaluatorOptions roomy;
  roomy.max_result_elements = 1000;
  EXPECT_FLOATS(RunHlo(kDoublingLoop, {MakeInt(S32, {}, {0})}, roomy), {1024});
  hlo::EvaluatorOptions tight;
  tight.max_result_elements = 40;
  std::string message = ExpectError(kDoublingLoop, {MakeInt(S32, {}, {0})}, tight);
  EXPECT_NE(message.find("beyond the budget of 40 (EvaluatorOptions::max_result_elements)"),
            std::string::npos)
      << message;
}

// Annotations of SPMD programs and host offloading return their operand; AllocateBuffer gives
// zeros; GetRngSeed the interpreter's fixed seed.
TEST(EvalControl, AnnotationAndBufferCustomCalls) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  s = f32[3] custom-call(x), custom_call_target="Sharding", sharding={devices=[1]<=[1]}
  h = f32[3] custom-call(s), custom_call_target="MoveToHost"
  d = f32[3] custom-call(h), custom_call_target="MoveToDevice"
  a = f32[3] custom-call(d), custom_call_target="annotate_device_placement"
  b = f32[2] custom-call(), custom_call_target="AllocateBuffer"
  seed = u64[] custom-call(), custom_call_target="GetRngSeed"
  ROOT t = (f32[3], f32[2], u64[]) tuple(a, b, seed)
})";
  Literal result = RunHlo(text, {Make(F32, {3}, {1.5, -2, kInf})});
  ASSERT_TRUE(result.IsTuple());
  EXPECT_FLOATS(result.elements()[0], {1.5, -2, kInf});
  EXPECT_FLOATS(result.elements()[1], {0, 0});
  EXPECT_EQ(Ints(result.elements()[2]), (std::vector<int64_t>{42}));
  std::string bad = R"(HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT s = f32[4] custom-call(x), custom_call_target="Sharding"
})";
  std::string message = ExpectError(bad, {Make(F32, {3}, {1, 2, 3})});
  EXPECT_NE(message.find("'Sharding' annotates one operand and returns it unchanged"),
            std::string::npos)
      << message;
}

// One device (hlo::Evaluate): groups of one, no waiting. Several devices:
// eval_collectives_test.cc.
TEST(EvalControl, CollectivesOnOneDevice) {
  std::string text = R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2] parameter(0)
  ar = f32[2] all-reduce(p), replica_groups={}, to_apply=sum
  keep = f32[2] collective-permute(ar), source_target_pairs={{0,0}}
  drop = f32[2] collective-permute(ar), source_target_pairs={}
  id = u32[] replica-id()
  ROOT t = (f32[2], f32[2], u32[]) tuple(keep, drop, id)
})";
  Literal result = RunHlo(text, {Make(F32, {2}, {1.5, -3})});
  ASSERT_TRUE(result.IsTuple());
  EXPECT_FLOATS(result.elements()[0], {1.5, -3});
  EXPECT_FLOATS(result.elements()[1], {0, 0});
  EXPECT_EQ(result.elements()[2].GetAsInt64(0), 0);
}

TEST(EvalControl, RngIsDeterministicAndInRange) {
  std::string text = R"(HloModule m
ENTRY e {
  lo = f32[] constant(2)
  hi = f32[] constant(3)
  ROOT r = f32[64] rng(lo, hi), distribution=rng_uniform
})";
  Literal first = RunHlo(text);
  Literal second = RunHlo(text);
  EXPECT_TRUE(first.BitwiseEqual(second));
  for (double v : Values(first)) {
    EXPECT_GE(v, 2.0);
    EXPECT_LT(v, 3.0);
  }
}

TEST(EvalControl, ProgressReportsEveryEntryInstruction) {
  std::vector<std::pair<int64_t, int64_t>> calls;
  hlo::EvaluatorOptions options;
  options.progress = [&](int64_t done, int64_t total) { calls.emplace_back(done, total); };
  RunHlo(kDoublingLoop, {MakeInt(S32, {}, {8})}, options);
  // The entry has 5 instructions; loop bodies do not report.
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls.front(), (std::pair<int64_t, int64_t>{1, 5}));
  EXPECT_EQ(calls.back(), (std::pair<int64_t, int64_t>{5, 5}));
}

TEST(EvalControl, ErrorInsideALoopBodyIsLocatedAtTheFailingInstruction) {
  std::string text = R"(HloModule m
cond {
  s = f32[2] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = f32[2] parameter(0)
  ROOT k = f32[2] custom-call(s), custom_call_target="nowhere"
}
ENTRY e {
  x = f32[2] parameter(0)
  ROOT w = f32[2] while(x), condition=cond, body=body
})";
  try {
    RunHlo(text, {Make(F32, {2}, {1, 2})});
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.location().line, 8u) << e.message();
    EXPECT_NE(e.message().find("nowhere"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("'w'"), std::string::npos) << e.message();
  }
}

TEST(EvalControl, AllGatherNamingAnotherReplicaOnOneDeviceIsAnError) {
  std::string text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT g = f32[4] all-gather(p), replica_groups={{0,1}}, dimensions={0}
})";
  std::string message = ExpectError(text, {Make(F32, {2}, {1, 2})});
  EXPECT_NE(message.find("names replica 1, outside the run of 1 replica(s) x 1 partition(s)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'g'"), std::string::npos) << message;
}

TEST(EvalControl, RngBitGeneratorIsDeterministic) {
  std::string text = R"(HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_default
})";
  Literal state = MakeInt(PrimitiveType::kU64, {2}, {1, 2});
  Literal first = RunHlo(text, {state});
  Literal second = RunHlo(text, {state});
  EXPECT_TRUE(first.BitwiseEqual(second));
  Literal other = RunHlo(text, {MakeInt(PrimitiveType::kU64, {2}, {1, 3})});
  EXPECT_FALSE(first.elements()[1].BitwiseEqual(other.elements()[1]));
}

// Results beyond GlobalLimits() are refused when they would be allocated, with the
// instruction named (the verifier checks shapes too, but limits may change after verifying).
TEST(EvalControl, AllocationLimitIsALocatedError) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT big = f32[1000] broadcast(p), dimensions={}
})");
  const int64_t saved = hlo::GlobalLimits().max_elements_per_array;
  hlo::GlobalLimits().max_elements_per_array = 100;
  try {
    hlo::Evaluate(*module, std::vector<Literal>{Scalar(F32, 1)});
    ADD_FAILURE() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("'big'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("too many elements"), std::string::npos) << e.message();
    EXPECT_EQ(e.location().line, 4u);
  }
  hlo::GlobalLimits().max_elements_per_array = saved;
}

// The live-bytes budget: values alive at once past max_live_literal_bytes stop the evaluation
// with an error naming the budget (a model too big for the machine is an error, not a process
// killed for memory), and every byte is given back afterwards.
TEST(EvalControl, LiveBytesBudgetIsAClearError) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  a = f32[4096] broadcast(p), dimensions={}
  b = f32[4096] add(a, a)
  c = f32[4096] multiply(a, b)
  ROOT t = (f32[4096], f32[4096], f32[4096]) tuple(a, b, c)
})");
  const int64_t before = hlo::LiveLiteralBytes();
  const int64_t saved = hlo::GlobalLimits().max_live_literal_bytes;
  // Room for the argument and two of the three 16 KiB values, not the third.
  hlo::GlobalLimits().max_live_literal_bytes = before + 40 * 1024;
  try {
    hlo::Evaluate(*module, std::vector<Literal>{Scalar(F32, 1)});
    ADD_FAILURE() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("memory budget exceeded"), std::string::npos) << e.message();
  }
  hlo::GlobalLimits().max_live_literal_bytes = saved;
  EXPECT_EQ(hlo::LiveLiteralBytes(), before);
  // Within the budget the same module runs.
  Literal result = hlo::Evaluate(*module, std::vector<Literal>{Scalar(F32, 1)});
  EXPECT_EQ(result.elements()[2].data<float>()[7], 2.0f);
}

// Unused values are computed and dropped; the root may be a parameter or a constant.
TEST(EvalControl, DeadValuesAndBorrowedRoots) {
  std::string text = R"(HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  unused = f32[3] exponential(p)
  ROOT r = f32[3] copy(p)
})";
  EXPECT_FLOATS(RunHlo(text, {Make(F32, {3}, {1, -0.0, kNaN})}), {1, -0.0, kNaN});
  std::string constant_root = R"(HloModule m
ENTRY e {
  ROOT c = s32[2] constant({4, 5})
})";
  EXPECT_EQ(Ints(RunHlo(constant_root)), (std::vector<int64_t>{4, 5}));
  std::string tuple_copy = R"(HloModule m
ENTRY e {
  p = f32[1] parameter(0)
  q = s32[] parameter(1)
  t = (f32[1], s32[]) tuple(p, q)
  ROOT c = (f32[1], s32[]) copy(t)
})";
  Literal copied = RunHlo(tuple_copy, {Make(F32, {1}, {2.5}), MakeInt(S32, {}, {-7})});
  ASSERT_TRUE(copied.IsTuple());
  EXPECT_FLOATS(copied.elements()[0], {2.5});
  EXPECT_EQ(copied.elements()[1].GetAsInt64(0), -7);
}

TEST(EvalControl, WrongArgumentCountIsAnError) {
  try {
    RunHlo(kDoublingLoop, {});
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("0 argument(s)"), std::string::npos) << e.message();
  }
}

}  // namespace

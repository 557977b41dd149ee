// CPU backend: control flow (while, conditional, call), runtime routines (dynamic-update-slice,
// sort, gather, TopK) and bad input (unknown custom-call, collectives, wrong arguments).
#include <gtest/gtest.h>

#include <cmath>

#include "hlo/diagnostic.h"
#include "hlo/module_io.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/small_modules.h"
#include "tests/test_support.h"

namespace {

using cpu_tests::Counter;
using cpu_tests::ExpectMatchesInterp;

TEST(CpuRuntime, WhileLoopAccumulates) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule loop
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  fi = f32[] convert(i1)
  b = f32[4] broadcast(fi), dimensions={}
  v1 = f32[4] add(v, b)
  ROOT t = (s32[], f32[4]) tuple(i1, v1)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})");
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4}));
  for (int64_t i = 0; i < 4; ++i) x.SetFromDouble(i, double(i));
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x});
  // x + (1 + 2 + ... + 10) = x + 55
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(run.result.GetAsDouble(i), double(i) + 55);
  EXPECT_EQ(Counter(run, "thunks.while"), 1);
  // Condition and body are small kernels: the loop ran compiled into one function.
  EXPECT_EQ(Counter(run, "thunks.while.compiled"), 1);
  EXPECT_EQ(Counter(run, "loops.compiled_runs"), 1);
  EXPECT_EQ(Counter(run, "loops.thunk_runs"), 0);
  // Run twice: the state must be re-initialized from the operand each time.
  std::unique_ptr<targets::Executable> executable = cpu_tests::Cpu().Compile(*module);
  std::vector<hlo::Literal> inputs;
  inputs.push_back(x);
  executable->Run(inputs);
  hlo::Literal second = executable->Run(inputs);
  EXPECT_EQ(second.GetAsDouble(0), 55);
}

TEST(CpuRuntime, WhileBodySwappingTupleElements) {
  // The carry's copy reads a leaf another leaf overwrites: staged, on the thunk-by-thunk path.
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule swap
cond {
  p = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[3] get-tuple-element(p), index=1
  b = f32[3] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[3], f32[3]) tuple(i1, b, a)
}
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[3]) tuple(zero, a, b)
  ROOT w = (s32[], f32[3], f32[3]) while(init), condition=cond, body=body
})");
  EXPECT_EQ(Counter(run, "loops.thunk_runs"), 1);
  EXPECT_EQ(Counter(run, "loops.compiled_runs"), 0);
}

// A scan-like loop of many small trips (the shape of jax's fori_loop / scan): counter, a
// running sum and a dynamic-slice read of a loop-invariant array, compiled into one function
// (the kernels inlined: their operand loads must not be hoisted out of the loop), and the same
// numbers as the interpreter after 5,000 trips.
TEST(CpuRuntime, ManySmallTripsRunCompiledAndMatch) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule scan
cond {
  p = (s32[], f32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[] get-tuple-element(p), index=1
  xs = f32[64] get-tuple-element(p), index=2
  size = s32[] constant(64)
  k = s32[] remainder(i, size)
  x = f32[1] dynamic-slice(xs, k), dynamic_slice_sizes={1}
  xr = f32[] reshape(x)
  half = f32[] constant(0.5)
  decayed = f32[] multiply(acc, half)
  acc1 = f32[] add(decayed, xr)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[64]) tuple(i1, acc1, xs)
}
ENTRY e {
  xs = f32[64] parameter(0)
  zero = s32[] constant(0)
  fzero = f32[] constant(0)
  init = (s32[], f32[], f32[64]) tuple(zero, fzero, xs)
  w = (s32[], f32[], f32[64]) while(init), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
})");
  EXPECT_EQ(Counter(run, "loops.compiled_runs"), 1);
  EXPECT_EQ(Counter(run, "loops.thunk_runs"), 0);
}

// An outer loop whose body holds a loop: both compile; the outer one runs the inner while
// through its callback, once per outer trip; the numbers match the interpreter.
TEST(CpuRuntime, NestedLoopsBothRunCompiled) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule nested
inner_cond {
  p = (s32[], f32[8]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(j, n), direction=LT
}
inner_body {
  p = (s32[], f32[8]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  v = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  c = f32[] constant(1.5)
  cb = f32[8] broadcast(c), dimensions={}
  v1 = f32[8] multiply(v, cb)
  ROOT t = (s32[], f32[8]) tuple(j1, v1)
}
outer_cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
outer_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[8] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  start = (s32[], f32[8]) tuple(zero, v)
  w = (s32[], f32[8]) while(start), condition=inner_cond, body=inner_body
  v1 = f32[8] get-tuple-element(w), index=1
  h = f32[] constant(0.25)
  hb = f32[8] broadcast(h), dimensions={}
  v2 = f32[8] subtract(v1, hb)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(i1, v2)
}
ENTRY e {
  x = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x)
  w = (s32[], f32[8]) while(init), condition=outer_cond, body=outer_body
  ROOT r = f32[8] get-tuple-element(w), index=1
})");
  EXPECT_EQ(Counter(run, "thunks.while.compiled"), 2);
  EXPECT_EQ(Counter(run, "loops.thunk_runs"), 0);
  EXPECT_EQ(Counter(run, "loops.compiled_runs"), 4);
}

// A scan writing one output row per step: the dynamic-update-slice into the carry is a generated
// kernel the compiled loop calls itself, in place; nothing goes through the callback.
TEST(CpuRuntime, CompiledLoopWritesScanRowsInPlaceWithoutTheCallback) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule scan_out
cond {
  p = (s32[], f32[4], f32[50,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(50)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], f32[50,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[4] get-tuple-element(p), index=1
  out = f32[50,4] get-tuple-element(p), index=2
  c = f32[] constant(0.75)
  cb = f32[4] broadcast(c), dimensions={}
  t = f32[4] tanh(h)
  h1 = f32[4] add(t, cb)
  row = f32[1,4] reshape(h1)
  zero = s32[] constant(0)
  out1 = f32[50,4] dynamic-update-slice(out, row, i, zero)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[4], f32[50,4]) tuple(i1, h1, out1)
}
ENTRY e {
  h0 = f32[4] parameter(0)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  out0 = f32[50,4] broadcast(fz), dimensions={}
  init = (s32[], f32[4], f32[50,4]) tuple(zero, h0, out0)
  w = (s32[], f32[4], f32[50,4]) while(init), condition=cond, body=body
  ROOT o = f32[50,4] get-tuple-element(w), index=2
})");
  EXPECT_EQ(Counter(run, "thunks.while.compiled"), 1);
  EXPECT_EQ(Counter(run, "loops.compiled_runs"), 1);
  EXPECT_EQ(Counter(run, "thunks.dynamic-update-slice"), 1);
  // The output row goes straight into the carry: its old value dies at the update.
  EXPECT_EQ(Counter(run, "dynamic-update-slice.in-place"), 1);
  EXPECT_EQ(Counter(run, "loops.callback_thunks"), 0);
}

// A read-only carry leaf (the scanned sequence) is read where the init value is, not copied into
// the loop: tests/run/control/while_read_only_leaf_f32.hlo checks the values on every target.
TEST(CpuRuntime, ReadOnlyCarryLeafIsNotCopiedIn) {
  hlo::LoadedModule loaded =
      hlo::LoadModule(testing_support::TestDataPath("../run/control/while_read_only_leaf_f32.hlo"));
  cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(*loaded.module, 4);
  EXPECT_EQ(Counter(run, "while.read_only_leaves"), 1);
  EXPECT_EQ(Counter(run, "loops.compiled_runs"), 1);
}

// A body with a sort (a runtime thunk, not a kernel): the compiled loop runs it through its
// callback once per trip, and the results still match.
TEST(CpuRuntime, CompiledLoopRunsRuntimeThunksThroughItsCallback) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule sort_loop
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[8] get-tuple-element(p), index=1
  c = f32[] constant(-1.5)
  cb = f32[8] broadcast(c), dimensions={}
  scaled = f32[8] multiply(v, cb)
  sorted = f32[8] sort(scaled), dimensions={0}, to_apply=less
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[8]) tuple(i1, sorted)
}
ENTRY e {
  v0 = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, v0)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT o = f32[8] get-tuple-element(w), index=1
})");
  EXPECT_EQ(Counter(run, "thunks.while.compiled"), 1);
  EXPECT_EQ(Counter(run, "loops.compiled_runs"), 1);
  EXPECT_EQ(Counter(run, "thunks.sort"), 1);
  EXPECT_EQ(Counter(run, "loops.callback_thunks"), 5);
}

// The carry's old value is still needed after the update (it becomes another leaf): the
// update is not done in place, and the numbers match the interpreter.
TEST(CpuRuntime, CarryReadAfterItsUpdateIsNotOverwritten) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule keep_previous
cond {
  p = (s32[], f32[6,3], f32[6,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[6,3], f32[6,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  out = f32[6,3] get-tuple-element(p), index=1
  fi = f32[] convert(i)
  row = f32[1,3] broadcast(fi), dimensions={}
  zero = s32[] constant(0)
  out1 = f32[6,3] dynamic-update-slice(out, row, i, zero)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[6,3], f32[6,3]) tuple(i1, out1, out)
}
ENTRY e {
  x = f32[6,3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[6,3], f32[6,3]) tuple(zero, x, x)
  ROOT w = (s32[], f32[6,3], f32[6,3]) while(init), condition=cond, body=body
})");
  EXPECT_EQ(Counter(run, "dynamic-update-slice.in-place"), 0);
}

// Runs `module` on the cpu backend with at most `limit` trips per loop and returns the error
// it stops with ("" when it does not), and the executable's profile after it.
std::string RunawayError(const hlo::Module& module, const std::vector<hlo::Literal>& inputs,
                         int64_t limit, targets::Profile* profile) {
  testing_support::ScopedWhileLimit scoped(limit);
  std::unique_ptr<targets::Executable> executable = cpu_tests::Cpu().Compile(module);
  std::string error;
  try {
    executable->Run(inputs);
  } catch (const hlo::Error& e) {
    error = e.what();
  }
  *profile = executable->profile();
  return error;
}

hlo::Literal ScalarS32(int32_t value) {
  hlo::Literal literal(hlo::Shape::Array(hlo::PrimitiveType::kS32, {}));
  literal.SetFromInt64(0, value);
  return literal;
}

// A loop beyond the iteration limit stops with an error naming the while, on both paths: the
// compiled loop and the thunk-by-thunk one (a carry that swaps leaves).
TEST(CpuRuntime, RunawayLoopStopsWithAnErrorNamingTheWhile) {
  auto compiled = testing_support::ParseAndVerify(small_modules::kRunawayLoop);
  std::vector<hlo::Literal> inputs;
  inputs.push_back(ScalarS32(0));
  targets::Profile profile;
  std::string error = RunawayError(*compiled, inputs, 1000, &profile);
  EXPECT_NE(error.find("spin"), std::string::npos) << error;
  EXPECT_NE(error.find("1000 iterations"), std::string::npos) << error;
  EXPECT_EQ(profile.counters["thunks.while.compiled"], 1);

  auto staged = testing_support::ParseAndVerify(R"(
HloModule forever_swapping
cond {
  p = (s32[], s32[]) parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = (s32[], s32[]) parameter(0)
  a = s32[] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  ROOT swapped = (s32[], s32[]) tuple(b, a)
}
ENTRY e {
  zero = s32[] constant(0)
  one = s32[] constant(1)
  init = (s32[], s32[]) tuple(zero, one)
  ROOT swap_forever = (s32[], s32[]) while(init), condition=cond, body=body
})");
  error = RunawayError(*staged, {}, 1000, &profile);
  EXPECT_NE(error.find("swap_forever"), std::string::npos) << error;
  EXPECT_NE(error.find("1000 iterations"), std::string::npos) << error;
  EXPECT_EQ(profile.counters["thunks.while.compiled"], 0);
}

// The same runaway loop inside another compiled loop's body: its error crosses the outer
// loop's generated code as a kept exception and arrives as the inner while's hlo::Error.
TEST(CpuRuntime, ErrorInsideACompiledLoopsThunkArrivesIntact) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule forever_inside
inner_cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
inner_body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT i1 = s32[] add(p, one)
}
outer_cond {
  p = s32[] parameter(0)
  n = s32[] constant(5)
  ROOT lt = pred[] compare(p, n), direction=LT
}
outer_body {
  p = s32[] parameter(0)
  inner_spin = s32[] while(p), condition=inner_cond, body=inner_body
  one = s32[] constant(1)
  ROOT next = s32[] add(inner_spin, one)
}
ENTRY e {
  zero = s32[] constant(0)
  ROOT outer = s32[] while(zero), condition=outer_cond, body=outer_body
})");
  targets::Profile profile;
  const std::string error = RunawayError(*module, {}, 100, &profile);
  EXPECT_NE(error.find("inner_spin"), std::string::npos) << error;
  EXPECT_NE(error.find("100 iterations"), std::string::npos) << error;
  EXPECT_EQ(profile.counters["thunks.while.compiled"], 2);
}

TEST(CpuRuntime, DynamicUpdateSliceInPlaceInsideALoop) {
  // A cache written one row per iteration: the body's dynamic-update-slice takes over the
  // dying cache buffer (dynamic-update-slice.in-place) and the result still equals the
  // interpreter's; the entry-level one reads a parameter, which is never written in place.
  const char* text = R"(
HloModule cache
cond {
  s = (s32[], f32[8,16], f32[1,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8,16], f32[1,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  cache = f32[8,16] get-tuple-element(s), index=1
  row = f32[1,16] get-tuple-element(s), index=2
  scaled = f32[8,16] add(cache, cache)
  zero = s32[] constant(0)
  written = f32[8,16] dynamic-update-slice(scaled, row, i, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[8,16], f32[1,16]) tuple(next, written, row)
}
ENTRY e {
  c = f32[8,16] parameter(0)
  r = f32[1,16] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8,16], f32[1,16]) tuple(zero, c, r)
  w = (s32[], f32[8,16], f32[1,16]) while(init), condition=cond, body=body
  out = f32[8,16] get-tuple-element(w), index=1
  first = f32[8,16] dynamic-update-slice(c, r, zero, zero)
  ROOT both = (f32[8,16], f32[8,16]) tuple(out, first)
})";
  cpu_tests::CpuRun run = ExpectMatchesInterp(text, 5);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
  EXPECT_EQ(Counter(run, "dynamic-update-slice.in-place"), 1);  // the body's, not the entry's
}

TEST(CpuRuntime, DynamicUpdateSliceClampsStarts) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule dus
ENTRY e {
  t = f32[4,5] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT r = f32[4,5] dynamic-update-slice(t, u, i, j)
})");
  hlo::Literal t(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4, 5}));
  hlo::Literal u(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2, 3}));
  for (int64_t k = 0; k < 6; ++k) u.SetFromDouble(k, double(k + 1));
  hlo::Literal i(hlo::Shape::Scalar(hlo::PrimitiveType::kS32));
  hlo::Literal j(hlo::Shape::Scalar(hlo::PrimitiveType::kS32));
  i.SetFromInt64(0, 9);   // clamps to 4 - 2 = 2
  j.SetFromInt64(0, -3);  // clamps to 0
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {t, u, i, j});
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 5; ++c) {
      double expected = (r >= 2 && c < 3) ? double((r - 2) * 3 + c + 1) : 0.0;
      EXPECT_EQ(run.result.GetAsDouble(r * 5 + c), expected) << r << "," << c;
    }
  }
}

TEST(CpuRuntime, TopKIsANativeThunk) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule topk
ENTRY e {
  x = f32[2,50] parameter(0)
  ROOT t = (f32[2,5], s32[2,5]) custom-call(x), custom_call_target="TopK"
})");
  EXPECT_EQ(Counter(run, "thunks.topk"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

TEST(CpuRuntime, TopKOrdersTiesNaNAndSignedZeros) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule topk_edges
ENTRY e {
  x = f32[1,6] parameter(0)
  ROOT t = (f32[1,4], s32[1,4]) custom-call(x), custom_call_target="TopK"
})");
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kF32, {1, 6}));
  const double in[] = {1.0, -0.0, NAN, 1.0, 0.0, INFINITY};
  for (int64_t i = 0; i < 6; ++i) x.SetFromDouble(i, in[i]);
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {x});
  // Total order, largest first: NaN (2), inf (5), 1.0 (0, lower index first), 1.0 (3).
  const hlo::Literal& indices = run.result.elements()[1];
  const int64_t expected[] = {2, 5, 0, 3};
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(indices.GetAsInt64(j), expected[j]) << j;
  EXPECT_TRUE(std::isnan(run.result.elements()[0].GetAsDouble(0)));
  EXPECT_EQ(Counter(run, "thunks.topk"), 1);
}

TEST(CpuRuntime, TopKOpLargestAndSmallest) {
  for (const char* largest : {"true", "false"}) {
    cpu_tests::CpuRun run = ExpectMatchesInterp(std::string(R"(
HloModule topk_op
ENTRY e {
  x = bf16[3,40] parameter(0)
  ROOT t = (bf16[3,7], s32[3,7]) topk(x), k=7, largest=)") + largest + "\n}");
    EXPECT_EQ(Counter(run, "thunks.topk"), 1) << largest;
  }
}

TEST(CpuRuntime, GatherClampsStartIndices) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule clamp
ENTRY e {
  table = f32[5,2] parameter(0)
  ids = s32[3] parameter(1)
  ROOT g = f32[3,2] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})");
  hlo::Literal table(hlo::Shape::Array(hlo::PrimitiveType::kF32, {5, 2}));
  for (int64_t i = 0; i < 10; ++i) table.SetFromDouble(i, double(i));  // row r = {2r, 2r+1}
  hlo::Literal ids(hlo::Shape::Array(hlo::PrimitiveType::kS32, {3}));
  ids.SetFromInt64(0, 3);
  ids.SetFromInt64(1, -7);  // clamps to row 0
  ids.SetFromInt64(2, 99);  // clamps to row 4
  cpu_tests::CpuRun run = cpu_tests::RunCpu(*module, {table, ids});
  const double expected[] = {6, 7, 0, 1, 8, 9};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(run.result.GetAsDouble(i), expected[i]) << i;
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

TEST(CpuRuntime, CustomKindFusionRunsItsComputationWithGemm) {
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule xnn
ynn_fusion { a = f32[16,8] parameter(0)  b = f32[8,4] parameter(1)
  ROOT d = f32[16,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0} }
ENTRY e {
  a = f32[16,8] parameter(0)
  b = f32[8,4] parameter(1)
  ROOT f = f32[16,4] fusion(a, b), kind=kCustom, calls=ynn_fusion
})", 0, nullptr);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 1);
  EXPECT_EQ(Counter(run, "thunks.fallback"), 0);
}

TEST(CpuRuntime, DeadValuesBuffersAreReused) {
  const io::Tolerance kChainTolerance{1e-4, 1e-4};
  // A chain of six 256x256 f32 dots (256 KiB each; w scaled by 1/16 = 1/sqrt(256) so values
  // stay ~1 and reassociation errors stay ~1e-6): only the scaled w, the current operand and
  // the result are live at once, so three buffers suffice, not seven.
  cpu_tests::CpuRun run = ExpectMatchesInterp(R"(
HloModule chain
ENTRY e {
  x = f32[256,256] parameter(0)
  w0 = f32[256,256] parameter(1)
  sixteenth = f32[] constant(0.0625)
  scale = f32[256,256] broadcast(sixteenth), dimensions={}
  w = f32[256,256] multiply(w0, scale)
  d1 = f32[256,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[256,256] dot(d1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[256,256] dot(d2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d4 = f32[256,256] dot(d3, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d5 = f32[256,256] dot(d4, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d6 = f32[256,256] dot(d5, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", 0, &kChainTolerance);
  EXPECT_EQ(Counter(run, "thunks.gemm"), 6);
  EXPECT_LE(Counter(run, "buffer_bytes.entry"), 3 * 256 * 256 * 4);
}

TEST(CpuRuntime, UnknownCustomCallNamesTheTarget) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule bad
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="my_vendor_kernel"
})");
  try {
    cpu_tests::Cpu().Compile(*module);
    FAIL() << "compiled a module with an unknown custom-call";
  } catch (const hlo::Error& error) {
    EXPECT_NE(std::string(error.what()).find("custom-call 'my_vendor_kernel' has no CPU implementation"),
              std::string::npos)
        << error.what();
  }
}

// Collectives run through the evaluator's (multi-device runs: tests/tools/cli_devices_test.cc
// and tests/xla/xla_collectives.py): on one device a group of one is the identity, and a group
// naming another device is an error at run time naming the instruction.
TEST(CpuRuntime, CollectivesOnOneDevice) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule collective
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4] parameter(0)
  ar = f32[4] all-reduce(x), replica_groups={}, to_apply=add_f32
  two = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add_f32
  ROOT t = (f32[4], f32[4]) tuple(ar, two)
})");
  auto executable = cpu_tests::Cpu().Compile(*module);
  hlo::Literal x(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4}));
  for (int i = 0; i < 4; ++i) x.mutable_data<float>()[i] = 1.5f * i;
  std::vector<hlo::Literal> inputs;
  inputs.push_back(x);
  try {
    executable->Run(inputs);
    FAIL() << "ran an all-reduce over two replicas on one device";
  } catch (const hlo::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'two'"), std::string::npos) << message;
    EXPECT_NE(message.find("names replica 1, outside the run of 1 replica(s)"), std::string::npos)
        << message;
  }
  auto single = testing_support::ParseAndVerify(R"(
HloModule collective
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), replica_groups={}, to_apply=add_f32
})");
  hlo::Literal result = cpu_tests::Cpu().Compile(*single)->Run(inputs);
  EXPECT_TRUE(result.BitwiseEqual(x));
}

TEST(CpuRuntime, WrongArgumentsAreErrors) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule args
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})");
  std::unique_ptr<targets::Executable> executable = cpu_tests::Cpu().Compile(*module);
  EXPECT_THROW(executable->Run(std::span<const hlo::Literal>()), hlo::Error);
  std::vector<hlo::Literal> wrong;
  wrong.emplace_back(hlo::Shape::Array(hlo::PrimitiveType::kF32, {5}));
  EXPECT_THROW(executable->Run(wrong), hlo::Error);
}

}  // namespace

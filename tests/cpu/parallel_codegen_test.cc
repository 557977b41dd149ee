// How the CPU backend compiles its kernels: identical kernels are merged up to names and equal
// constant tables (MergeIdenticalKernels in cpu_backend.cc), a module with many kernels is
// compiled as several partitions (targets/cpu/parallel_codegen.h) that link into one program
// computing what the interpreter computes — including kernels that share a private global (the
// sine/cosine argument-reduction table) — while small modules stay one object, and a compiled
// loop holds its scalar steps inlined whatever partition their kernels land in.
#include <gtest/gtest.h>

#include <string>

#include "targets/cpu/cpu_backend.h"
#include "targets/cpu/parallel_codegen.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace {

TEST(ParallelCodegen, PartitionCountDependsOnTheFunctionsAlone) {
  EXPECT_EQ(cpu::PartitionCount(0), 1);
  EXPECT_EQ(cpu::PartitionCount(31), 1);
  EXPECT_EQ(cpu::PartitionCount(32), 2);
  EXPECT_EQ(cpu::PartitionCount(100), 6);
  EXPECT_EQ(cpu::PartitionCount(100000), 8);
}

// `kernels` root elements of distinct shapes, so none is merged with another: odd ones take
// the sine (whose kernels share the private 2/pi table), even ones a tanh.
std::string ManyKernels(int kernels) {
  std::string params, body, roots, shapes;
  for (int i = 0; i < kernels; ++i) {
    const std::string shape = "f32[3," + std::to_string(i + 5) + "]";
    const std::string n = std::to_string(i);
    body += "  p" + n + " = " + shape + " parameter(" + n + ")\n";
    body += "  e" + n + " = " + shape + (i % 2 ? " sine(p" : " tanh(p") + n + ")\n";
    body += "  r" + n + " = " + shape + " multiply(e" + n + ", p" + n + ")\n";
    roots += (i ? ", r" : "r") + n;
    shapes += (i ? ", " : "") + shape;
  }
  return "HloModule many_kernels\nENTRY e {\n" + body + "  ROOT t = (" + shapes + ") tuple(" +
         roots + ")\n}\n";
}

TEST(ParallelCodegen, ManyKernelsLinkFromSeveralObjectsAndMatchTheInterpreter) {
  const cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(ManyKernels(40));
  EXPECT_EQ(cpu_tests::Counter(run, "thunks.kernel"), 40);
  EXPECT_EQ(cpu_tests::Counter(run, "kernels.object_files"), 2);
}

TEST(ParallelCodegen, ASmallModuleStaysOneObject) {
  const cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(ManyKernels(3));
  EXPECT_EQ(cpu_tests::Counter(run, "kernels.object_files"), 1);
}

// Two row sums of different operands, named differently: their kernels differ only in the
// names of their values, and compile once.
TEST(KernelMerging, KernelsEqualUpToValueNamesAreCompiledOnce) {
  // The second sum starts from `y_init`: zero (the same kernel) or one (a different constant).
  auto two_sums = [](const std::string& y_init) {
    return R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,33] parameter(0)
  y = f32[8,33] parameter(1)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  sum_of_x = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  total_y = f32[8] reduce(y, )" + y_init + R"(), dimensions={1}, to_apply=add
  ROOT t = (f32[8], f32[8]) tuple(sum_of_x, total_y)
})";
  };
  const cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(two_sums("zero"));
  EXPECT_EQ(cpu_tests::Counter(run, "thunks.kernel"), 2);
  EXPECT_EQ(cpu_tests::Counter(run, "kernels.merged"), 1);
  const cpu_tests::CpuRun different = cpu_tests::ExpectMatchesInterp(two_sums("one"));
  EXPECT_EQ(cpu_tests::Counter(different, "thunks.kernel"), 2);
  EXPECT_EQ(cpu_tests::Counter(different, "kernels.merged"), 0);
}

// Two fusions that each read their own copy of an equal constant table (a folded iota, say)
// compile once: equal private constants are merged before kernels are compared.
TEST(KernelMerging, KernelsReadingEqualConstantTablesAreCompiledOnce) {
  const cpu_tests::CpuRun run = cpu_tests::ExpectMatchesInterp(R"(
HloModule m
ENTRY e {
  x = s32[4,11] parameter(0)
  y = s32[4,11] parameter(1)
  c1 = s32[11] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  c2 = s32[11] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  b1 = s32[4,11] broadcast(c1), dimensions={1}
  b2 = s32[4,11] broadcast(c2), dimensions={1}
  m1 = s32[4,11] multiply(x, b1)
  m2 = s32[4,11] multiply(y, b2)
  ROOT t = (s32[4,11], s32[4,11]) tuple(m1, m2)
})");
  EXPECT_EQ(cpu_tests::Counter(run, "thunks.kernel"), 2);
  EXPECT_EQ(cpu_tests::Counter(run, "kernels.merged"), 1);
}

// A while loop's scalar steps (the counter's increment and compare) are inlined into the
// compiled loop when it is emitted, so the loop function calls no scalar kernel even when
// parallel code generation puts it and them into different partitions; the vector step stays
// a call.
TEST(ParallelCodegen, CompiledLoopsHoldTheirScalarStepsInlined) {
  auto module = testing_support::ParseAndVerify(R"(
HloModule loop
cond {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[64] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  v1 = f32[64] exponential(v)
  ROOT t = (s32[], f32[64]) tuple(i1, v1)
}
ENTRY e {
  x = f32[64] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[64]) tuple(zero, x)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  ROOT r = f32[64] get-tuple-element(w), index=1
})");
  cpu::CpuBackendOptions options;
  options.keep_ir = true;
  auto executable = cpu::MakeCpuBackend(options)->Compile(*module);
  EXPECT_EQ(executable->profile().counters.at("thunks.while.compiled"), 1);
  const std::string ir = executable->artifacts().at("kernels.ll");
  const size_t name = ir.find("@loop_");
  ASSERT_NE(name, std::string::npos) << ir;
  const size_t define = ir.rfind("define", name);
  ASSERT_NE(define, std::string::npos) << ir;
  const std::string body = ir.substr(define, ir.find("\n}\n", define) - define);
  size_t calls = 0;
  for (size_t at = body.find("call void @k_"); at != std::string::npos;
       at = body.find("call void @k_", at + 1))
    ++calls;
  EXPECT_EQ(calls, 1) << body;  // the exponential of 64 elements
}

}  // namespace

// Parallel code generation (targets/cpu/parallel_codegen.h): a module with many kernels is
// compiled as several partitions that link into one program computing what the interpreter
// computes — including kernels that share a private global (the sine/cosine argument-reduction
// table) — while small modules stay one object.
#include <gtest/gtest.h>

#include <string>

#include "targets/cpu/parallel_codegen.h"
#include "tests/cpu/cpu_test_util.h"

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

}  // namespace

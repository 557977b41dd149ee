// Sorts and top-k on the accelerator's sorting network (targets/systolic/lowering/emit_sort.h,
// vbitonic in docs/isa.md): bit-exact against the interpreter for keys of each width, rows
// padded to a power of two, ascending and descending orders, a payload moved with the keys and
// ordering equal keys (argsort, a stable sort of ties), top-k's values and indices; forms the
// network does not take run on the host with the reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/systolic/systolic_run_support.h"

namespace {

using systolic_testing::ExpectNative;
using systolic_testing::Outcome;

Outcome RunOnTpuV1(const std::string& text) {
  return systolic_testing::RunAgainstInterpreter(
      text,
      systolic::LoadArchConfig("tpu-v1", std::vector<std::string>{"array.dtypes=int8,bf16,f32"}),
      7, {}, &systolic_testing::kExact);
}

TEST(SystolicSort, SortsRowsInBothOrdersWithAndWithoutPayload) {
  // Three rows of 1,000 f32 (padded to 1,024), ascending in total order; bf16 keys with an
  // index payload, descending (an argsort); s32 keys whose ties the payload orders (a stable
  // sort by index).
  const Outcome outcome = RunOnTpuV1(R"(HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
gt {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
lt32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[3,1000] parameter(0)
  sx = f32[3,1000] sort(x), dimensions={1}, to_apply=lt
  y = bf16[2,37] parameter(1)
  iy = s32[2,37] iota(), iota_dimension=1
  sy = (bf16[2,37], s32[2,37]) sort(y, iy), dimensions={1}, to_apply=gt
  z = s32[64] parameter(2)
  three = s32[] constant(3)
  b3 = s32[64] broadcast(three), dimensions={}
  zt = s32[64] and(z, b3)
  iz = s32[64] iota(), iota_dimension=0
  sz = (s32[64], s32[64]) sort(zt, iz), dimensions={0}, is_stable=true, to_apply=lt32
  ROOT t = (f32[3,1000], (bf16[2,37], s32[2,37]), (s32[64], s32[64])) tuple(sx, sy, sz)
})");
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 0) << outcome.assembly;
  EXPECT_NE(outcome.assembly.find("vbitonic"), std::string::npos);
}

TEST(SystolicSort, TopKOfLogitsKeepsTheLargestWithTheirIndices) {
  // The corpus's top-k: 10 of 50,000 bf16 logits (padded to 65,536), twice.
  ExpectNative(RunOnTpuV1(R"(HloModule m
ENTRY main {
  x = bf16[2,50000] parameter(0)
  t = (bf16[2,10], s32[2,10]) topk(x), k=10, largest=true
  v = bf16[2,10] get-tuple-element(t), index=0
  i = s32[2,10] get-tuple-element(t), index=1
  ROOT r = (bf16[2,10], s32[2,10]) tuple(v, i)
})"), 1);
}

TEST(SystolicSort, OtherSortsRunOnTheHostWithTheReason) {
  const Outcome outcome = RunOnTpuV1(R"(HloModule m
le {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LE
}
ENTRY main {
  x = f32[4,6] parameter(0)
  ROOT s = f32[4,6] sort(x), dimensions={1}, to_apply=le
})");
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 1);
  EXPECT_NE(outcome.assembly.find("less-than or greater-than"), std::string::npos)
      << outcome.assembly;
}

}  // namespace

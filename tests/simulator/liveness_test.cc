// SRAM occupancy (sim_liveness.h): the static plan's per-instruction deltas computed by hand for
// small programs (reads, partial overwrites, strided transfers, halt), and the run-time counters
// of a load -> matmul -> convert -> store pipeline in time order, with their peaks in SimStats.
#include "simulator/sim_liveness.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/simulator/sim_test_util.h"

namespace simulator {
namespace {

using testing_util::RecordingSink;
using testing_util::RunSasm;
using testing_util::TestConfig;

std::vector<int64_t> UbDeltas(const LivenessPlan& plan) {
  std::vector<int64_t> out;
  for (const OccupancyDelta& d : plan.at_completion) out.push_back(d.ub);
  return out;
}

TEST(LivenessPlanTest, PartialOverwritesReadsAndHalt) {
  const std::string text =
      "vfill dst=ub:0x0, count=64, dtype=s8, value=1\n"   // 0: [0,64) +64
      "vfill dst=ub:0x20, count=64, dtype=s8, value=2\n"  // 1: [32,96); [32,64) of #0 never read
      "vadd dst=ub:0x0, a=ub:0x0, b=ub:0x40, count=32, dtype=s8\n"  // 2: reads #0 and #1, rewrites [0,32)
      "dma.store local=ub:0x0, dram=0x0, row_bytes=32, rows=1, planes=1\n"  // 3: last reader of #2
      "cfg.set reg=load.local_row_stride, value=64\n"                       // 4
      "dma.load dram=0x0, local=ub:0x100, row_bytes=16, rows=4, planes=1\n"  // 5: 4 x 16 B, never read
      "halt\n"                                                               // 6
      "dma.store local=ub:0x20, dram=0x0, row_bytes=64, rows=1, planes=1\n";  // 7: never runs
  const LivenessPlan plan = PlanLiveness(systolic::Assemble(text, "t.sasm"), TestConfig());
  ASSERT_TRUE(plan.tracked);
  // #1: +64 for its range, -32 for #0's bytes it overwrote unread.
  // #2: +32 written; #0's remaining [0,32) dies here (read, then overwritten by #2 itself);
  //     #1 ([32,96), 64 bytes) was last read here: -64.  32 - 32 - 64 = -64.
  // #3: the store is #2's last reader: -32.  #5: 64 bytes (strided rows, not a 208-byte span).
  // #7 comes after halt, so #1 is not kept alive by it.
  EXPECT_EQ(UbDeltas(plan), (std::vector<int64_t>{64, 32, -64, -32, 0, 64, 0, 0}));
  for (const OccupancyDelta& d : plan.at_completion) EXPECT_EQ(d.acc, 0);
}

TEST(LivenessPlanTest, MatmulAccumulatingInPlaceKeepsItsBytesLive) {
  const std::string text =
      "vfill dst=ub:0x0, count=64, dtype=s8, value=1\n"      // 0: weights 4x16, +64
      "vfill dst=ub:0x100, count=8, dtype=s8, value=1\n"     // 1: activations 2x4, +8
      "mxu.ldw src=ub:0x0, k=4, n=16, dtype=s8, buf=1\n"     // 2: last reader of #0
      "mxu.matmul src=ub:0x100, dst=acc:0x0, m=2, dtype=s8, buf=1, acc=0, dataflow=ws\n"  // 3
      "mxu.matmul src=ub:0x100, dst=acc:0x0, m=2, dtype=s8, buf=1, acc=1, dataflow=ws\n"  // 4
      "dma.store local=acc:0x0, dram=0x0, row_bytes=128, rows=1, planes=1\n";             // 5
  const LivenessPlan plan = PlanLiveness(systolic::Assemble(text, "t.sasm"), TestConfig());
  ASSERT_EQ(plan.at_completion.size(), 6u);
  EXPECT_EQ(UbDeltas(plan), (std::vector<int64_t>{64, 8, -64, 0, -8, 0}));
  // 2 rows x 16 columns x 4 bytes = 128 accumulator bytes, rewritten in place by #4, stored by #5.
  std::vector<int64_t> acc;
  for (const OccupancyDelta& d : plan.at_completion) acc.push_back(d.acc);
  EXPECT_EQ(acc, (std::vector<int64_t>{0, 0, 0, 128, 0, -128}));
}

TEST(LivenessPlanTest, BadInstructionsContributeNothingInsteadOfThrowing) {
  // Buffer 0 never loaded: the run will report it; the plan just skips the matmul.
  const std::string text =
      "mxu.matmul src=ub:0x0, dst=acc:0x0, m=2, dtype=s8, buf=0, acc=0, dataflow=ws\n";
  const LivenessPlan plan = PlanLiveness(systolic::Assemble(text, "t.sasm"), TestConfig());
  ASSERT_EQ(plan.at_completion.size(), 1u);
  EXPECT_EQ(plan.at_completion[0].acc, 0);
}

TEST(LivenessPlanTest, GivesUpBeyondTheRangeLimitInsteadOfGrowing) {
  // 4097 loads of 256 one-byte rows, 2 bytes apart: 1 048 832 disjoint live ranges > 2^20.
  std::string text = "cfg.set reg=load.local_row_stride, value=2\n";
  for (int i = 0; i < 4097; ++i) {
    text += "dma.load dram=0x0, local=ub:" + std::to_string(i * 512) +
            ", row_bytes=1, rows=256, planes=1\n";
  }
  const LivenessPlan plan = PlanLiveness(systolic::Assemble(text, "t.sasm"), systolic::Preset("tpu-v1"));
  EXPECT_FALSE(plan.tracked);
  EXPECT_TRUE(plan.at_completion.empty());
}

TEST(OccupancyCountersTest, AppliesCompletionsInTimeOrderNotReportOrder) {
  LivenessPlan plan;
  plan.at_completion = {{100, 0}, {-100, 0}, {0, 50}};
  OccupancyCounters counters(&plan);
  RecordingSink sink;
  counters.Completed(0, 10);  // reported first, completes at 10
  counters.Completed(2, 30);
  counters.Advance(5, &sink);  // nothing before cycle 5
  EXPECT_TRUE(sink.events.empty());
  counters.Completed(1, 20);  // reported later, but completes before #2
  counters.Finish(&sink);
  ASSERT_EQ(sink.events.size(), 3u);
  EXPECT_EQ(sink.events[0].name, "ub_bytes_live");
  EXPECT_EQ(sink.events[0].start, 10);
  EXPECT_EQ(sink.events[0].value, 100);
  EXPECT_EQ(sink.events[1].start, 20);
  EXPECT_EQ(sink.events[1].value, 0);
  EXPECT_EQ(sink.events[2].name, "acc_bytes_live");
  EXPECT_EQ(sink.events[2].start, 30);
  EXPECT_EQ(sink.events[2].value, 50);
  EXPECT_EQ(counters.ub_peak(), 100);
  EXPECT_EQ(counters.acc_peak(), 50);
}

TEST(OccupancyCountersTest, UntrackedPlanReportsNothing) {
  LivenessPlan plan;
  plan.tracked = false;
  OccupancyCounters counters(&plan);
  counters.Completed(0, 1);
  RecordingSink sink;
  counters.Finish(&sink);
  EXPECT_TRUE(sink.events.empty());
  EXPECT_EQ(counters.ub_peak(), -1);
}

// load A and W -> ldw -> matmul -> vcvt to int8 -> store, plus a never-read vfill.
TEST(OccupancyCountersTest, PipelineCountersFollowTheTimeline) {
  const std::string text =
      "dma.load dram=0x0, local=ub:0x0, row_bytes=256, rows=1, planes=1\n"      // 0 A: +256
      "dma.load dram=0x100, local=ub:0x100, row_bytes=256, rows=1, planes=1\n"  // 1 W: +256
      "sem.signal unit=load, sem=0, count=1\n"
      "sem.wait unit=mxu, sem=0, count=1\n"
      "mxu.ldw src=ub:0x100, k=16, n=16, dtype=s8, buf=0\n"                          // 4: W dies
      "mxu.matmul src=ub:0x0, dst=acc:0x0, m=16, dtype=s8, buf=0, acc=0, dataflow=ws\n"  // 5
      "sem.signal unit=mxu, sem=1, count=1\n"
      "sem.wait unit=vector, sem=1, count=1\n"
      "vcvt dst=ub:0x200, src=acc:0x0, count=256, src_type=s32, dst_type=s8\n"  // 8: acc dies, +256
      "sem.signal unit=vector, sem=2, count=1\n"
      "sem.wait unit=store, sem=2, count=1\n"
      "dma.store local=ub:0x200, dram=0x1000, row_bytes=128, rows=1, planes=1\n"  // 11: #8 dies
      "vfill dst=ub:0x300, count=16, dtype=s8, value=0\n"                         // 12: never read
      "halt\n";
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  RecordingSink sink;
  SimOptions options;
  options.trace = &sink;
  const SimStats stats = RunSasm(text, config, memories, options);
  EXPECT_EQ(stats.ub_peak_bytes_live, 512);
  EXPECT_EQ(stats.acc_peak_bytes_live, 16 * 16 * 4);

  std::vector<double> ub, acc;
  std::vector<int64_t> acc_cycles;
  int64_t previous = -1;
  for (const auto& e : sink.events) {
    if (e.kind != "counter" || e.name == "dram_gbps") continue;
    EXPECT_GE(e.start, previous) << "samples are in time order";
    previous = e.start;
    if (e.name == "ub_bytes_live") ub.push_back(e.value);
    if (e.name == "acc_bytes_live") acc.push_back(e.value), acc_cycles.push_back(e.start);
  }
  EXPECT_EQ(ub, (std::vector<double>{256, 512, 256, 0, 256, 272, 16}));
  EXPECT_EQ(acc, (std::vector<double>{1024, 0}));
  // The accumulators fill when the matmul's results are in and empty when vcvt finishes.
  int64_t matmul_end = -1, vcvt_end = -1;
  for (const auto& e : sink.events) {
    if (e.kind == "busy" && e.name == "mxu.matmul") matmul_end = e.end;
    if (e.kind == "busy" && e.name == "vcvt") vcvt_end = e.end;
  }
  ASSERT_EQ(acc_cycles.size(), 2u);
  EXPECT_EQ(acc_cycles[0], matmul_end);
  EXPECT_EQ(acc_cycles[1], vcvt_end);
}

}  // namespace
}  // namespace simulator

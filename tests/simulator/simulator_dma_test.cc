// The SystemC model's DMA engines and DRAM channel: simulated time derived by hand from the
// Gemmini rates (sim_test_util.h), strided copies checked byte by byte, bad addresses.
//
// Hand model (docs/simulator.md): a transfer holds the DRAM channel for bus_bytes / 16 cycles
// (each row rounded up to 64-byte bursts) and completes 100 cycles of latency after that; the
// front end dispatches instruction i at cycle i when nothing stalls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "tests/simulator/sim_test_util.h"

namespace simulator {
namespace {

using ::testing::HasSubstr;
using testing_util::RecordingSink;
using testing_util::RunError;
using testing_util::RunSasm;
using testing_util::TestConfig;
using systolic::Unit;

TEST(SimDmaTest, SingleLoadTakesLatencyPlusBursts) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  std::vector<uint8_t> data(1024);
  std::iota(data.begin(), data.end(), 0);
  memories.dram.Write(0x1000, data);
  RecordingSink sink;
  const SimStats stats = RunSasm(
      "dma.load dram=0x1000, local=ub:0x100, row_bytes=1024, rows=1, planes=1\nhalt\n", config,
      memories, {.trace = &sink});
  // 1024 B / 16 B per cycle = 64 cycles on the channel, then 100 cycles of latency.
  EXPECT_EQ(stats.cycles, 64 + 100);
  EXPECT_DOUBLE_EQ(stats.seconds, 164e-9);
  EXPECT_EQ(stats.dram_bytes_read, 1024);
  EXPECT_EQ(stats.ub_bytes_written, 1024);
  EXPECT_EQ(stats.units[0].instructions, 1);
  EXPECT_EQ(stats.units[0].busy_cycles, 164);
  EXPECT_TRUE(stats.units[0].stall_cycles.empty());
  EXPECT_EQ(stats.units[4].instructions, 1);  // halt
  EXPECT_DOUBLE_EQ(stats.energy_pj.at("dram"), 1024 * config.energy_dram_pj_per_byte);
  EXPECT_DOUBLE_EQ(stats.energy_pj.at("ub"), 1024 * config.energy_ub_pj_per_byte);
  EXPECT_DOUBLE_EQ(stats.total_energy_pj(), 1024 * (config.energy_dram_pj_per_byte +
                                                    config.energy_ub_pj_per_byte));
  EXPECT_EQ(memories.ub.Read(0x100, 1024)[1023], 1023 % 256);
  EXPECT_EQ(memories.ub.Read(0x100 + 200, 1)[0], 200);

  const auto busy = sink.Of("busy", Unit::kLoad);
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0].start, 0);
  EXPECT_EQ(busy[0].end, 164);
  EXPECT_EQ(busy[0].name, "dma.load");
  EXPECT_EQ(sink.finished_at, 164);
  // The DRAM bandwidth counter: 16 B/cycle at 1 GHz = 16 GB/s while the channel is held.
  std::vector<std::pair<int64_t, double>> counters;
  for (const auto& e : sink.events) {
    if (e.kind == "counter" && e.name == "dram_gbps") counters.emplace_back(e.start, e.value);
  }
  EXPECT_EQ(counters, (std::vector<std::pair<int64_t, double>>{{0, 16.0}, {64, 0.0}}));
}

TEST(SimDmaTest, RowsRoundUpToBursts) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  // 3 rows of 100 B: each row occupies two 64-byte bursts -> 384 bus bytes = 24 cycles.
  const SimStats stats = RunSasm(
      "dma.load dram=0x0, local=ub:0x0, row_bytes=100, rows=3, planes=1\n", config, memories);
  EXPECT_EQ(stats.cycles, 24 + 100);
  EXPECT_EQ(stats.dram_bytes_read, 300);  // payload, not padding
}

TEST(SimDmaTest, RatesAtANonRoundClockRoundUpToWholeCycles) {
  const systolic::ArchConfig config = systolic::Preset("tpu-v1");
  ASSERT_EQ(config.clock_mhz, 700);
  ASSERT_EQ(config.dram_bandwidth_gbps, 34);
  ASSERT_EQ(config.dram_latency_ns, 100);
  Memories memories(config);
  // 100 ns at 700 MHz = 70 cycles exactly; 4096 B at 34e9 B/s = 120.47 ns = 84.33 cycles -> 85.
  const SimStats stats = RunSasm(
      "dma.load dram=0x0, local=ub:0x0, row_bytes=4096, rows=1, planes=1\n", config, memories);
  EXPECT_EQ(stats.cycles, 85 + 70);
  EXPECT_DOUBLE_EQ(stats.seconds, 155 / 700e6);
}

TEST(SimDmaTest, TwoLoadsBackToBackOverlapTheirLatency) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  RecordingSink sink;
  // The engine issues the second transfer when the first one's channel slot ends (cycle 64):
  // slots [0, 64) and [64, 128), data complete at 164 and 228.
  const SimStats stats = RunSasm(
      "dma.load dram=0x0, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n"
      "dma.load dram=0x400, local=ub:0x400, row_bytes=1024, rows=1, planes=1\n"
      "halt\n",
      config, memories, {.trace = &sink});
  EXPECT_EQ(stats.cycles, 64 + 64 + 100);
  EXPECT_EQ(stats.units[0].instructions, 2);
  EXPECT_EQ(stats.units[0].busy_cycles, 228);  // the union of [0, 164) and [64, 228)
  const auto busy = sink.Of("busy", Unit::kLoad);
  ASSERT_EQ(busy.size(), 2u);
  EXPECT_EQ(busy[1].start, 64);
  EXPECT_EQ(busy[1].end, 228);
}

TEST(SimDmaTest, SignalOnTheLoadEngineWaitsForItsTransfers) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  // sem.signal waits until both loads completed (228), then 1 cycle; the vector unit's wait
  // is satisfied at 229 and takes [229, 230); its vfill of 16 f32 then writes the UB.
  const SimStats stats = RunSasm(
      "dma.load dram=0x0, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n"
      "dma.load dram=0x400, local=ub:0x400, row_bytes=1024, rows=1, planes=1\n"
      "sem.signal unit=load, sem=5, count=1\n"
      "sem.wait unit=vector, sem=5, count=1\n"
      "vfill dst=ub:0x1000, count=16, dtype=f32, value=0\n",
      config, memories);
  EXPECT_EQ(stats.units[3].stall_cycles.at("semaphore"), 229 - 3);
  EXPECT_EQ(stats.units[0].busy_cycles, 229);
}

TEST(SimDmaTest, AtMostSixteenTransfersInFlight) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  // 20 loads of 16 B: each holds the channel 4 cycles (one 64 B burst) and completes 100 later.
  // Issue k starts at 4k while fewer than 16 are in flight; the 17th waits for the first to
  // complete at 104 ("dram" stall of 104 - 64 = 40). From then on one transfer completes every
  // 4 cycles, exactly when the engine is ready for the next: no further stall.
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += "dma.load dram=" + std::to_string(i * 16) + ", local=ub:" + std::to_string(i * 16) +
            ", row_bytes=16, rows=1, planes=1\n";
  }
  const SimStats stats = RunSasm(text, config, memories);
  // Loads 16..19 issue at 104, 108, 112, 116.
  EXPECT_EQ(stats.units[0].stall_cycles.at("dram"), 40);
  EXPECT_EQ(stats.cycles, 116 + 4 + 100);
}

TEST(SimDmaTest, LoadAndStoreContendForTheOneChannel) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  RecordingSink sink;
  // Load at cycle 0 holds the channel for [0, 64). The store, dispatched at cycle 1, reads the UB
  // for 1024 / 64 = 16 cycles, asks for the channel at cycle 1, waits until 64 ("dram" stall of
  // 63 cycles), holds it for 64 cycles and completes 100 cycles later: 64 + 64 + 100 = 228.
  const SimStats stats = RunSasm(
      "dma.load dram=0x0, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n"
      "dma.store local=ub:0x8000, dram=0x10000, row_bytes=1024, rows=1, planes=1\n"
      "halt\n",
      config, memories, {.trace = &sink});
  EXPECT_EQ(stats.cycles, 228);
  EXPECT_EQ(stats.units[1].stall_cycles.at("dram"), 63);
  EXPECT_EQ(stats.units[1].busy_cycles, 228 - 1 - 63);  // started at 1, minus the stall
  EXPECT_EQ(stats.dram_bytes_written, 1024);
  EXPECT_EQ(stats.ub_bytes_read, 1024);
  const auto stalls = sink.Of("stall", Unit::kStore);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].name, "dram");
  EXPECT_EQ(stalls[0].start, 1);
  EXPECT_EQ(stalls[0].end, 64);

  // Alone, the same store takes latency + transfer from its dispatch at cycle 0.
  Memories fresh(config);
  EXPECT_EQ(RunSasm("dma.store local=ub:0x8000, dram=0x10000, row_bytes=1024, rows=1, planes=1\n",
                    config, fresh)
                .cycles,
            164);
}

TEST(SimDmaTest, StridedLoadAndStoreMoveTheRightBytes) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  // DRAM holds 2 planes x 2 rows of 4 bytes: rows 256 B apart, planes 4096 B apart.
  for (uint8_t plane = 0; plane < 2; ++plane) {
    for (uint8_t row = 0; row < 2; ++row) {
      const std::vector<uint8_t> bytes = {uint8_t(plane * 16 + row * 4 + 1),
                                          uint8_t(plane * 16 + row * 4 + 2),
                                          uint8_t(plane * 16 + row * 4 + 3),
                                          uint8_t(plane * 16 + row * 4 + 4)};
      memories.dram.Write(0x2000 + plane * 4096 + row * 256, bytes);
    }
  }
  RunSasm(
      "cfg.set reg=load.dram_row_stride, value=256\n"
      "cfg.set reg=load.dram_plane_stride, value=4096\n"
      "dma.load dram=0x2000, local=ub:0x40, row_bytes=4, rows=2, planes=2\n"  // packed in the UB
      "sem.signal unit=load, sem=0, count=1\n"
      "sem.wait unit=store, sem=0, count=1\n"
      "cfg.set reg=store.local_row_stride, value=8\n"  // every other row of 4 of the packed UB
      "dma.store local=ub:0x40, dram=0x9000, row_bytes=4, rows=2, planes=1\n"
      "halt\n",
      config, memories);
  const auto ub = memories.ub.Read(0x40, 16);
  EXPECT_EQ(std::vector<uint8_t>(ub.begin(), ub.end()),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 19, 20, 21, 22, 23, 24}));
  std::vector<uint8_t> stored(8);
  memories.dram.Read(0x9000, stored);
  // Local rows at 0x40 and 0x48 (stride 8): plane 0 row 0 and plane 1 row 0.
  EXPECT_EQ(stored, (std::vector<uint8_t>{1, 2, 3, 4, 17, 18, 19, 20}));
  EXPECT_EQ(memories.dram.WrittenRanges().back(), (std::pair<uint64_t, uint64_t>{0x9000, 0x9008}));
}

TEST(SimDmaTest, OutOfRangeAddressesNameTheInstruction) {
  systolic::ArchConfig config = TestConfig();
  config.dram_bytes = 1 << 20;
  const std::string dram_error = RunError(
      "nop\n"
      "dma.load dram=0xFFF00, local=ub:0x0, row_bytes=512, rows=1, planes=1\n",
      config);
  EXPECT_THAT(dram_error, HasSubstr("instruction #1 (dma.load): DRAM access of 512 bytes at "
                                    "offset 1048320 is outside its 1048576 bytes"));
  // Gemmini's UB is 256 KiB = 0x40000 bytes.
  const std::string ub_error = RunError(
      "dma.store local=ub:0x3FF00, dram=0x0, row_bytes=512, rows=1, planes=1\n", config);
  EXPECT_THAT(ub_error, HasSubstr("instruction #0 (dma.store): unified buffer access"));
  // The location of the offending line travels with the error.
  Memories memories(config);
  try {
    RunSasm("nop\nnop\ndma.load dram=0xFFF00, local=ub:0x0, row_bytes=512, rows=1, planes=1\n",
            config, memories);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.location().line, 3u);
    ASSERT_NE(e.location().file, nullptr);
    EXPECT_EQ(*e.location().file, "test.sasm");
  }
}

TEST(SimDmaTest, StoreFromAccumulatorsNeverWrittenIsAnError) {
  const std::string error = RunError(
      "dma.store local=acc:0x10, dram=0x0, row_bytes=16, rows=1, planes=1\n", TestConfig());
  EXPECT_THAT(error, HasSubstr("instruction #0 (dma.store): accumulators byte 16 is read before "
                               "it was written"));
}

TEST(SimDmaTest, OversizedTransferIsRefusedBeforeCopying) {
  systolic::ArchConfig config = TestConfig();
  const int64_t saved = hlo::GlobalLimits().max_bytes_per_allocation;
  hlo::GlobalLimits().max_bytes_per_allocation = 1 << 20;
  const std::string error = RunError(
      "cfg.set reg=load.local_row_stride, value=1\n"
      "dma.load dram=0x0, local=ub:0x0, row_bytes=65535, rows=65535, planes=1\n",
      config);
  hlo::GlobalLimits().max_bytes_per_allocation = saved;
  EXPECT_THAT(error, HasSubstr("instruction #1 (dma.load): transfer of 4294836225 bytes exceeds "
                               "the limit of 1048576 bytes"));
}

}  // namespace
}  // namespace simulator

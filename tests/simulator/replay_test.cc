// Replay (simulator/replay.h): a program's data effects in program order give the memories the
// SystemC model gives, and the programs it calls data-independent take the same time whatever
// their data. Rates of sim_test_util.h's Gemmini configuration.
#include "simulator/replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/simulator/sim_test_util.h"

namespace simulator {
namespace {

using ::testing::HasSubstr;
using testing_util::TestConfig;

// A dynamic offset (cfg.load from a loaded s32), a load and a gather moved by it, a vector add,
// two stores and a ctrl.test on the offset's low byte.
constexpr char kProgram[] = R"(cfg.set reg=load.offset_scale, value=4
cfg.set reg=load.index_bound, value=8
dma.load dram=0x2000, local=ub:0x0, row_bytes=4, rows=1, planes=1
dma.load dram=0x2100, local=ub:0x400, row_bytes=8, rows=1, planes=1
sem.signal unit=load, sem=0, count=1
sem.wait unit=load, sem=0, count=1
cfg.load reg=load.dram_offset, src=ub:0x0
dma.load dram=0x1000, local=ub:0x100, row_bytes=16, rows=1, planes=1
dma.gather dram=0x1000, local=ub:0x200, index=ub:0x400, row_bytes=8, rows=2
sem.signal unit=load, sem=1, count=1
sem.wait unit=vector, sem=1, count=1
vadd dst=ub:0x300, a=ub:0x100, b=ub:0x200, count=4, dtype=f32
sem.signal unit=vector, sem=2, count=1
sem.wait unit=store, sem=2, count=1
dma.store local=ub:0x300, dram=0x3000, row_bytes=16, rows=1, planes=1
dma.store local=ub:0x0, dram=0x4000, row_bytes=1, rows=1, planes=1
ctrl.test src=0x4000
halt
)";

// x[j] = j + 1 at 0x1000, the offset at 0x2000, the gather's indices {3, 1} at 0x2100.
void Fill(Memories& memories, int32_t offset) {
  std::vector<float> x(16);
  for (size_t j = 0; j < x.size(); ++j) x[j] = static_cast<float>(j + 1);
  std::vector<uint8_t> bytes(x.size() * 4);
  std::memcpy(bytes.data(), x.data(), bytes.size());
  memories.dram.Write(0x1000, bytes);
  std::vector<uint8_t> word(4);
  std::memcpy(word.data(), &offset, 4);
  memories.dram.Write(0x2000, word);
  const int32_t indices[2] = {3, 1};
  std::vector<uint8_t> index_bytes(8);
  std::memcpy(index_bytes.data(), indices, 8);
  memories.dram.Write(0x2100, index_bytes);
}

std::vector<float> Output(const Memories& memories) {
  std::vector<uint8_t> bytes(16);
  memories.dram.Read(0x3000, bytes);
  std::vector<float> out(4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(Replay, LeavesTheMemoriesSimulateLeavesAndTheTimeDoesNotMoveWithTheData) {
  const systolic::ArchConfig config = TestConfig();
  const systolic::Program program = systolic::Assemble(kProgram, "replay.sasm");
  ASSERT_TRUE(TimingIsDataIndependent(program));
  std::optional<SimStats> first;
  for (int32_t offset : {0, 3, 2}) {
    Memories simulated(config), replayed(config);
    Fill(simulated, offset);
    Fill(replayed, offset);
    const SimStats stats = Simulate(program, config, simulated);
    SimStats replay_stats;
    Replay(program, config, replayed, replay_stats);
    const std::optional<bool> flag = replay_stats.test_flag;
    // By hand: x[offset + i] plus the gathered rows 3 and 1 (x[offset + 6, 7], x[offset + 2, 3]).
    const auto x = [offset](int j) { return static_cast<float>(offset + j + 1); };
    const std::vector<float> expected = {x(0) + x(6), x(1) + x(7), x(2) + x(2), x(3) + x(3)};
    EXPECT_EQ(Output(simulated), expected) << "offset " << offset;
    EXPECT_EQ(Output(replayed), expected) << "offset " << offset;
    ASSERT_TRUE(flag.has_value());
    EXPECT_EQ(*flag, offset != 0);
    EXPECT_EQ(stats.test_flag, flag);
    if (!first) {
      first = stats;
      continue;
    }
    // What a replay takes from the first run is what every run measures.
    EXPECT_EQ(stats.cycles, first->cycles) << "offset " << offset;
    EXPECT_EQ(stats.dram_bytes_read, first->dram_bytes_read);
    EXPECT_EQ(stats.ub_bytes_written, first->ub_bytes_written);
    EXPECT_DOUBLE_EQ(stats.total_energy_pj(), first->total_energy_pj());
  }
}

TEST(Replay, ScattersAndLoadedRegistersOtherThanOffsetsMayMoveTheTime) {
  const auto independent = [](const std::string& text) {
    return TimingIsDataIndependent(systolic::Assemble(text, "t.sasm"));
  };
  EXPECT_TRUE(independent("cfg.load reg=store.dram_offset, src=ub:0x0\nhalt\n"));
  EXPECT_FALSE(independent(
      "dma.scatter local=ub:0x0, dram=0x0, index=ub:0x100, row_bytes=4, rows=2\nhalt\n"));
  EXPECT_FALSE(independent("cfg.load reg=load.dram_row_stride, src=ub:0x0\nhalt\n"));
}

TEST(Replay, ErrorsNameTheInstruction) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  Fill(memories, 0);
  // Index 3 is outside load.index_bound 2.
  const systolic::Program program = systolic::Assemble(
      "cfg.set reg=load.index_bound, value=2\n"
      "dma.load dram=0x2100, local=ub:0x400, row_bytes=8, rows=1, planes=1\n"
      "dma.gather dram=0x1000, local=ub:0x200, index=ub:0x400, row_bytes=8, rows=2\nhalt\n",
      "bad.sasm");
  try {
    SimStats stats;
    Replay(program, config, memories, stats);
    ADD_FAILURE() << "no error";
  } catch (const hlo::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("instruction #2 (dma.gather)"));
    EXPECT_THAT(e.message(), HasSubstr("load.index_bound"));
  }
}

}  // namespace
}  // namespace simulator

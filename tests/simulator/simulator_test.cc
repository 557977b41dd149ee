// The SystemC model as a whole: matrix-unit timing against ComputeCost, a small int8 matmul
// program checked against a hand computation, DMA overlapping compute under semaphores,
// deadlock and cycle-limit errors, bad fields, repeated runs in one process, and throughput.
#include "simulator/simulator.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstring>
#include <vector>

#include "simulator/mxu_timing.h"
#include "simulator/unit_timing.h"
#include "tests/simulator/sim_test_util.h"

namespace simulator {
namespace {

using ::testing::HasSubstr;
using systolic::Unit;
using testing_util::RecordingSink;
using testing_util::RunError;
using testing_util::RunSasm;
using testing_util::TestConfig;

// The cost the matrix unit reports for one instruction of `text` (a one-line program), with
// buffer 0 holding a k x n int8 tile.
UnitCost CostOf(const std::string& text, const systolic::ArchConfig& config, int64_t k,
                int64_t n) {
  WeightBuffers weights;
  weights.buffers[0].loaded = true;
  weights.buffers[0].k = k;
  weights.buffers[0].n = n;
  weights.buffers[0].dtype = systolic::Dtype::kS8;
  weights.buffers[0].bytes.assign(static_cast<size_t>(k * n), 0);
  const systolic::Program program = systolic::Assemble(text, "cost.sasm");
  return ComputeCost(program.instructions.at(0), config, RegisterFile{}, weights);
}

void WriteS8(Memories& memories, uint64_t offset, const std::vector<int8_t>& values) {
  auto out = memories.ub.Write(offset, values.size());
  std::memcpy(out.data(), values.data(), values.size());
}

TEST(SimulatorTest, MatmulTakesComputeCostCyclesAfterItsWeights) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  WriteS8(memories, 0, std::vector<int8_t>(16 * 16, 1));
  WriteS8(memories, 0x1000, std::vector<int8_t>(64 * 16, 2));
  const std::string ldw = "mxu.ldw src=ub:0x0, k=16, n=16, dtype=s8, buf=0\n";
  const std::string matmul =
      "mxu.matmul src=ub:0x1000, dst=acc:0x0, m=64, dtype=s8, buf=0, acc=0, dataflow=ws\n";
  const int64_t ldw_cycles = CostOf(ldw, config, 16, 16).cycles;
  const UnitCost matmul_cost = CostOf(matmul, config, 16, 16);
  ASSERT_GT(ldw_cycles, 1);
  // The ports never limit this tile: 1024 UB bytes / 64 and 4096 acc bytes / 128 per cycle.
  ASSERT_GE(matmul_cost.cycles, 32);

  const SimStats stats = RunSasm(ldw + matmul + "halt\n", config, memories);
  // ldw [0, L); the matmul, dispatched at cycle 1, waits for the weights ("weights" stall of
  // L - 1 cycles), then occupies the array for ComputeCost's cycles.
  EXPECT_EQ(stats.cycles, ldw_cycles + matmul_cost.cycles);
  EXPECT_EQ(stats.units[2].instructions, 2);
  EXPECT_EQ(stats.units[2].busy_cycles, ldw_cycles + matmul_cost.cycles);
  EXPECT_EQ(stats.units[2].stall_cycles.at("weights"), ldw_cycles - 1);
  EXPECT_EQ(stats.macs, 64 * 16 * 16);
  EXPECT_DOUBLE_EQ(stats.mac_utilization,
                   64.0 * 16 * 16 / (static_cast<double>(stats.cycles) * 16 * 16));
  EXPECT_DOUBLE_EQ(stats.energy_pj.at("mac"), 64 * 16 * 16 * config.energy_mac_int8_pj);
  EXPECT_EQ(stats.acc_bytes_written, 64 * 16 * 4);
  // Every element of the result is sum over 16 of 2 * 1 = 32.
  int32_t word = 0;
  std::memcpy(&word, memories.acc.Read(63 * 64 + 60, 4).data(), 4);
  EXPECT_EQ(word, 32);
}

TEST(SimulatorTest, WeightLoadOverlapsTheMatmulOnTheOtherBuffer) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  WriteS8(memories, 0, std::vector<int8_t>(16 * 16 * 2, 1));
  WriteS8(memories, 0x1000, std::vector<int8_t>(64 * 16, 2));
  const std::string matmul0 =
      "mxu.matmul src=ub:0x1000, dst=acc:0x0, m=64, dtype=s8, buf=0, acc=0, dataflow=ws\n";
  const int64_t ldw = CostOf("mxu.ldw src=ub:0x0, k=16, n=16, dtype=s8, buf=0\n", config, 16, 16)
                          .cycles;
  const UnitCost matmul_cost = CostOf(matmul0, config, 16, 16);
  const int64_t matmul = matmul_cost.cycles;
  ASSERT_GE(matmul, ldw);
  ASSERT_EQ(matmul_cost.issue_interval, 64);  // ws: the next tile may enter after m rows
  const SimStats stats = RunSasm(
      "mxu.ldw src=ub:0x0, k=16, n=16, dtype=s8, buf=0\n"
      "mxu.ldw src=ub:0x100, k=16, n=16, dtype=s8, buf=1\n" +
          matmul0 +
          "mxu.matmul src=ub:0x1000, dst=acc:0x1000, m=64, dtype=s8, buf=1, acc=0, dataflow=ws\n",
      config, memories);
  // ldw 0 [0, L); at L, ldw 1 streams its tile at one 16 B row per cycle and matmul 0 its
  // activations at one 16 B row per cycle: 32 of the UB ports' 64 B/cycle, so matmul 0 starts
  // at L with no port stall and runs while ldw 1 loads [L, 2L); matmul 1's rows enter right
  // behind matmul 0's, m = 64 cycles later, while matmul 0 drains: L + 64 + C. Without double
  // buffering and pipelining it would take 2L + 2C.
  EXPECT_EQ(stats.units[2].stall_cycles.count("ub_port"), 0u);
  EXPECT_EQ(stats.cycles, ldw + 64 + matmul);
  EXPECT_EQ(stats.units[2].busy_cycles, ldw + 64 + matmul);
  EXPECT_EQ(stats.macs, 2 * 64 * 16 * 16);
}

TEST(SimulatorTest, AThrowingTraceSinkFailsTheRunNotTheProcess) {
  struct ThrowingSink : RecordingSink {
    void Busy(Unit unit, int64_t start, int64_t end, size_t index,
              std::string_view mnemonic) override {
      if (unit == Unit::kControl) throw hlo::Error("sink is full");
      RecordingSink::Busy(unit, start, end, index, mnemonic);
    }
  } sink;
  const systolic::ArchConfig config = TestConfig();
  EXPECT_EQ(RunError("cfg.set reg=quant.scale, value=1\nnop\n", config, {.trace = &sink}),
            "sink is full");
  Memories memories(config);
  EXPECT_EQ(RunSasm("cfg.set reg=quant.scale, value=1\n", config, memories).cycles, 1);
}

// SystemC runs on a kernel thread of the simulator's own, which a forked child does not have: a
// simulation there is refused with a message rather than left waiting for the thread forever.
TEST(SimulatorTest, AChildForkedAfterASimulationGetsAnErrorNotAHang) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  ASSERT_EQ(RunSasm("nop\n", config, memories).cycles, 1);  // the kernel thread is running
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string error = RunError("nop\n", config, {});
    _exit(error.find("forked after it had started") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(RunSasm("nop\n", config, memories).cycles, 1);  // the parent simulates on
}

// A 256x64 by 64x64 GEMM as 16 tiles of 16x16 weights, double-buffered: the weight loads hide
// behind the matmuls, so the model beats SCALE-Sim's back-to-back folds for the same GEMM.
TEST(SimulatorTest, TiledGemmHidesWeightLoadsAndBeatsCompatMode) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  std::vector<std::pair<int, int>> tiles;  // (n tile, k tile)
  for (int n = 0; n < 4; ++n) {
    for (int k = 0; k < 4; ++k) tiles.emplace_back(n, k);
  }
  auto ldw = [&](size_t i) {
    const auto [n, k] = tiles[i];
    return "mxu.ldw src=ub:" + std::to_string(0x10000 + (n * 4 + k) * 256) +
           ", k=16, n=16, dtype=s8, buf=" + std::to_string(i % 2) + "\n";
  };
  auto matmul = [&](size_t i) {
    const auto [n, k] = tiles[i];
    return "mxu.matmul src=ub:" + std::to_string(k * 16) + ", dst=acc:" +
           std::to_string(n * 256 * 16 * 4) + ", m=256, dtype=s8, buf=" + std::to_string(i % 2) +
           ", acc=" + (k > 0 ? "1" : "0") + ", dataflow=ws\n";
  };
  std::string text = "cfg.set reg=mxu.src_row_stride, value=64\n" + ldw(0);
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (i + 1 < tiles.size()) text += ldw(i + 1);  // the next tile loads during this matmul
    text += matmul(i);
  }
  WriteS8(memories, 0, std::vector<int8_t>(256 * 64, 1));
  // mxu.src_row_stride applies to mxu.ldw too: each tile's rows lie 64 B apart, so the tiles
  // overlap; all ones keeps every weight 1.
  WriteS8(memories, 0x10000, std::vector<int8_t>(16 * 256 + 1024, 1));
  const SimStats stats = RunSasm(text, config, memories);

  ASSERT_EQ(CostOf(ldw(0), config, 16, 16).cycles, 16);
  const int64_t c = CostOf(matmul(0), config, 16, 16).cycles;
  ASSERT_EQ(c, 256 + 16 + 16 - 2);
  // cfg.set [0, 1), ldw 0 [1, 17), ldw 1 [17, 33); matmul 0 starts at 17: ldw 1 (16 B/cycle)
  // and matmul 0 (one 16 B activation row per cycle) share the 64 B/cycle UB ports. In program
  // order ldw i+1 precedes matmul i, and ldw i+1 (into the buffer matmul i-1 reads) may start
  // only once matmul i-1's last row has passed row 0's last column, m + n - 2 = 270 cycles
  // after that matmul started: matmul i starts 270 cycles after matmul i-1 (i = 1..14).
  // Matmul 15 has no ldw ahead of it and follows after m = 256; it ends c later.
  EXPECT_EQ(stats.cycles, 17 + 14 * 270 + 256 + c);
  EXPECT_EQ(stats.cycles, 4339);
  EXPECT_EQ(stats.units[2].stall_cycles.count("ub_port"), 0u);
  EXPECT_EQ(stats.units[2].stall_cycles.count("weights"), 0u);
  EXPECT_EQ(stats.macs, 256 * 64 * 64);
  int32_t word = 0;
  std::memcpy(&word, memories.acc.Read(3 * 256 * 16 * 4 + 255 * 64 + 60, 4).data(), 4);
  EXPECT_EQ(word, 64);  // every output is a dot product of 64 ones

  const MxuTiming compat = TimeGemm({16, 16, systolic::Dataflow::kWs}, {256, 64, 64});
  EXPECT_EQ(compat.total_cycles, 16 * (2 * 16 + 16 + 256 - 2) - 1);  // folds * tau - 1
  EXPECT_LT(stats.cycles, compat.total_cycles);
  std::printf("256x64x64 GEMM on 16x16 ws: model %lld cycles, SCALE-Sim compat %lld\n",
              static_cast<long long>(stats.cycles), static_cast<long long>(compat.total_cycles));
}

// The same GEMM with each weight load issued one matmul later (ldw 0, ldw 1, matmul 0, then
// matmul i, ldw i+1): the in-order unit waits for a buffer to be released only while the array
// is still busy with the matmul behind it, and the tiles stream back to back.
TEST(SimulatorTest, LoadsIssuedAfterTheirMatmulLetTilesStreamBackToBack) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  auto ldw = [](size_t i) {
    return "mxu.ldw src=ub:" + std::to_string(0x10000 + i * 256) + ", k=16, n=16, dtype=s8, buf=" +
           std::to_string(i % 2) + "\n";
  };
  auto matmul = [](size_t i) {
    return "mxu.matmul src=ub:" + std::to_string((i % 4) * 16) + ", dst=acc:" +
           std::to_string((i / 4) * 256 * 16 * 4) + ", m=256, dtype=s8, buf=" +
           std::to_string(i % 2) + ", acc=" + (i % 4 > 0 ? "1" : "0") + ", dataflow=ws\n";
  };
  std::string text = "cfg.set reg=mxu.src_row_stride, value=64\n" + ldw(0) + ldw(1) + matmul(0);
  for (size_t i = 1; i < 16; ++i) {
    text += matmul(i);
    if (i + 1 < 16) text += ldw(i + 1);  // into the buffer matmul i-1 used
  }
  WriteS8(memories, 0, std::vector<int8_t>(256 * 64, 1));
  WriteS8(memories, 0x10000, std::vector<int8_t>(16 * 256 + 1024, 1));
  const SimStats stats = RunSasm(text, config, memories);
  // cfg.set, ldw 0 [1, 17), ldw 1 [17, 33) sharing the UB ports with matmul 0, which starts at
  // 17; every later matmul m = 256 cycles after the previous (ldw i+1 starts 270 cycles after
  // matmul i-1, while matmul i streams, and is done 16 cycles later), the last one ends 286
  // cycles after its start.
  EXPECT_EQ(stats.cycles, 17 + 15 * 256 + 286);
  // A weight load (16 B/cycle) and a matmul (16 B/cycle) never fill the 64 B/cycle ports.
  EXPECT_EQ(stats.units[2].stall_cycles.count("ub_port"), 0u);
  EXPECT_EQ(stats.units[2].stall_cycles.count("weights"), 0u);
  int32_t word = 0;
  std::memcpy(&word, memories.acc.Read(3 * 256 * 16 * 4 + 255 * 64 + 60, 4).data(), 4);
  EXPECT_EQ(word, 64);
}

TEST(SimulatorTest, SmallInt8MatmulProgramIsBitExact) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  // A = [[1, -2], [3, 4]] and W = [[5, 6], [-7, 8]] in DRAM, loaded, multiplied, stored back.
  const std::vector<uint8_t> a = {1, 0xFE, 3, 4};
  const std::vector<uint8_t> w = {5, 6, 0xF9, 8};
  memories.dram.Write(0x100, a);
  memories.dram.Write(0x200, w);
  const SimStats stats = RunSasm(
      "dma.load dram=0x200, local=ub:0x0, row_bytes=4, rows=1, planes=1\n"
      "dma.load dram=0x100, local=ub:0x40, row_bytes=4, rows=1, planes=1\n"
      "sem.signal unit=load, sem=1, count=1\n"
      "sem.wait unit=mxu, sem=1, count=1\n"
      "mxu.ldw src=ub:0x0, k=2, n=2, dtype=s8, buf=1\n"
      "mxu.matmul src=ub:0x40, dst=acc:0x80, m=2, dtype=s8, buf=1, acc=0, dataflow=ws\n"
      "sem.signal unit=mxu, sem=2, count=1\n"
      "sem.wait unit=store, sem=2, count=1\n"
      "dma.store local=acc:0x80, dram=0x300, row_bytes=16, rows=1, planes=1\n"
      "halt\n",
      config, memories);
  std::vector<uint8_t> bytes(16);
  memories.dram.Read(0x300, bytes);
  std::vector<int32_t> c(4);
  std::memcpy(c.data(), bytes.data(), 16);
  // Row 0: 1*5 + -2*-7 = 19, 1*6 + -2*8 = -10; row 1: 3*5 + 4*-7 = -13, 3*6 + 4*8 = 50.
  EXPECT_EQ(c, (std::vector<int32_t>{19, -10, -13, 50}));
  EXPECT_EQ(stats.macs, 8);
  // Timeline: loads complete at 104 and 108 (4 B -> one 64 B burst = 4 cycles, + 100), signal
  // [108, 109); the mxu waits, takes the semaphore [109, 110), loads weights for L cycles, then
  // multiplies for C; its signal waits for that and takes 1 cycle; the store waits, takes the
  // semaphore (1 cycle), reads 16 B (1 port cycle, overlapped), holds the channel 4 cycles and
  // completes 100 later.
  const int64_t ldw = CostOf("mxu.ldw src=ub:0x0, k=2, n=2, dtype=s8, buf=0\n", config, 2, 2).cycles;
  const int64_t matmul =
      CostOf("mxu.matmul src=ub:0x40, dst=acc:0x80, m=2, dtype=s8, buf=0, acc=0, dataflow=ws\n",
             config, 2, 2)
          .cycles;
  EXPECT_EQ(stats.cycles, 110 + ldw + matmul + 1 + 1 + 4 + 100);
  EXPECT_GT(stats.units[1].stall_cycles.at("semaphore"), 0);
}

// A matrix-unit sem.signal is a retirement token: the array keeps streaming, and the count
// becomes visible one cycle after every earlier matrix-unit instruction completed.
TEST(SimulatorTest, MatrixUnitSignalDoesNotStallTheArray) {
  const systolic::ArchConfig config = TestConfig();  // 16 x 16 array, 16 vector lanes
  const std::string ldw = "mxu.ldw src=ub:0x0, k=2, n=2, dtype=s8, buf=0\n";
  const std::string mm1 =
      "mxu.matmul src=ub:0x40, dst=acc:0x0, m=64, dtype=s8, buf=0, acc=0, dataflow=ws\n";
  const std::string mm2 =
      "mxu.matmul src=ub:0x40, dst=acc:0x400, m=64, dtype=s8, buf=0, acc=0, dataflow=ws\n";
  const std::string signal = "sem.signal unit=mxu, sem=2, count=1\n";
  // 16 s32 values of the first matmul's result (its rows 0-7, columns 0-1) to the UB.
  const std::string consume = "sem.wait unit=vector, sem=2, count=1\n"
                              "vmov dst=ub:0x800, src=acc:0x0, count=16, dtype=s32\n";
  auto cycles = [&](const std::string& text) {
    Memories memories(config);
    WriteS8(memories, 0x0, std::vector<int8_t>(4, 1));
    WriteS8(memories, 0x40, std::vector<int8_t>(128, 2));
    return RunSasm(text + "halt\n", config, memories).cycles;
  };
  const int64_t one = cycles(ldw + mm1);
  const int64_t two = cycles(ldw + mm1 + mm2);
  // The second matmul follows the first after its issue interval (m = 64 rows).
  EXPECT_EQ(two - one, 64);
  // A signal between them changes nothing for the array, and a consumer of the first result
  // starts 1 cycle after the first matmul completes: wait 1 cycle, vmov ceil(16 / 16) + 4.
  EXPECT_EQ(cycles(ldw + mm1 + signal + mm2 + consume), two);
  EXPECT_EQ(cycles(ldw + mm1 + signal + consume), one + 1 + 1 + 5);
}

TEST(SimulatorTest, ConvolutionTileThroughTheModel) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  // A 3x3 single-channel input and a 2x2 kernel with one filter: a 2x2 output.
  WriteS8(memories, 0x0, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  WriteS8(memories, 0x100, {1, 0, 0, -1});  // (kh, kw, cin) order: k = 4, n = 1
  const SimStats stats = RunSasm(
      "mxu.ldw src=ub:0x100, k=4, n=1, dtype=s8, buf=0\n"
      "mxu.conv src=ub:0x0, dst=acc:0x0, in_h=3, in_w=3, kh=2, kw=2, stride=1, dtype=s8, buf=0, "
      "acc=0, dataflow=ws\n",
      config, memories);
  std::vector<int32_t> out(4);
  std::memcpy(out.data(), memories.acc.Read(0, 16).data(), 16);
  // out[i][j] = x[i][j] - x[i+1][j+1] = -4 everywhere.
  EXPECT_EQ(out, (std::vector<int32_t>{-4, -4, -4, -4}));
  EXPECT_EQ(stats.macs, 4 * 4 * 1);
  EXPECT_EQ(stats.units[2].instructions, 2);
}

TEST(SimulatorTest, AccumulatingIntoUnwrittenAccumulatorsIsAnError) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  WriteS8(memories, 0, std::vector<int8_t>(64, 1));
  try {
    RunSasm(
        "mxu.ldw src=ub:0x0, k=2, n=2, dtype=s8, buf=0\n"
        "mxu.matmul src=ub:0x10, dst=acc:0x0, m=2, dtype=s8, buf=0, acc=1, dataflow=ws\n",
        config, memories);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("instruction #1 (mxu.matmul): "));
    EXPECT_THAT(e.message(), HasSubstr("read before it was written"));
    EXPECT_EQ(e.location().line, 2u);
  }
}

TEST(SimulatorTest, OversizedMatrixWorkIsRefused) {
  const systolic::ArchConfig config = TestConfig();
  const int64_t saved = hlo::GlobalLimits().max_elements_per_array;
  hlo::GlobalLimits().max_elements_per_array = 1000;
  Memories memories(config);
  WriteS8(memories, 0, std::vector<int8_t>(4096, 1));
  std::string error;
  try {
    RunSasm(
        "mxu.ldw src=ub:0x0, k=16, n=16, dtype=s8, buf=0\n"
        "mxu.matmul src=ub:0x0, dst=acc:0x0, m=4, dtype=s8, buf=0, acc=0, dataflow=ws\n"
        "mxu.matmul src=ub:0x0, dst=acc:0x0, m=8, dtype=s8, buf=0, acc=0, dataflow=ws\n",
        config, memories);
  } catch (const hlo::Error& e) {
    error = e.message();
  }
  hlo::GlobalLimits().max_elements_per_array = saved;
  // 4 x 16 x 16 = 1024 MACs: the first matmul is already over the limit.
  EXPECT_EQ(error,
            "instruction #1 (mxu.matmul): 1024 multiply-accumulates exceed the limit of 1000 per "
            "instruction");
}

TEST(SimulatorTest, DmaOverlapsComputeUnderSemaphores) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  const std::string vadd0 = "vadd dst=ub:0x2000, a=ub:0x0, b=ub:0x0, count=256, dtype=f32\n";
  const std::string vadd1 = "vadd dst=ub:0x3000, a=ub:0x1000, b=ub:0x1000, count=256, dtype=f32\n";
  RecordingSink sink;
  const SimStats stats = RunSasm(
      "dma.load dram=0x0, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n"
      "sem.signal unit=load, sem=0, count=1\n"
      "dma.load dram=0x400, local=ub:0x1000, row_bytes=1024, rows=1, planes=1\n"
      "sem.signal unit=load, sem=1, count=1\n"
      "sem.wait unit=vector, sem=0, count=1\n" +
          vadd0 +
          "sem.wait unit=vector, sem=1, count=1\n" + vadd1 + "halt\n",
      config, memories, {.trace = &sink});
  // A vadd of 256 f32 moves 3 x 1024 B through the 64 B/cycle UB ports: 48 cycles unless the
  // unit itself is slower.
  const int64_t vadd = std::max<int64_t>(48, CostOf(vadd0, config, 1, 1).cycles);
  // load 0 [0, 164), signal [164, 165); load 1 [165, 329), signal [329, 330);
  // vector: wait until 165, 1 cycle, vadd from 166; wait until 330, 1 cycle, vadd from 331.
  EXPECT_EQ(stats.cycles, 331 + vadd);
  const int64_t load_busy = stats.units[0].busy_cycles;
  const int64_t vector_busy = stats.units[3].busy_cycles;
  EXPECT_EQ(load_busy, 164 + 1 + 164 + 1);
  EXPECT_EQ(vector_busy, 1 + vadd + 1 + vadd);
  EXPECT_LT(stats.cycles, load_busy + vector_busy);  // the first vadd overlapped the second load
  EXPECT_EQ(stats.units[3].stall_cycles.at("semaphore"), (165 - 4) + (330 - (166 + vadd)));
  EXPECT_EQ(stats.vector_element_ops, 512);
  const auto vector_busy_events = sink.Of("busy", Unit::kVector);
  ASSERT_EQ(vector_busy_events.size(), 4u);
  EXPECT_EQ(vector_busy_events[1].start, 166);
  EXPECT_EQ(vector_busy_events[1].name, "vadd");
  EXPECT_EQ(vector_busy_events[1].index, 5u);
}

TEST(SimulatorTest, UbPortContentionDelaysTheLaterUnit) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  // Both vadds move 3 KiB through the UB ports (48 cycles). The vector unit starts at cycle 0;
  // the store, dispatched at cycle 1, finds the ports busy until 48 ("ub_port" stall of 47).
  const SimStats stats = RunSasm(
      "vadd dst=ub:0x2000, a=ub:0x0, b=ub:0x0, count=256, dtype=f32\n"
      "dma.store local=ub:0x4000, dram=0x0, row_bytes=64, rows=1, planes=1\n",
      config, memories);
  EXPECT_EQ(stats.units[1].stall_cycles.at("ub_port"), 47);
  // Then 1 port cycle, the channel for 4 cycles and 100 cycles of latency: 48 + 4 + 100.
  EXPECT_EQ(stats.cycles, std::max<int64_t>(152, stats.units[3].busy_cycles));
}

TEST(SimulatorTest, DeadlockNamesEveryBlockedUnit) {
  const std::string error = RunError(
      "sem.wait unit=load, sem=3, count=1\n"
      "nop\n"
      "sem.wait unit=store, sem=4, count=2\n"
      "sem.signal unit=store, sem=3, count=1\n"
      "halt\n",
      TestConfig());
  EXPECT_EQ(error,
            "deadlock: load unit blocked at instruction #0 (sem.wait sem=3 count=1, line 1:1), "
            "store unit blocked at instruction #2 (sem.wait sem=4 count=2, line 3:1)");
}

TEST(SimulatorTest, DeadlockWithAFullQueueNamesTheFrontEnd) {
  std::string text = "sem.wait unit=vector, sem=0, count=1\n";
  for (int i = 0; i < 20; ++i) text += "cfg.set reg=quant.scale, value=0\n";
  text += "sem.signal unit=load, sem=0, count=1\n";
  const std::string error = RunError(text, TestConfig());
  EXPECT_THAT(error, HasSubstr("deadlock: vector unit blocked at instruction #0 (sem.wait sem=0"));
  // 16 cfg.set fill the vector queue; the 17th (instruction #17) cannot be dispatched.
  EXPECT_THAT(error, HasSubstr("front end stalled at instruction #17 (cfg.set, line 18:1) (the "
                               "vector queue is full)"));
}

TEST(SimulatorTest, CycleLimitNamesEachUnitsInstruction) {
  const std::string error = RunError(
      "sem.wait unit=store, sem=0, count=1\n"
      "dma.load dram=0x0, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n",
      TestConfig(), {.max_cycles = 100});
  EXPECT_EQ(error,
            "cycle limit of 100 cycles exceeded (load unit at instruction #1 (dma.load, line "
            "2:1), store unit at instruction #0 (sem.wait sem=0 count=1, line 1:1), mxu unit "
            "idle, vector unit idle, front end at instruction #1 (dma.load, line 2:1))");
}

TEST(SimulatorTest, BadFieldsAreReportedBeforeRunning) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  systolic::Program program;
  program.instructions.push_back(systolic::MakeInstruction(systolic::Opcode::kNop));
  systolic::Instruction cfg = systolic::MakeInstruction(systolic::Opcode::kCfgSet);
  cfg.set(systolic::CfgSetField::reg, 31);  // unassigned register
  program.instructions.push_back(cfg);
  try {
    Simulate(program, config, memories);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("instruction #1 (cfg.set): "));
  }
  systolic::Instruction wait = systolic::MakeInstruction(systolic::Opcode::kSemWait);
  wait.set(systolic::SemWaitField::unit, 7);
  program.instructions[1] = wait;
  try {
    Simulate(program, config, memories);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_EQ(e.message(), "instruction #1 (sem.wait): unit field 7 is not a unit (0..4)");
  }
  program.instructions[1].opcode = static_cast<systolic::Opcode>(0x99);  // not in isa.def
  try {
    Simulate(program, config, memories);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("instruction #1 (opcode 153): "));
  }
  EXPECT_THAT(RunError("sem.signal unit=control, sem=0, count=1\n", config),
              HasSubstr("instruction #0 (sem.signal): the control unit has no queue"));
  // A vector dtype the unit rejects is an error of that instruction.
  EXPECT_THAT(RunError("nop\nvexp dst=ub:0x0, src=ub:0x100, count=4, dtype=s8\n", config),
              HasSubstr("instruction #1 (vexp)"));
}

TEST(SimulatorTest, SimulateIsNotReentrant) {
  struct ReentrantSink : RecordingSink {
    void Busy(Unit unit, int64_t start, int64_t end, size_t index,
              std::string_view mnemonic) override {
      const systolic::ArchConfig config = TestConfig();
      Memories memories(config);
      Simulate(systolic::Program{}, config, memories);  // throws: a run is in progress
    }
  } sink;
  EXPECT_THAT(RunError("cfg.set reg=quant.scale, value=1\n", TestConfig(), {.trace = &sink}),
              HasSubstr("instruction #0 (cfg.set): Simulate called while a simulation is running"));
}

TEST(SimulatorTest, ManyRunsInOneProcessWithDifferentConfigs) {
  const std::string load = "dma.load dram=0x0, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n";
  for (int run = 0; run < 40; ++run) {
    systolic::ArchConfig config = TestConfig();
    // bandwidth 16 * (1 + run % 4) GB/s: a channel slot of 64 / (1 + run % 4) cycles (rounded
    // up) per load, then 100 + run cycles of latency after the second.
    const int factor = 1 + run % 4;
    config.dram_bandwidth_gbps = 16.0 * factor;
    config.dram_latency_ns = 100 + run;
    Memories memories(config);
    if (run % 10 == 5) {  // failing runs in between leave nothing behind
      EXPECT_THAT(RunError("sem.wait unit=mxu, sem=9, count=1\n" + load, config),
                  HasSubstr("deadlock"));
      EXPECT_THAT(RunError(load, config, {.max_cycles = 10}), HasSubstr("cycle limit"));
    }
    const SimStats stats = RunSasm(load + load, config, memories);
    const int64_t slot = (64 + factor - 1) / factor;
    ASSERT_EQ(stats.cycles, 2 * slot + 100 + run) << "run " << run;
  }
}

// ctrl.test (a loop condition's last instruction): the flag is the byte a store just wrote,
// read only after every unit drained, for one DRAM access (TestConfig: 100 cycles) + 1.
TEST(SimulatorTest, CtrlTestAndIndexReadTheConditionOnceEveryUnitHasDrained) {
  const systolic::ArchConfig config = TestConfig();
  for (uint8_t value : {0, 1, 7}) {
    Memories memories(config);
    memories.ub.Write(0, 1)[0] = value;
    RecordingSink trace;
    SimOptions options;
    options.trace = &trace;
    const SimStats stats = RunSasm(
        "dma.store local=ub:0x0, dram=0x80, row_bytes=1, rows=1, planes=1\n"
        "ctrl.test src=0x80\nhalt\n",
        config, memories, options);
    ASSERT_TRUE(stats.test_flag.has_value());
    EXPECT_EQ(*stats.test_flag, value != 0) << int{value};
    const RecordingSink::Event* store = nullptr;
    const RecordingSink::Event* test = nullptr;
    for (const auto& e : trace.events) {
      if (e.kind == "busy" && e.name == "dma.store") store = &e;
      if (e.kind == "busy" && e.name == "ctrl.test") test = &e;
    }
    ASSERT_NE(store, nullptr);
    ASSERT_NE(test, nullptr);
    EXPECT_GE(test->start, store->end);
    EXPECT_EQ(test->end - test->start, 100 + 1);
    EXPECT_EQ(stats.cycles, test->end + 1);  // then halt
  }
  {  // A load still in flight (issued, data not landed) holds the test back too.
    Memories memories(config);
    RecordingSink trace;
    SimOptions options;
    options.trace = &trace;
    RunSasm("dma.load dram=0x1000, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n"
            "ctrl.test src=0x80\nhalt\n",
            config, memories, options);
    int64_t load_end = -1, test_start = -1;
    for (const auto& e : trace.events) {
      if (e.kind == "busy" && e.name == "dma.load") load_end = e.end;
      if (e.kind == "busy" && e.name == "ctrl.test") test_start = e.start;
    }
    EXPECT_EQ(load_end, 64 + 100);  // 1024 B at 16 B/cycle, then the latency
    EXPECT_GE(test_start, load_end);
  }
  // ctrl.index: the s32 index, and XLA's rule outside [0, count): the last branch.
  for (const auto& [value, chosen] : std::vector<std::pair<int32_t, int64_t>>{
           {0, 0}, {1, 1}, {2, 2}, {7, 2}, {-1, 2}}) {
    Memories memories(config);
    std::vector<uint8_t> bytes(4);
    std::memcpy(bytes.data(), &value, 4);
    memories.dram.Write(0x80, bytes);
    const SimStats stats = RunSasm("ctrl.index src=0x80, count=3\nhalt\n", config, memories);
    EXPECT_EQ(stats.branch_index, chosen) << value;
    EXPECT_FALSE(stats.test_flag.has_value());
    EXPECT_EQ(stats.dram_bytes_read, 4);
    EXPECT_EQ(stats.test_cycles, 100 + 1);
  }
  EXPECT_THAT(RunError("ctrl.index src=0x80, count=0\nhalt\n", config), HasSubstr("count 0"));
  Memories memories(config);
  EXPECT_FALSE(RunSasm("nop\nhalt\n", config, memories).test_flag.has_value());
  EXPECT_THAT(RunError("ctrl.test src=0xffffffffff\nhalt\n", config),
              HasSubstr("ctrl.test"));
}

TEST(SimulatorTest, EmptyAndHaltOnlyPrograms) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  EXPECT_EQ(Simulate(systolic::Program{}, config, memories).cycles, 0);
  const SimStats stats = RunSasm("nop\nhalt\nnop\n", config, memories);
  EXPECT_EQ(stats.cycles, 2);  // fetch stops at halt
  EXPECT_EQ(stats.units[4].instructions, 2);
  EXPECT_EQ(stats.total_energy_pj(), 0);
}

TEST(SimulatorTest, SimpleInstructionsRunFast) {
  const systolic::ArchConfig config = TestConfig();
  Memories memories(config);
  constexpr int kInstructions = 200000;
  systolic::Program program;
  program.instructions.reserve(kInstructions);
  for (int i = 0; i < kInstructions; ++i) {
    systolic::Instruction inst = systolic::MakeInstruction(systolic::Opcode::kCfgSet);
    // Round-robin over the four units' registers: load, store, mxu, vector.
    static constexpr uint64_t kRegisters[] = {0, 4, 8, 10};
    inst.set(systolic::CfgSetField::reg, kRegisters[i % 4]);
    inst.set(systolic::CfgSetField::value, static_cast<uint64_t>(i));
    program.instructions.push_back(inst);
  }
  // CPU time as well as wall time: on a shared machine the wall clock measures the neighbours.
  const std::clock_t cpu_start = std::clock();
  const auto start = std::chrono::steady_clock::now();
  const SimStats stats = Simulate(program, config, memories);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  EXPECT_EQ(stats.cycles, kInstructions);  // one dispatch per cycle, each unit keeps up
  std::printf("simulated %d cfg.set in %.3f s wall, %.3f s CPU: %.2f M instructions per wall "
              "second, %.2f M per CPU second\n",
              kInstructions, seconds, cpu_seconds, kInstructions / seconds / 1e6,
              kInstructions / std::max(cpu_seconds, 1e-9) / 1e6);
  EXPECT_GT(kInstructions / seconds, 2e5);  // loose: the machine is shared (docs/simulator.md)
}

}  // namespace
}  // namespace simulator

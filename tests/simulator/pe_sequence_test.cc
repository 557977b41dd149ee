// Back-to-back matrix-unit instructions: the processing-element sequence model (pe_sequence.h)
// against the transaction-level rules (mxu_schedule.h driven by unit_timing.h's costs) and the
// SystemC model. One sequence is worked out by hand; on 200 random ws sequences (fixed seed,
// arrays 2x2 to 16x16, both buffers, varying k, n, m) every instruction's start and end equal
// the transaction-level schedule exactly (0 %), and on 40 of them the whole SystemC simulator's
// cycles equal the PE model's, with bit-identical accumulators.
#include "simulator/pe_sequence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/mxu_schedule.h"
#include "simulator/mxu_timing.h"
#include "simulator/simulator.h"
#include "tests/simulator/sim_test_util.h"

namespace simulator {
namespace {

using systolic::Dataflow;
using systolic::Dtype;
using Kind = PeStep::Kind;

PeStep Ldw(size_t buffer, int64_t k, int64_t n, uint32_t seed) {
  PeStep s{Kind::kLoadWeights, buffer, 0, k, n, {}};
  for (int64_t i = 0; i < k * n; ++i) s.data.push_back((seed + static_cast<uint32_t>(i) * 3) % 9);
  return s;
}
PeStep Matmul(size_t buffer, int64_t m, int64_t k, uint32_t seed) {
  PeStep s{Kind::kMatmul, buffer, m, 0, 0, {}};
  for (int64_t i = 0; i < m * k; ++i) s.data.push_back((seed + static_cast<uint32_t>(i) * 5) % 7);
  return s;
}

// The transaction-level schedule of the same steps: in program order, each requested when the
// previous one started, ports never limiting.
std::vector<MxuSchedule::Slot> Replay(const ArrayShape& array, const std::vector<PeStep>& steps) {
  MxuSchedule schedule;
  std::vector<MxuSchedule::Slot> slots;
  int64_t now = 0;
  int64_t k_of[2] = {0, 0}, n_of[2] = {0, 0};
  for (const PeStep& s : steps) {
    MxuSchedule::Slot slot;
    if (s.kind == Kind::kLoadWeights) {
      slot = schedule.Load(s.buffer, schedule.LoadStart(now, s.buffer),
                           WeightLoadCycles(array, s.k));
      k_of[s.buffer] = s.k, n_of[s.buffer] = s.n;
    } else {
      const PipelinedMxuTiming t =
          TimeInstructionPipelined(array, GemmShape{s.m, n_of[s.buffer], k_of[s.buffer]});
      UnitCost cost;
      cost.cycles = t.total_cycles;
      cost.issue_interval = t.issue_interval;
      cost.weights_hold = t.weights_hold;
      slot = schedule.Compute(s.buffer, schedule.ComputeStart(now, s.buffer), cost, 0);
    }
    now = slot.start;
    slots.push_back(slot);
  }
  return slots;
}

// C = A x W in plain integers: what every s8 matmul's column sums must be.
std::vector<uint32_t> IntegerProduct(const PeStep& a, const PeStep& w) {
  std::vector<uint32_t> c;
  for (int64_t t = 0; t < a.m; ++t) {
    for (int64_t j = 0; j < w.n; ++j) {
      int32_t sum = 0;
      for (int64_t i = 0; i < w.k; ++i) {
        sum += static_cast<int32_t>(static_cast<int8_t>(a.data[t * w.k + i])) *
               static_cast<int32_t>(static_cast<int8_t>(w.data[i * w.n + j]));
      }
      c.push_back(static_cast<uint32_t>(sum));
    }
  }
  return c;
}

TEST(PeSequence, WorkedByHand) {
  // R=4, C=3. ldw b0 (k=2, n=2) writes rows at 0,1 -> [0, 2). ldw b1 (k=2, n=3) -> [2, 4).
  // matmul b0 m=3: tile ready at 2 -> starts 2, ends 2 + m + R + n - 2 = 9.
  // matmul b1 m=2: the previous one's 3 rows have entered at 5 -> starts 5, ends 5+2+4+3-2 = 12.
  // ldw b0 (k=3, n=1): b0's last row (t=2) enters row 0 at 4 and reaches its last column (1) at
  // 5 -> writes rows at 5, 6, 7 -> [5, 8).
  // matmul b0 m=2: tile ready at 8 -> starts 8, ends 8+2+4+1-2 = 13.
  const ArrayShape array{4, 3, Dataflow::kWs};
  const std::vector<PeStep> steps = {Ldw(0, 2, 2, 1),    Ldw(1, 2, 3, 2),    Matmul(0, 3, 2, 3),
                                     Matmul(1, 2, 2, 4), Ldw(0, 3, 1, 5),    Matmul(0, 2, 3, 6)};
  const PeSequenceRun run = RunPeSequence(array, Dtype::kS8, steps);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 2}, {2, 4},  {2, 9},
                                                             {5, 12}, {5, 8}, {8, 13}};
  ASSERT_EQ(run.steps.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(run.steps[i].start, expected[i].first) << "step " << i;
    EXPECT_EQ(run.steps[i].end, expected[i].second) << "step " << i;
  }
  EXPECT_EQ(run.cycles, 13);
  EXPECT_EQ(run.steps[2].out, IntegerProduct(steps[2], steps[0]));
  EXPECT_EQ(run.steps[3].out, IntegerProduct(steps[3], steps[1]));
  EXPECT_EQ(run.steps[5].out, IntegerProduct(steps[5], steps[4]));
  // Without overlap the matmuls alone would take 7 + 7 + 5 = 19 cycles after the first tile.
  const std::vector<MxuSchedule::Slot> slots = Replay(array, steps);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(slots[i].start, expected[i].first) << "step " << i;
    EXPECT_EQ(slots[i].end, expected[i].second) << "step " << i;
  }
}

TEST(PeSequence, RejectsWhatItDoesNotModel) {
  auto error = [](const ArrayShape& array, const std::vector<PeStep>& steps) {
    try {
      RunPeSequence(array, Dtype::kS8, steps);
    } catch (const hlo::Error& e) {
      return e.message();
    }
    return std::string();
  };
  EXPECT_EQ(error({4, 4, Dataflow::kOs}, {Ldw(0, 2, 2, 0)}),
            "pe_sequence: only the weight-stationary dataflow overlaps instructions");
  EXPECT_EQ(error({4, 4, Dataflow::kWs}, {Matmul(1, 2, 2, 0)}),
            "pe_sequence: step 0: matmul on a buffer no earlier ldw filled");
  EXPECT_EQ(error({4, 4, Dataflow::kWs}, {Ldw(0, 5, 2, 0)}),
            "pe_sequence: step 0: need 1 <= k <= R and 1 <= n <= C");
}

struct RandomSequence {
  ArrayShape array;
  std::vector<PeStep> steps;
};

RandomSequence MakeSequence(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  RandomSequence seq;
  seq.array = ArrayShape{pick(2, 16), pick(2, 16), Dataflow::kWs};
  const int64_t R = seq.array.rows, C = seq.array.cols;
  int64_t k_of[2] = {0, 0};
  bool loaded[2] = {false, false};
  const int64_t length = pick(3, 12);
  for (int64_t i = 0; i < length; ++i) {
    const size_t buffer = static_cast<size_t>(pick(0, 1));
    const bool load = !loaded[buffer] || pick(0, 2) == 0;
    if (load) {
      k_of[buffer] = pick(1, R);
      seq.steps.push_back(Ldw(buffer, k_of[buffer], pick(1, C), static_cast<uint32_t>(pick(0, 99))));
      loaded[buffer] = true;
    } else {
      seq.steps.push_back(Matmul(buffer, pick(1, 3 * R), k_of[buffer],
                                 static_cast<uint32_t>(pick(0, 99))));
    }
  }
  // End with a matmul on the last loaded tile, so every sequence computes something.
  const size_t last = seq.steps.back().buffer;
  seq.steps.push_back(Matmul(last, pick(1, 3 * R), k_of[last], 7));
  return seq;
}

TEST(PeSequence, RandomSequencesMatchTheTransactionSchedule) {
  std::mt19937 rng(20240611);
  int64_t instructions = 0, overlapped = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const RandomSequence seq = MakeSequence(rng);
    SCOPED_TRACE("trial " + std::to_string(trial));
    const PeSequenceRun run = RunPeSequence(seq.array, Dtype::kS8, seq.steps);
    const std::vector<MxuSchedule::Slot> slots = Replay(seq.array, seq.steps);
    int64_t latest_end = 0;
    for (size_t i = 0; i < seq.steps.size(); ++i) {
      ASSERT_EQ(run.steps[i].start, slots[i].start) << "step " << i;
      ASSERT_EQ(run.steps[i].end, slots[i].end) << "step " << i;
      if (seq.steps[i].kind == Kind::kMatmul) {
        if (slots[i].start < latest_end) ++overlapped;
        latest_end = std::max(latest_end, slots[i].end);
      }
      ++instructions;
    }
    // Results: every matmul against plain integer arithmetic on its tile.
    size_t tile[2] = {0, 0};
    for (size_t i = 0; i < seq.steps.size(); ++i) {
      if (seq.steps[i].kind == Kind::kLoadWeights) {
        tile[seq.steps[i].buffer] = i;
      } else {
        ASSERT_EQ(run.steps[i].out, IntegerProduct(seq.steps[i], seq.steps[tile[seq.steps[i].buffer]]));
      }
    }
  }
  std::printf("200 random ws sequences, %lld instructions, %lld matmuls overlapping the previous\n",
              static_cast<long long>(instructions), static_cast<long long>(overlapped));
  EXPECT_GT(overlapped, 100);  // the overlap rules are really exercised
}

// The SystemC model running the same sequences as .sasm: total cycles equal to the PE model's,
// accumulators identical.
TEST(PeSequence, SimulatorMatchesThePeModelOnRandomSequences) {
  std::mt19937 rng(7);
  double worst = 0, worst_cycles = 0;
  for (int trial = 0; trial < 40; ++trial) {
    RandomSequence seq = MakeSequence(rng);
    SCOPED_TRACE("trial " + std::to_string(trial));
    systolic::ArchConfig config = testing_util::TestConfig();
    config.array_rows = seq.array.rows;
    config.array_cols = seq.array.cols;
    config.ub_banks = 1024;  // ports never the bottleneck: 16 KiB/cycle
    config.acc_banks = 1024;
    Memories memories(config);
    std::string text;
    uint64_t ub = 0, acc = 0;
    std::vector<uint64_t> dst(seq.steps.size(), 0);
    int64_t n_of[2] = {0, 0};
    for (size_t i = 0; i < seq.steps.size(); ++i) {
      const PeStep& s = seq.steps[i];
      auto bytes = memories.ub.Write(ub, s.data.size());
      for (size_t e = 0; e < s.data.size(); ++e) bytes[e] = static_cast<uint8_t>(s.data[e]);
      if (s.kind == Kind::kLoadWeights) {
        text += "mxu.ldw src=ub:" + std::to_string(ub) + ", k=" + std::to_string(s.k) +
                ", n=" + std::to_string(s.n) + ", dtype=s8, buf=" + std::to_string(s.buffer) + "\n";
        n_of[s.buffer] = s.n;
      } else {
        dst[i] = acc;
        text += "mxu.matmul src=ub:" + std::to_string(ub) + ", dst=acc:" + std::to_string(acc) +
                ", m=" + std::to_string(s.m) + ", dtype=s8, buf=" + std::to_string(s.buffer) +
                ", acc=0, dataflow=ws\n";
        acc += static_cast<uint64_t>(s.m * n_of[s.buffer] * 4);
      }
      ub += s.data.size();
    }
    const SimStats stats = testing_util::RunSasm(text, config, memories);
    const PeSequenceRun run = RunPeSequence(seq.array, Dtype::kS8, seq.steps);
    const double difference = std::abs(static_cast<double>(stats.cycles - run.cycles));
    worst = std::max(worst, difference / static_cast<double>(run.cycles));
    worst_cycles = std::max(worst_cycles, difference);
    // Exact: dispatch and the ports' turns (with 1024 banks) never delay these sequences.
    EXPECT_EQ(stats.cycles, run.cycles) << "simulator vs PE sequence model";
    for (size_t i = 0; i < seq.steps.size(); ++i) {
      if (seq.steps[i].kind != Kind::kMatmul) continue;
      const std::vector<uint32_t>& out = run.steps[i].out;
      std::vector<uint32_t> words(out.size());
      std::memcpy(words.data(), memories.acc.Read(dst[i], out.size() * 4).data(), out.size() * 4);
      ASSERT_EQ(words, out) << "step " << i;
    }
  }
  std::printf("simulator vs PE sequence model: worst deviation %.2f %% (%.0f cycles)\n",
              worst * 100, worst_cycles);
}

}  // namespace
}  // namespace simulator

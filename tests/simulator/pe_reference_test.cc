// The processing-element reference model (pe_reference.h) against the transaction-level costs
// (unit_timing.h ComputeCost, i.e. mxu_timing.h's TimeInstructionPipelined) and the functional
// model (functional.h ExecuteMxu): cycle counts equal and results bit-identical, on 240
// random GEMM and convolution tiles (fixed seed) on arrays from 2x2 to 16x16 in all three
// dataflows, multi-fold along m. A few small shapes are also checked against cycle counts worked
// out by hand from the PE model's description.
#include "simulator/pe_reference.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "hlo/diagnostic.h"
#include "simulator/functional.h"
#include "simulator/numeric_mxu.h"
#include "simulator/numeric_types.h"
#include "simulator/unit_timing.h"

namespace simulator {
namespace {

using systolic::Dataflow;
using systolic::Dtype;

PeGemm Counting(Dtype dtype, int64_t m, int64_t k, int64_t n) {
  PeGemm g{dtype, m, k, n, {}, {}};
  for (int64_t i = 0; i < m * k; ++i) g.a.push_back(static_cast<uint32_t>(i % 7 + 1));
  for (int64_t i = 0; i < k * n; ++i) g.w.push_back(static_cast<uint32_t>(i % 5 + 1));
  return g;
}

// Hand-worked from the conventions in pe_reference.h.
TEST(PeReference, WeightStationaryByHand) {
  // R=4 C=3, m=5 k=2 n=2. Weights: rows written at cycles 0,1 -> ldw = 2.
  // Row t of A enters row i at t+i; the sum of (t, j) is in row 3 (the bottom) at t+3+j.
  // Last: t=4, j=1 -> cycle 8 -> 9 cycles (= m + R + n - 2).
  PeRun run = RunPeReference({4, 3, Dataflow::kWs}, Counting(Dtype::kS8, 5, 2, 2));
  EXPECT_EQ(run.weight_load_cycles, 2);
  EXPECT_EQ(run.cycles, 9);
  EXPECT_EQ(run.folds, 1);
}

TEST(PeReference, OutputStationaryByHand) {
  // R=3 C=3, m=7 k=2 n=2: folds of rows {3,3,1}; the next fold starts max(k=2, rows=3)=3 later
  // (the column bus carries 3 results) -> starts 0,3,6. Last fold: PE(0,j) finishes at
  // 6 + (k-1) + 0 + j; j=1 -> cycle 8 -> 9 cycles.
  PeRun run = RunPeReference({3, 3, Dataflow::kOs}, Counting(Dtype::kS8, 7, 2, 2));
  EXPECT_EQ(run.folds, 3);
  EXPECT_EQ(run.cycles, 9);
  // R=2, m=5 k=1: starts 0,2,4; the last fold's one row finishes at 4 + 0 + 0 + 1 = 5 -> 6.
  EXPECT_EQ(RunPeReference({2, 3, Dataflow::kOs}, Counting(Dtype::kS8, 5, 1, 2)).cycles, 6);
}

TEST(PeReference, InputStationaryByHand) {
  // R=3 C=4, m=5 k=2 n=3: folds of A rows {4,1}. Fill rows at cycles 0,1 -> fold 0 streams from
  // 2. Its switch token reaches PE(0,3) at 2+3 = 5, the cycle the next tile's row 0 may be
  // written: rows at 5,6, and fold 1 streams at max(2 + n = 5, 7) = 7. Last output: t=2 in
  // column 0 leaves row 2 at 7 + 2 + 2 + 0 = 11 -> 12 cycles.
  PeRun run = RunPeReference({3, 4, Dataflow::kIs}, Counting(Dtype::kS8, 5, 2, 3));
  EXPECT_EQ(run.folds, 2);
  EXPECT_EQ(run.cycles, 12);
}

TEST(PeReference, RejectsBadShapes) {
  EXPECT_THROW(RunPeReference({4, 4, Dataflow::kWs}, Counting(Dtype::kS8, 2, 5, 2)), hlo::Error);
  EXPECT_THROW(RunPeReference({4, 4, Dataflow::kWs}, Counting(Dtype::kU8, 2, 2, 2)), hlo::Error);
  EXPECT_THROW(RunPeReference({65, 4, Dataflow::kWs}, Counting(Dtype::kS8, 2, 2, 2)), hlo::Error);
}

// ---- the acceptance test ----

struct Case {
  int64_t rows, cols;
  Dataflow dataflow;
  Dtype dtype;
  bool conv;
  int64_t m, k, n;                                   // the GEMM (m = output pixels for conv)
  int64_t in_h, in_w, kh, kw, stride, cin;           // conv only
};

uint32_t RandomElement(std::mt19937_64& rng, Dtype dtype) {
  switch (dtype) {
    case Dtype::kS8: return static_cast<uint32_t>(rng() & 0xff);
    case Dtype::kBf16: {
      std::uniform_real_distribution<float> value(-4.0f, 4.0f);
      return FloatToBf16Bits(value(rng));
    }
    default: {
      std::uniform_real_distribution<float> value(-4.0f, 4.0f);
      return std::bit_cast<uint32_t>(value(rng));
    }
  }
}

Case RandomCase(std::mt19937_64& rng, int index) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c{};
  c.rows = pick(2, 16);
  c.cols = pick(2, 16);
  c.dataflow = static_cast<Dataflow>(index % 3);
  const Dtype dtypes[] = {Dtype::kS8, Dtype::kBf16, Dtype::kF32};
  c.dtype = dtypes[pick(0, 2)];
  c.conv = index % 5 >= 3;  // 40 % convolutions
  c.n = pick(1, c.cols);
  if (!c.conv) {
    c.k = pick(1, c.rows);
    c.m = pick(1, 5 * std::max(c.rows, c.cols));  // up to 5x the array: many folds
    return c;
  }
  c.kh = pick(1, std::min<int64_t>(3, c.rows));
  c.kw = pick(1, std::max<int64_t>(1, std::min<int64_t>(3, c.rows / c.kh)));
  c.cin = pick(1, std::max<int64_t>(1, c.rows / (c.kh * c.kw)));
  c.stride = pick(1, 2);
  c.in_h = c.kh + pick(0, 8);
  c.in_w = c.kw + pick(0, 8);
  c.k = c.kh * c.kw * c.cin;
  c.m = ((c.in_h - c.kh) / c.stride + 1) * ((c.in_w - c.kw) / c.stride + 1);
  return c;
}

systolic::ArchConfig Config(const Case& c) {
  systolic::ArchConfig config = systolic::Preset("gemmini");
  config.array_rows = c.rows;
  config.array_cols = c.cols;
  config.mxu_dtypes = systolic::kMxuInt8 | systolic::kMxuBf16 | systolic::kMxuF32;
  return config;
}

void WriteUb(Memories& memories, uint64_t offset, Dtype dtype, const std::vector<uint32_t>& bits) {
  const int bytes = systolic::DtypeBytes(dtype);
  std::span<uint8_t> out = memories.ub.Write(offset, bits.size() * bytes);
  for (size_t i = 0; i < bits.size(); ++i) StoreBits(dtype, &out[i * bytes], bits[i]);
}

TEST(PeReference, MatchesTransactionLevelTimingAndFunctionalResults) {
  std::mt19937_64 rng(20261130);
  constexpr int kCases = 240;
  double worst = 0;
  std::string worst_case;
  int multi_fold = 0;
  for (int index = 0; index < kCases; ++index) {
    const Case c = RandomCase(rng, index);
    const std::string label = "case " + std::to_string(index) + ": " +
                              std::to_string(c.rows) + "x" + std::to_string(c.cols) + " " +
                              std::string(systolic::DataflowName(c.dataflow)) + " " +
                              std::string(systolic::DtypeName(c.dtype)) +
                              (c.conv ? " conv" : " gemm") + " m=" + std::to_string(c.m) +
                              " k=" + std::to_string(c.k) + " n=" + std::to_string(c.n);
    SCOPED_TRACE(label);
    const systolic::ArchConfig config = Config(c);
    Memories memories(config);
    RegisterFile registers{};
    WeightBuffers weights;

    // Weights at ub:0, activations (matrix or HWC image) after them.
    PeGemm gemm{c.dtype, c.m, c.k, c.n, {}, {}};
    for (int64_t i = 0; i < c.k * c.n; ++i) gemm.w.push_back(RandomElement(rng, c.dtype));
    const uint64_t input_at = 4096;
    std::vector<uint32_t> input;
    if (c.conv) {
      for (int64_t i = 0; i < c.in_h * c.in_w * c.cin; ++i) input.push_back(RandomElement(rng, c.dtype));
      // im2col written independently of functional_mxu.cc: window element (dh, dw, ch).
      const int64_t out_w = (c.in_w - c.kw) / c.stride + 1;
      for (int64_t p = 0; p < c.m; ++p) {
        for (int64_t dh = 0; dh < c.kh; ++dh) {
          for (int64_t dw = 0; dw < c.kw; ++dw) {
            for (int64_t ch = 0; ch < c.cin; ++ch) {
              const int64_t h = (p / out_w) * c.stride + dh, w = (p % out_w) * c.stride + dw;
              gemm.a.push_back(input[(h * c.in_w + w) * c.cin + ch]);
            }
          }
        }
      }
    } else {
      for (int64_t i = 0; i < c.m * c.k; ++i) input.push_back(RandomElement(rng, c.dtype));
      gemm.a = input;
    }
    WriteUb(memories, 0, c.dtype, gemm.w);
    WriteUb(memories, input_at, c.dtype, input);

    systolic::Instruction ldw = systolic::MakeInstruction(systolic::Opcode::kMxuLoadWeights);
    ldw.set(systolic::MxuLoadWeightsField::k, c.k);
    ldw.set(systolic::MxuLoadWeightsField::n, c.n);
    ldw.set(systolic::MxuLoadWeightsField::dtype, static_cast<uint64_t>(c.dtype));
    systolic::Instruction compute;
    if (c.conv) {
      using F = systolic::MxuConvField;
      compute = systolic::MakeInstruction(systolic::Opcode::kMxuConv);
      compute.set(F::src, input_at);
      compute.set(F::dst, systolic::kAccumulatorBit);
      compute.set(F::in_h, c.in_h);
      compute.set(F::in_w, c.in_w);
      compute.set(F::kh, c.kh);
      compute.set(F::kw, c.kw);
      compute.set(F::stride, c.stride);
      compute.set(F::dtype, static_cast<uint64_t>(c.dtype));
      compute.set(F::dataflow, static_cast<uint64_t>(c.dataflow));
    } else {
      using F = systolic::MxuMatmulField;
      compute = systolic::MakeInstruction(systolic::Opcode::kMxuMatmul);
      compute.set(F::src, input_at);
      compute.set(F::dst, systolic::kAccumulatorBit);
      compute.set(F::m, c.m);
      compute.set(F::dtype, static_cast<uint64_t>(c.dtype));
      compute.set(F::dataflow, static_cast<uint64_t>(c.dataflow));
    }
    ExecuteMxu(ldw, config, registers, weights, memories);
    const UnitCost ldw_cost = ComputeCost(ldw, config, registers, weights);
    ExecuteMxu(compute, config, registers, weights, memories);
    const UnitCost cost = ComputeCost(compute, config, registers, weights);

    const PeRun pe = RunPeReference({c.rows, c.cols, c.dataflow}, gemm);
    if (pe.folds > 1) ++multi_fold;
    const double error =
        std::fabs(static_cast<double>(cost.cycles - pe.cycles)) / static_cast<double>(pe.cycles);
    if (error > worst) {
      worst = error;
      worst_case = label;
    }
    // Exact, as README.md states (+-0 % on these tiles), not within a margin.
    EXPECT_EQ(cost.cycles, pe.cycles) << "ComputeCost vs PE model";
    if (c.dataflow == Dataflow::kWs) {
      EXPECT_EQ(ldw_cost.cycles, pe.weight_load_cycles);
    }
    EXPECT_EQ(cost.macs, c.m * c.k * c.n);

    std::span<const uint8_t> acc = memories.acc.Read(0, static_cast<uint64_t>(c.m * c.n * 4));
    int mismatches = 0;
    for (int64_t i = 0; i < c.m * c.n; ++i) {
      const uint32_t functional = LoadBits(Dtype::kS32, &acc[i * 4]);
      if (functional == pe.out[i]) continue;
      if (++mismatches <= 3) {
        ADD_FAILURE() << "element " << i << ": functional 0x" << std::hex << functional
                      << " vs PE model 0x" << pe.out[i];
      }
    }
    if (c.dtype == Dtype::kS8 && !c.conv) {  // int8: also exact against a plain int64 dot
      for (int64_t i = 0; i < c.m * c.n; i += 7) {
        int64_t dot = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          dot += static_cast<int8_t>(gemm.a[(i / c.n) * c.k + kk]) *
                 static_cast<int8_t>(gemm.w[kk * c.n + i % c.n]);
        }
        EXPECT_EQ(static_cast<int32_t>(pe.out[i]), dot);
      }
    }
  }
  std::printf("[pe_reference] %d tiles (%d multi-fold): worst |ComputeCost - PE| / PE = %.4f %%%s%s\n",
              kCases, multi_fold, 100 * worst, worst_case.empty() ? "" : " at ",
              worst_case.c_str());
  EXPECT_GE(multi_fold, 50);
}

// GEMMs larger than the array in every dimension, lowered as the compiler does: one mxu.ldw +
// mxu.matmul per (k block, n block), accumulating over k blocks (acc=1) and addressing the
// blocks with the stride registers. Instructions run one after another (the PE model starts each
// from an idle array), so this checks the per-instruction cycles again plus the accumulation
// across instructions, which must stay bit-identical.
TEST(PeReference, LargeGemmsAsInstructionSequences) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const Dtype dtypes[] = {Dtype::kS8, Dtype::kBf16, Dtype::kF32};
  int instructions = 0;
  for (int index = 0; index < 60; ++index) {
    Case c{};
    c.rows = pick(2, 16);
    c.cols = pick(2, 16);
    c.dataflow = static_cast<Dataflow>(index % 3);
    c.dtype = dtypes[pick(0, 2)];
    c.m = pick(1, 3 * c.rows);
    c.k = pick(1, 3 * c.rows);
    c.n = pick(1, 3 * c.cols);
    SCOPED_TRACE("gemm " + std::to_string(index) + ": " + std::to_string(c.rows) + "x" +
                 std::to_string(c.cols) + " " + std::string(systolic::DataflowName(c.dataflow)) +
                 " " + std::string(systolic::DtypeName(c.dtype)) + " M=" + std::to_string(c.m) +
                 " K=" + std::to_string(c.k) + " N=" + std::to_string(c.n));
    const systolic::ArchConfig config = Config(c);
    Memories memories(config);
    RegisterFile registers{};
    WeightBuffers weights;
    std::vector<uint32_t> a, w;
    for (int64_t i = 0; i < c.m * c.k; ++i) a.push_back(RandomElement(rng, c.dtype));
    for (int64_t i = 0; i < c.k * c.n; ++i) w.push_back(RandomElement(rng, c.dtype));
    const uint64_t a_at = 32768;
    const int bytes = systolic::DtypeBytes(c.dtype);
    WriteUb(memories, 0, c.dtype, w);
    WriteUb(memories, a_at, c.dtype, a);

    std::vector<uint32_t> expected(static_cast<size_t>(c.m * c.n), 0);
    int64_t cost_cycles = 0, pe_cycles = 0;
    int buf = 0;
    for (int64_t n0 = 0; n0 < c.n; n0 += c.cols) {
      for (int64_t k0 = 0; k0 < c.k; k0 += c.rows) {
        const int64_t kb = std::min(c.rows, c.k - k0), nb = std::min(c.cols, c.n - n0);
        const auto reg = [&](systolic::ConfigRegister r) -> uint32_t& {
          return registers[static_cast<size_t>(r)];
        };
        systolic::Instruction ldw = systolic::MakeInstruction(systolic::Opcode::kMxuLoadWeights);
        ldw.set(systolic::MxuLoadWeightsField::src, static_cast<uint64_t>((k0 * c.n + n0) * bytes));
        ldw.set(systolic::MxuLoadWeightsField::k, kb);
        ldw.set(systolic::MxuLoadWeightsField::n, nb);
        ldw.set(systolic::MxuLoadWeightsField::dtype, static_cast<uint64_t>(c.dtype));
        ldw.set(systolic::MxuLoadWeightsField::buf, buf);
        reg(systolic::ConfigRegister::kMxuSrcRowStride) = static_cast<uint32_t>(c.n * bytes);
        ExecuteMxu(ldw, config, registers, weights, memories);
        systolic::Instruction mm = systolic::MakeInstruction(systolic::Opcode::kMxuMatmul);
        using F = systolic::MxuMatmulField;
        mm.set(F::src, a_at + static_cast<uint64_t>(k0 * bytes));
        mm.set(F::dst, systolic::kAccumulatorBit | static_cast<uint64_t>(n0 * 4));
        mm.set(F::m, c.m);
        mm.set(F::dtype, static_cast<uint64_t>(c.dtype));
        mm.set(F::buf, buf);
        mm.set(F::acc, k0 > 0);
        mm.set(F::dataflow, static_cast<uint64_t>(c.dataflow));
        reg(systolic::ConfigRegister::kMxuSrcRowStride) = static_cast<uint32_t>(c.k * bytes);
        reg(systolic::ConfigRegister::kMxuDstRowStride) = static_cast<uint32_t>(c.n * 4);
        ExecuteMxu(mm, config, registers, weights, memories);
        cost_cycles += ComputeCost(mm, config, registers, weights).cycles;
        if (c.dataflow == Dataflow::kWs) {
          cost_cycles += ComputeCost(ldw, config, registers, weights).cycles;
        }
        ++instructions;
        buf ^= 1;

        PeGemm block{c.dtype, c.m, kb, nb, {}, {}};
        for (int64_t i = 0; i < c.m; ++i) {
          for (int64_t kk = 0; kk < kb; ++kk) block.a.push_back(a[i * c.k + k0 + kk]);
        }
        for (int64_t kk = 0; kk < kb; ++kk) {
          for (int64_t j = 0; j < nb; ++j) block.w.push_back(w[(k0 + kk) * c.n + n0 + j]);
        }
        const PeRun pe = RunPeReference({c.rows, c.cols, c.dataflow}, block);
        pe_cycles += pe.cycles + pe.weight_load_cycles;
        for (int64_t i = 0; i < c.m; ++i) {
          for (int64_t j = 0; j < nb; ++j) {
            uint32_t& out = expected[i * c.n + n0 + j];
            out = MxuAccumulate(c.dtype, k0 > 0, out, pe.out[i * nb + j]);
          }
        }
      }
    }
    EXPECT_EQ(cost_cycles, pe_cycles);
    std::span<const uint8_t> acc = memories.acc.Read(0, static_cast<uint64_t>(c.m * c.n * 4));
    int mismatches = 0;
    for (int64_t i = 0; i < c.m * c.n; ++i) {
      const uint32_t functional = LoadBits(Dtype::kS32, &acc[i * 4]);
      if (functional == expected[i]) continue;
      if (++mismatches <= 3) {
        ADD_FAILURE() << "element " << i << ": functional 0x" << std::hex << functional
                      << " vs PE model 0x" << expected[i];
      }
    }
  }
  std::printf("[pe_reference] 60 large GEMMs as %d ldw/matmul pairs: cycles and results match\n",
              instructions);
}

}  // namespace
}  // namespace simulator

// The "Adding an instruction" checklist (docs/isa.md), exercised for EVERY row of
// simulator/isa/isa.def. For each instruction the test checks what the checklist requires:
//   step 1  the table row: opcode and mnemonic unique and found by the lookups; what the row
//           gives for free works: Encode/Decode round trip with every field at 0 and at its
//           largest legal value, and the disassembled text assembles back to the same instruction
//   step 2  docs/isa.md: described in "Instructions" and listed in the generated field reference
//   step 3  the data effect: a hand-computed case (Cases() below) runs on the simulator and
//           leaves the values computed by hand in memory
//   step 4  the time: the unit is busy for the cycles docs/isa.md's formulas give
//   step 5  liveness (simulator/sim_liveness.cc): the bytes the instruction writes become live
// A new row without a case in Cases() fails step 6 (tests) with the name of the instruction.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "simulator/memory.h"
#include "simulator/sim_liveness.h"
#include "simulator/simulator.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/assembler.h"
#include "simulator/isa/disassembler.h"
#include "simulator/isa/encoding.h"
#include "simulator/isa/isa.h"
#include "tests/test_support.h"

namespace {

using systolic::InstrInfo;

// A small machine so that the timing formulas give small numbers: R = C = 4, L = 4 lanes,
// 1 GHz, 16 bytes per cycle of DRAM bandwidth, 10 cycles of latency, 16-byte bursts.
const systolic::ArchConfig& Config() {
  static const systolic::ArchConfig config = systolic::LoadArchConfig(
      "tpu-v1", std::vector<std::string>{
                    "array.rows=4", "array.cols=4", "vector.lanes=4", "clock.mhz=1000",
                    "array.dtypes=int8,bf16,f32", "dram.bandwidth_gbps=16",
                    "dram.latency_ns=10", "dram.burst_bytes=16"});
  return config;
}

// Memory written before the run (not counted as live by the liveness plan).
struct Preload {
  std::string where;            // "ub:0x100", "acc:0x0", "dram:0x200"
  std::string dtype;            // f32, s32, s8, pred
  std::vector<double> values;
};

struct Case {
  std::string mnemonic;
  std::vector<Preload> inputs;
  std::string setup;            // instructions before the one under test
  std::string line;             // the instruction under test
  std::string after;            // instructions that make its effect visible (then `halt`)
  Preload expected;             // memory after the run; empty `where` = no data effect
  int64_t cycles;               // busy cycles of the instruction under test (docs/isa.md)
  int64_t ub_live, acc_live;    // live bytes it adds when it completes
};

constexpr double kE = 2.718281828459045;

// Values by hand. Formulas (docs/isa.md, "Semantics and timing"), R = C = L = 4, D = 4, X = 8:
// elementwise ceil(count/L) + D (+ X); reductions rows*ceil(cols/L) + ceil(log2 L) + D;
// vbcast ceil(rows*cols/L) + D; mxu.ldw k; ws mxu.matmul m + R + n - 2 (conv: m = out_h*out_w);
// DMA ceil(bursts*burst/16 B per cycle) + 10 cycles of latency; control 1.
const std::vector<Case>& Cases() {
  const std::vector<double> a = {1, -2, 3, 4}, b = {10, 20, -30, 4};
  static const std::vector<Case> cases = {
      {"nop", {}, "", "nop", "", {}, 1, 0, 0},
      {"halt", {}, "", "halt", "", {}, 1, 0, 0},
      // quant.scale = 2.0f (0x40000000): seen through the vrequant after it.
      {"cfg.set", {{"acc:0x0", "s32", {3, -5, 7, 100}}}, "",
       "cfg.set reg=quant.scale, value=0x40000000",
       "vrequant dst=ub:0x0, src=acc:0x0, count=4, src_type=s32, dst_type=s8",
       {"ub:0x0", "s8", {6, -10, 14, 127}}, 1, 0, 0},
      // load.dram_offset = 2 (from ub:0x0) x load.offset_scale 4: the load after it reads
      // from 0x48.
      {"cfg.load", {{"dram:0x40", "f32", {1, 2, 3, 4, 5, 6}}, {"ub:0x0", "s32", {2}}},
       "cfg.set reg=load.offset_scale, value=4", "cfg.load reg=load.dram_offset, src=ub:0x0",
       "dma.load dram=0x40, local=ub:0x100, row_bytes=16, rows=1, planes=1",
       {"ub:0x100", "f32", {3, 4, 5, 6}}, 1, 0, 0},
      {"sem.signal", {}, "", "sem.signal unit=vector, sem=0, count=1", "", {}, 1, 0, 0},
      {"sem.wait", {}, "sem.signal unit=load, sem=3, count=2",
       "sem.wait unit=vector, sem=3, count=2", "", {}, 1, 0, 0},
      // The flag itself (SimStats::test_flag) is checked by SimulatorCtrlTest; here the time:
      // one DRAM access, 10 cycles of latency + 1.
      {"ctrl.test", {{"dram:0x40", "pred", {1}}}, "", "ctrl.test src=0x40", "", {}, 10 + 1, 0, 0},
      {"ctrl.index", {{"dram:0x40", "s32", {7}}}, "", "ctrl.index src=0x40, count=3", "", {},
       10 + 1, 0, 0},
      {"dma.load", {{"dram:0x40", "f32", {1, 2, 3, 4}}}, "",
       "dma.load dram=0x40, local=ub:0x100, row_bytes=16, rows=1, planes=1", "",
       {"ub:0x100", "f32", {1, 2, 3, 4}}, 1 + 10, 16, 0},
      {"dma.store", {{"ub:0x0", "f32", {1, 2, 3, 4, 5}}}, "",
       "dma.store local=ub:0x0, dram=0x200, row_bytes=20, rows=1, planes=1", "",
       {"dram:0x200", "f32", {1, 2, 3, 4, 5}}, 2 + 10, 0, 0},
      // Rows 3 and 1 of a 4 x 2 f32 table: two 8-byte rows, a 16-byte burst each (2 cycles).
      {"dma.gather", {{"dram:0x40", "f32", {1, 2, 3, 4, 5, 6, 7, 8}}, {"ub:0x200", "s32", {3, 1}}},
       "cfg.set reg=load.index_bound, value=4",
       "dma.gather dram=0x40, local=ub:0x100, index=ub:0x200, row_bytes=8, rows=2", "",
       {"ub:0x100", "f32", {7, 8, 3, 4}}, 2 + 10, 16, 0},
      // Three 8-byte rows added (store.scatter_add = 1 + f32's index 5) into rows 2, 9 and 0 of
      // a 4-row table: row 9 is past store.index_bound and skipped; the two others are read
      // and written back, 4 bursts of 16 bytes (4 cycles).
      {"dma.scatter",
       {{"dram:0x40", "f32", {1, 2, 3, 4, 5, 6, 7, 8}},
        {"ub:0x0", "f32", {10, 20, 30, 40, 50, 60}},
        {"ub:0x200", "s32", {2, 9, 0}}},
       "cfg.set reg=store.index_bound, value=4\ncfg.set reg=store.scatter_add, value=6",
       "dma.scatter local=ub:0x0, dram=0x40, index=ub:0x200, row_bytes=8, rows=3", "",
       {"dram:0x40", "f32", {51, 62, 3, 4, 15, 26, 7, 8}}, 4 + 10, 0, 0},
      // W = [[5,6],[7,8]] loaded, seen through a matmul with A = I: C = W.
      {"mxu.ldw", {{"ub:0x0", "f32", {5, 6, 7, 8}}, {"ub:0x100", "f32", {1, 0, 0, 1}}},
       "", "mxu.ldw src=ub:0x0, k=2, n=2, dtype=f32, buf=1",
       "mxu.matmul src=ub:0x100, dst=acc:0x0, m=2, dtype=f32, buf=1, acc=0, dataflow=ws",
       {"acc:0x0", "f32", {5, 6, 7, 8}}, 2, 0, 0},
      // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]].
      {"mxu.matmul", {{"ub:0x0", "f32", {5, 6, 7, 8}}, {"ub:0x100", "f32", {1, 2, 3, 4}}},
       "mxu.ldw src=ub:0x0, k=2, n=2, dtype=f32, buf=0",
       "mxu.matmul src=ub:0x100, dst=acc:0x0, m=2, dtype=f32, buf=0, acc=0, dataflow=ws", "",
       {"acc:0x0", "f32", {19, 22, 43, 50}}, 2 + 4 + 2 - 2, 0, 16},
      // 3x3 input 1..9, 2x2 kernel [[1,0],[0,1]]: out[i][j] = x[i][j] + x[i+1][j+1].
      {"mxu.conv",
       {{"ub:0x0", "f32", {1, 0, 0, 1}}, {"ub:0x100", "f32", {1, 2, 3, 4, 5, 6, 7, 8, 9}}},
       "mxu.ldw src=ub:0x0, k=4, n=1, dtype=f32, buf=0",
       "mxu.conv src=ub:0x100, dst=acc:0x0, in_h=3, in_w=3, kh=2, kw=2, stride=1, dtype=f32, "
       "buf=0, acc=0, dataflow=ws", "",
       {"acc:0x0", "f32", {6, 8, 12, 14}}, 4 + 4 + 1 - 2, 0, 16},
      {"vadd", {{"ub:0x0", "f32", a}, {"ub:0x100", "f32", b}}, "",
       "vadd dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=f32", "",
       {"ub:0x200", "f32", {11, 18, -27, 8}}, 1 + 4, 16, 0},
      {"vsub", {{"ub:0x0", "f32", a}, {"ub:0x100", "f32", b}}, "",
       "vsub dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=f32", "",
       {"ub:0x200", "f32", {-9, -22, 33, 0}}, 1 + 4, 16, 0},
      {"vmul", {{"ub:0x0", "f32", a}, {"ub:0x100", "f32", b}}, "",
       "vmul dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=f32", "",
       {"ub:0x200", "f32", {10, -40, -90, 16}}, 1 + 4, 16, 0},
      {"vmax", {{"ub:0x0", "s32", a}, {"ub:0x100", "s32", b}}, "",
       "vmax dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {10, 20, 3, 4}}, 1 + 4, 16, 0},
      {"vmin", {{"ub:0x0", "s32", a}, {"ub:0x100", "s32", b}}, "",
       "vmin dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {1, -2, -30, 4}}, 1 + 4, 16, 0},
      // Shift amounts at and beyond the width: everything shifted out (vshra: the sign fill).
      {"vshl", {{"ub:0x0", "s32", a}, {"ub:0x100", "s32", {1, 31, 32, 0}}}, "",
       "vshl dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {2, 0, 0, 4}}, 1 + 4, 16, 0},
      {"vshra", {{"ub:0x0", "s32", {-8, -1, 64, 5}}, {"ub:0x100", "s32", {1, 40, 3, 0}}}, "",
       "vshra dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {-4, -1, 8, 5}}, 1 + 4, 16, 0},
      {"vshrl", {{"ub:0x0", "s32", {-8, -1, 64, 5}}, {"ub:0x100", "s32", {28, 32, 3, 1}}}, "",
       "vshrl dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {15, 0, 8, 2}}, 1 + 4, 16, 0},
      {"vand", {{"ub:0x0", "s32", {12, -1, 5, 0}}, {"ub:0x100", "s32", {10, 7, 3, -1}}}, "",
       "vand dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {8, 7, 1, 0}}, 1 + 4, 16, 0},
      {"vor", {{"ub:0x0", "s32", {12, -1, 5, 0}}, {"ub:0x100", "s32", {10, 7, 3, -1}}}, "",
       "vor dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {14, -1, 7, -1}}, 1 + 4, 16, 0},
      {"vxor", {{"ub:0x0", "s32", {12, -1, 5, 0}}, {"ub:0x100", "s32", {10, 7, 3, -1}}}, "",
       "vxor dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {6, -8, 6, -1}}, 1 + 4, 16, 0},
      // Truncating division as HLO defines it: 7 / 2, -7 / 2, 5 / 0 (all ones), 3 / -1; the
      // divider's stages add X = 8 cycles.
      {"vdiv", {{"ub:0x0", "s32", {7, -7, 5, 3}}, {"ub:0x100", "s32", {2, 2, 0, -1}}}, "",
       "vdiv dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {3, -3, -1, -3}}, 1 + 4 + 8, 16, 0},
      {"vrem", {{"ub:0x0", "s32", {7, -7, 5, 3}}, {"ub:0x100", "s32", {2, 2, 0, -1}}}, "",
       "vrem dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=s32", "",
       {"ub:0x200", "s32", {1, -1, 5, 0}}, 1 + 4 + 8, 16, 0},
      {"vcmp", {{"ub:0x0", "f32", a}, {"ub:0x100", "f32", b}}, "",
       "vcmp dst=ub:0x200, a=ub:0x0, b=ub:0x100, count=4, dtype=f32, cmp=lt", "",
       {"ub:0x200", "pred", {1, 1, 0, 0}}, 1 + 4, 4, 0},
      // dst starts as 9s; mask picks src where set.
      {"vsel",
       {{"ub:0x0", "pred", {1, 0, 1, 0}},
        {"ub:0x100", "f32", a},
        {"ub:0x200", "f32", {9, 9, 9, 9}}},
       "", "vsel dst=ub:0x200, mask=ub:0x0, src=ub:0x100, count=4, dtype=f32", "",
       {"ub:0x200", "f32", {1, 9, 3, 9}}, 1 + 4, 16, 0},
      {"vmov", {{"acc:0x0", "f32", a}}, "", "vmov dst=ub:0x0, src=acc:0x0, count=4, dtype=f32", "",
       {"ub:0x0", "f32", a}, 1 + 4, 16, 0},
      {"vexp", {{"ub:0x0", "f32", {0, 1, -1, 2}}}, "",
       "vexp dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {1, kE, 1 / kE, kE * kE}}, 1 + 4 + 8, 16, 0},
      {"vrecip", {{"ub:0x0", "f32", {1, 2, 4, -0.5}}}, "",
       "vrecip dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {1, 0.5, 0.25, -2}}, 1 + 4 + 8, 16, 0},
      {"vrsqrt", {{"ub:0x0", "f32", {1, 4, 16, 0.25}}}, "",
       "vrsqrt dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {1, 0.5, 0.25, 2}}, 1 + 4 + 8, 16, 0},
      {"vtanh", {{"ub:0x0", "f32", {0, 1, -1, 20}}}, "",
       "vtanh dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {0, 0.7615941559557649, -0.7615941559557649, 1}}, 1 + 4 + 8, 16, 0},
      {"vsin", {{"ub:0x0", "f32", {0, 1.5707963267948966, -0.5, 3}}}, "",
       "vsin dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {0, 1, -0.479425538604203, 0.1411200080598672}}, 1 + 4 + 8, 16, 0},
      {"vcos", {{"ub:0x0", "f32", {0, 3.141592653589793, 1, -2}}}, "",
       "vcos dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {1, -1, 0.5403023058681398, -0.4161468365471424}}, 1 + 4 + 8, 16, 0},
      {"vlog", {{"ub:0x0", "f32", {1, kE, 0.5, 100}}}, "",
       "vlog dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {0, 1, -0.6931471805599453, 4.605170185988092}}, 1 + 4 + 8, 16, 0},
      {"vlog1p", {{"ub:0x0", "f32", {0, 1e-8, 1, -0.5}}}, "",
       "vlog1p dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {0, 1e-8, 0.6931471805599453, -0.6931471805599453}}, 1 + 4 + 8, 16,
       0},
      {"vexpm1", {{"ub:0x0", "f32", {0, 1e-8, 1, -1}}}, "",
       "vexpm1 dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {0, 1e-8, kE - 1, 1 / kE - 1}}, 1 + 4 + 8, 16, 0},
      {"vlogistic", {{"ub:0x0", "f32", {0, 2, -2, -200}}}, "",
       "vlogistic dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {0.5, 0.8807970779778823, 0.11920292202211755, 0}}, 1 + 4 + 8, 16,
       0},
      {"verf", {{"ub:0x0", "f32", {0, 0.5, -1, 4}}}, "",
       "verf dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {0, 0.5204998778130465, -0.8427007929497149, 0.9999999845827421}},
       1 + 4 + 8, 16, 0},
      // Exact: no transcendental stages.
      {"vfloor", {{"ub:0x0", "f32", {1.5, -1.5, 2, -0.25}}}, "",
       "vfloor dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {1, -2, 2, -1}}, 1 + 4, 16, 0},
      {"vceil", {{"ub:0x0", "f32", {1.5, -1.5, 2, -0.25}}}, "",
       "vceil dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {2, -1, 2, -0.0}}, 1 + 4, 16, 0},
      {"vround", {{"ub:0x0", "f32", {1.5, -1.5, 2.5, -0.25}}}, "",
       "vround dst=ub:0x100, src=ub:0x0, count=4, dtype=f32", "",
       {"ub:0x100", "f32", {2, -2, 3, -0.0}}, 1 + 4, 16, 0},
      // iota.inner = 1, iota.modulus = 3 (cfg.set in the setup): indices 4..7 -> 1, 2, 0, 1.
      {"viota", {}, "cfg.set reg=iota.inner, value=1\ncfg.set reg=iota.modulus, value=3",
       "viota dst=ub:0x100, count=4, dtype=s32, start=4", "",
       {"ub:0x100", "s32", {1, 2, 0, 1}}, 1 + 4, 16, 0},
      // 0x3fc00000 is 1.5f; count 6 takes two lane groups.
      {"vfill", {}, "", "vfill dst=ub:0x0, count=6, dtype=f32, value=0x3fc00000", "",
       {"ub:0x0", "f32", {1.5, 1.5, 1.5, 1.5, 1.5, 1.5}}, 2 + 4, 24, 0},
      // Round half to even, saturate.
      {"vcvt", {{"ub:0x0", "f32", {1.5, 2.5, -1.5, 1e10}}}, "",
       "vcvt dst=ub:0x100, src=ub:0x0, count=4, src_type=f32, dst_type=s32", "",
       {"ub:0x100", "s32", {2, 2, -2, 2147483647}}, 1 + 4, 16, 0},
      // scale 0 (registers reset to 0): saturate(round(0 * x) + 0) = 0.
      {"vrequant", {{"acc:0x0", "s32", {3, -5, 7, 100}}}, "",
       "vrequant dst=ub:0x0, src=acc:0x0, count=4, src_type=s32, dst_type=s8", "",
       {"ub:0x0", "s8", {0, 0, 0, 0}}, 1 + 4, 4, 0},
      {"vredsum", {{"ub:0x0", "f32", {1, 2, 3, 4, 5, 6, 7, 8}}}, "",
       "vredsum dst=ub:0x100, src=ub:0x0, rows=2, cols=4, dtype=f32", "",
       {"ub:0x100", "f32", {10, 26}}, 2 * 1 + 2 + 4, 8, 0},
      {"vredmax", {{"ub:0x0", "f32", {1, 7, 3, 4, 5, 6, -7, 2}}}, "",
       "vredmax dst=ub:0x100, src=ub:0x0, rows=2, cols=4, dtype=f32", "",
       {"ub:0x100", "f32", {7, 6}}, 2 * 1 + 2 + 4, 8, 0},
      // [[1,2,3],[4,5,6]] transposed: [[1,4],[2,5],[3,6]]; 6 elements, ceil(6/4) + 4 cycles.
      {"vtrans", {{"ub:0x0", "f32", {1, 2, 3, 4, 5, 6}}}, "",
       "vtrans dst=ub:0x100, src=ub:0x0, rows=2, cols=3, dtype=f32", "",
       {"ub:0x100", "f32", {1, 4, 2, 5, 3, 6}}, 2 + 4, 24, 0},
      // The first stage of a 4-element bitonic sort (k = 1, j = 0): the pair (3, 1) ascending
      // becomes (1, 3), the pair (4, 2) descending stays; ceil(4/4) + 4 cycles.
      {"vbitonic", {{"ub:0x0", "f32", {3, 1, 4, 2}}}, "",
       "vbitonic keys=ub:0x0, payload=ub:0x0, count=4, k=1, j=0, dtype=f32, descending=0, "
       "has_payload=0", "",
       {"ub:0x0", "f32", {1, 3, 4, 2}}, 1 + 4, 16, 0},
      {"vbcast", {{"ub:0x0", "f32", {7, 9}}}, "",
       "vbcast dst=ub:0x100, src=ub:0x0, rows=2, cols=4, dtype=f32, per_row=1", "",
       {"ub:0x100", "f32", {7, 7, 7, 7, 9, 9, 9, 9}}, 2 + 4, 32, 0},
  };
  return cases;
}

const Case* FindCase(std::string_view mnemonic) {
  for (const Case& c : Cases()) {
    if (c.mnemonic == mnemonic) return &c;
  }
  return nullptr;
}

int Bytes(const std::string& dtype) { return dtype == "f32" || dtype == "s32" ? 4 : 1; }

std::vector<uint8_t> Encode(const Preload& p) {
  std::vector<uint8_t> out;
  for (double v : p.values) {
    uint8_t bytes[4] = {};
    if (p.dtype == "f32") {
      float f = static_cast<float>(v);
      std::memcpy(bytes, &f, 4);
    } else if (p.dtype == "s32") {
      int32_t i = static_cast<int32_t>(v);
      std::memcpy(bytes, &i, 4);
    } else {
      bytes[0] = static_cast<uint8_t>(static_cast<int8_t>(v));
    }
    out.insert(out.end(), bytes, bytes + Bytes(p.dtype));
  }
  return out;
}

double Decode(const uint8_t* bytes, const std::string& dtype) {
  if (dtype == "f32") { float f; std::memcpy(&f, bytes, 4); return f; }
  if (dtype == "s32") { int32_t i; std::memcpy(&i, bytes, 4); return i; }
  if (dtype == "s8") return static_cast<int8_t>(bytes[0]);
  return bytes[0];
}

// "ub:0x100" -> (memory, offset); dram addresses are "dram:0x..".
std::pair<std::string, uint64_t> Where(const std::string& where) {
  const size_t colon = where.find(':');
  return {where.substr(0, colon), std::stoull(where.substr(colon + 1), nullptr, 0)};
}

void Write(simulator::Memories& memories, const Preload& p) {
  const std::vector<uint8_t> bytes = Encode(p);
  auto [memory, offset] = Where(p.where);
  if (memory == "dram") {
    memories.dram.Write(offset, bytes);
  } else {
    simulator::LocalMemory& local = memory == "ub" ? memories.ub : memories.acc;
    std::span<uint8_t> out = local.Write(offset, bytes.size());
    std::copy(bytes.begin(), bytes.end(), out.begin());
  }
}

std::vector<double> Read(const simulator::Memories& memories, const Preload& p) {
  const size_t length = p.values.size() * static_cast<size_t>(Bytes(p.dtype));
  std::vector<uint8_t> bytes(length);
  auto [memory, offset] = Where(p.where);
  if (memory == "dram") {
    memories.dram.Read(offset, bytes);
  } else {
    const simulator::LocalMemory& local = memory == "ub" ? memories.ub : memories.acc;
    std::span<const uint8_t> in = local.Read(offset, length);
    std::copy(in.begin(), in.end(), bytes.begin());
  }
  std::vector<double> out;
  for (size_t i = 0; i < length; i += static_cast<size_t>(Bytes(p.dtype))) {
    out.push_back(Decode(&bytes[i], p.dtype));
  }
  return out;
}

// Records the busy interval of every instruction.
class BusyRecorder : public simulator::TraceSink {
 public:
  std::map<size_t, std::pair<int64_t, std::string>> busy;  // index -> (cycles, mnemonic)
  void Busy(systolic::Unit, int64_t start, int64_t end, size_t index,
            std::string_view mnemonic) override {
    busy[index] = {end - start, std::string(mnemonic)};
  }
  void Stall(systolic::Unit, int64_t, int64_t, std::string_view) override {}
  void Counter(std::string_view, int64_t, double) override {}
  void Finish(int64_t) override {}
};

std::string Step(int step, const std::string& what) {
  return "docs/isa.md \"Adding an instruction\" step " + std::to_string(step) + " (" + what + ")";
}

TEST(TourAddAnInstruction, Step1_TableRowsAreUniqueAndFound) {
  std::set<int> opcodes;
  std::set<std::string_view> mnemonics;
  for (const InstrInfo& info : systolic::AllInstructions()) {
    SCOPED_TRACE(std::string(info.mnemonic));
    EXPECT_TRUE(opcodes.insert(static_cast<int>(info.opcode)).second) << Step(1, "isa.def");
    EXPECT_TRUE(mnemonics.insert(info.mnemonic).second) << Step(1, "isa.def");
    EXPECT_EQ(systolic::FindMnemonic(info.mnemonic), &info) << Step(1, "isa.def");
    EXPECT_EQ(systolic::FindInstruction(static_cast<uint8_t>(info.opcode)), &info);
    EXPECT_LE(info.used_bits(), systolic::kWordBits) << Step(1, "isa.def: at most 128 bits");
  }
}

TEST(TourAddAnInstruction, Step2_DescribedInIsaMd) {
  const std::string doc =
      testing_support::ReadFile(std::string(RETARGET_SOURCE_DIR) + "/docs/isa.md");
  const size_t begin = doc.find("\n## Instructions");
  const size_t end = doc.find("\n## Semantics and timing");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string instructions = doc.substr(begin, end - begin);
  for (const InstrInfo& info : systolic::AllInstructions()) {
    std::string name = "`";
    name += info.mnemonic;
    EXPECT_NE(instructions.find(name), std::string::npos)
        << Step(2, "describe it in docs/isa.md \"Instructions\"") << ": " << info.mnemonic;
    char heading[64];
    std::snprintf(heading, sizeof heading, "#### `%s` — opcode 0x%02X", info.mnemonic.data(),
                  static_cast<unsigned>(info.opcode));
    EXPECT_NE(doc.find(heading), std::string::npos)
        << Step(2, "regenerate the field reference with SYSTOLIC_BLESS=1") << ": " << heading;
  }
}

// Every field at its largest legal value: the last symbol of enum-like kinds, 1 for flags, a
// UB address for local addresses, all ones for numbers.
uint64_t LargestLegal(const systolic::FieldInfo& field) {
  std::span<const systolic::SymbolInfo> symbols = systolic::SymbolsOf(field.kind);
  if (field.kind == systolic::FieldKind::kRegister) return 11;  // quant.zero_point
  if (!symbols.empty()) return symbols.size() - 1;
  return field.max_value();
}

TEST(TourAddAnInstruction, Step1_EncodingAndAssemblerRoundTrip) {
  for (const InstrInfo& info : systolic::AllInstructions()) {
    SCOPED_TRACE(std::string(info.mnemonic));
    for (bool largest : {false, true}) {
      systolic::Instruction inst = systolic::MakeInstruction(info.opcode);
      for (size_t f = 0; f < info.fields.size(); ++f) {
        if (largest) inst.fields[f] = LargestLegal(info.fields[f]);
      }
      try {
        EXPECT_EQ(systolic::Decode(systolic::Encode(inst)), inst) << Step(1, "the row: encoding");
        const std::string text = systolic::FormatInstruction(inst);
        EXPECT_EQ(text.rfind(std::string(info.mnemonic) + (info.fields.empty() ? "" : " "), 0), 0u)
            << Step(1, "the row: the disassembler prints the mnemonic") << ": " << text;
        systolic::Program back = systolic::Assemble(text + "\n", "roundtrip.sasm");
        ASSERT_EQ(back.instructions.size(), 1u) << Step(1, "the row: assembler") << ": " << text;
        EXPECT_EQ(back.instructions[0], inst) << Step(1, "the row: assembler") << ": " << text;
      } catch (const hlo::Error& e) {
        ADD_FAILURE() << Step(1, "the row: encoding / assembler") << ": " << e.what();
      }
    }
  }
}

TEST(TourAddAnInstruction, Steps3To6_SemanticsTimingLivenessAndACase) {
  for (const InstrInfo& info : systolic::AllInstructions()) {
    SCOPED_TRACE(std::string(info.mnemonic));
    const Case* c = FindCase(info.mnemonic);
    if (!c) {
      ADD_FAILURE() << Step(6, "tests") << ": no hand-computed case for '"
                    << info.mnemonic << "'; add one to Cases() in " << __FILE__;
      continue;
    }
    const std::string text =
        c->setup + "\n" + c->line + "\n" + c->after + (c->line == "halt" ? "\n" : "\nhalt\n");
    try {
      systolic::Program program = systolic::Assemble(text, std::string(info.mnemonic) + ".sasm");
      const size_t index = systolic::Assemble(c->setup + "\n", "setup.sasm").instructions.size();
      simulator::Memories memories(Config());
      for (const Preload& p : c->inputs) Write(memories, p);
      BusyRecorder trace;
      simulator::SimOptions options;
      options.trace = &trace;
      simulator::Simulate(program, Config(), memories, options);

      if (!c->expected.where.empty()) {
        std::vector<double> got = Read(memories, c->expected);
        ASSERT_EQ(got.size(), c->expected.values.size());
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_NEAR(got[i], c->expected.values[i], 1e-6 * std::abs(c->expected.values[i]))
              << Step(3, "the data effect, simulator/functional*.cc") << ": element " << i;
        }
      }
      auto busy = trace.busy.find(index);
      ASSERT_NE(busy, trace.busy.end()) << Step(4, "the time: the simulator's dispatch");
      EXPECT_EQ(busy->second.second, info.mnemonic)
          << Step(4, "the time: the trace names the instruction");
      EXPECT_EQ(busy->second.first, c->cycles)
          << Step(4, "the time, simulator/unit_timing.cc and docs/isa.md's formula");

      simulator::LivenessPlan plan = simulator::PlanLiveness(program, Config());
      ASSERT_TRUE(plan.tracked);
      const std::string liveness = Step(5, "liveness, simulator/sim_liveness.cc");
      EXPECT_EQ(plan.at_completion[index].ub, c->ub_live) << liveness << ": UB bytes";
      EXPECT_EQ(plan.at_completion[index].acc, c->acc_live) << liveness << ": accumulator bytes";
    } catch (const hlo::Error& e) {
      ADD_FAILURE() << Step(3, "the data effect: the case must run") << ": " << e.what() << "\n"
                    << text;
    }
  }
}

}  // namespace

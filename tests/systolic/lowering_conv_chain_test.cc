// Convolution chains whose activations stay in the unified buffer (segment_builder.h): each
// convolution's requantized result is written into the next convolution's padded input
// layout, zero halo included, and read there. Checked against the reference interpreter
// (exact: int8 sums in s32) and by the DRAM bytes written, computed by hand from the shapes.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hlo/evaluator.h"
#include "targets/systolic/systolic_backend.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace {

// s32[2,H,W,C] -> s8 with scale 1/256, round to nearest even, clamp to [-128, 127].
std::string Requant(const std::string& name, const std::string& dims) {
  return name + " {\n  p = s32[" + dims + "] parameter(0)\n  f = f32[" + dims +
         "] convert(p)\n  s = f32[] constant(0.00390625)\n  b = f32[" + dims +
         "] broadcast(s), dimensions={}\n  m = f32[" + dims + "] multiply(f, b)\n  r = f32[" +
         dims + "] round-nearest-even(m)\n  lo = f32[] constant(-128)\n" +
         "  hi = f32[] constant(127)\n  c = f32[" + dims +
         "] clamp(lo, r, hi)\n  ROOT q = s8[" + dims + "] convert(c)\n}\n";
}

// Three 3x3 convolutions: SAME (pad 1), SAME, then VALID (pad 0), so the second on-chip
// layout differs from the first (another halo); `c` output channels in the first two.
std::string ThreeConvs(int c) {
  const std::string mid = "2,6,6," + std::to_string(c);
  const std::string cs = std::to_string(c);
  return "HloModule chain\n" + Requant("rq1", mid) + Requant("rq2", mid) +
         Requant("rq3", "2,4,4,8") + "ENTRY main {\n  x = s8[2,6,6,8] parameter(0)\n"
         "  k1 = s8[3,3,8," + cs + "] parameter(1)\n  k2 = s8[3,3," + cs + "," + cs +
         "] parameter(2)\n  k3 = s8[3,3," + cs + ",8] parameter(3)\n"
         "  c1 = s32[" + mid + "] convolution(x, k1), window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=b01f_01io->b01f\n  q1 = s8[" + mid + "] fusion(c1), kind=kLoop, calls=rq1\n"
         "  c2 = s32[" + mid + "] convolution(q1, k2), window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=b01f_01io->b01f\n  q2 = s8[" + mid + "] fusion(c2), kind=kLoop, calls=rq2\n"
         "  c3 = s32[2,4,4,8] convolution(q2, k3), window={size=3x3}, "
         "dim_labels=b01f_01io->b01f\n"
         "  ROOT q3 = s8[2,4,4,8] fusion(c3), kind=kLoop, calls=rq3\n}\n";
}

struct Outcome {
  io::CompareResult compare;
  std::map<std::string, double> counters;
  std::string sasm;
};

// The `m=` of every mxu.matmul in the program, in program order.
std::vector<int> MatmulRows(const std::string& sasm) {
  std::vector<int> rows;
  for (size_t at = sasm.find("mxu.matmul "); at != std::string::npos;
       at = sasm.find("mxu.matmul ", at + 1)) {
    size_t m = sasm.find(" m=", at);
    rows.push_back(std::stoi(sasm.substr(m + 3)));
  }
  return rows;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Compiles `text` for tpu-v1 with `settings`, runs it on `inputs` and compares with the
// reference interpreter.
Outcome RunWith(const std::string& text, const std::vector<std::string>& settings,
                const std::function<std::vector<hlo::Literal>(const hlo::Module&)>& inputs_for) {
  auto module = testing_support::ParseAndVerify(text);
  systolic::ArchConfig config = systolic::LoadArchConfig("tpu-v1", settings);
  std::vector<hlo::Literal> inputs = inputs_for(*module);
  auto backend =
      targets::MakeSystolicBackend(config, testing_support::Backends().Find("interp"));
  auto executable = backend->Compile(*module);
  hlo::Literal result = executable->Run(inputs);
  hlo::Literal expected = hlo::Evaluate(*module, inputs);
  std::map<std::string, std::string> artifacts = executable->artifacts();
  return Outcome{
      io::CompareArrays(io::FlattenOutputs(expected), io::FlattenOutputs(result), nullptr),
      executable->profile().counters, artifacts["program.sasm"]};
}

Outcome RunOn8x8(const std::string& text) {
  return RunWith(text, {"array.rows=8", "array.cols=8"},
                 [](const hlo::Module& module) { return io::MakeRandomInputs(module, 11); });
}

std::string SmallImageChain(int batch);

// Signed inputs (io::MakeRandomInputs draws non-negative s8 values, which would never exercise
// a ReLU): every byte of every parameter from a fixed linear congruential sequence.
std::vector<hlo::Literal> SignedInputs(const hlo::Module& module) {
  std::vector<hlo::Literal> inputs;
  uint32_t state = 12345;
  for (const hlo::Instruction* param : module.entry()->parameters()) {
    hlo::Literal literal(param->shape());
    for (uint8_t& byte : literal.mutable_bytes()) {
      state = state * 1103515245u + 12345u;
      byte = static_cast<uint8_t>(state >> 16);
    }
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

Outcome RunChain(const std::string& text, const std::vector<std::string>& settings) {
  return RunWith(text, settings, SignedInputs);
}

// The requantize idiom clamping at 0 (a ReLU) or at -128 (none), scale 1/64.
std::string Requant8(const std::string& name, const std::string& dims, bool relu) {
  return name + " {\n  p = s32[" + dims + "] parameter(0)\n  f = f32[" + dims +
         "] convert(p)\n  s = f32[] constant(0.015625)\n  b = f32[" + dims +
         "] broadcast(s), dimensions={}\n  m = f32[" + dims + "] multiply(f, b)\n  r = f32[" +
         dims + "] round-nearest-even(m)\n  lo = f32[] constant(" + (relu ? "0" : "-128") +
         ")\n  hi = f32[] constant(127)\n  c = f32[" + dims +
         "] clamp(lo, r, hi)\n  ROOT q = s8[" + dims + "] convert(c)\n}\n";
}

// Four layers on 3 images of 6 x 6: 3x3 SAME 8 -> 8 (ReLU), 3x3 SAME 8 -> 4 (no ReLU), 5x5
// SAME (pad 2) 4 -> 8 (ReLU), 3x3 VALID 8 -> 8. Layer 2's input layout (pad 2, 4 channels)
// differs from layer 0's, which held the same region, so its halo is zeroed again on chip.
std::string FourLayerChain() {
  return "HloModule four\n" + Requant8("r1", "3,6,6,8", true) + Requant8("r2", "3,6,6,4", false) +
         Requant8("r3", "3,6,6,8", true) + Requant8("r4", "3,4,4,8", false) +
         "ENTRY main {\n  x = s8[3,6,6,8] parameter(0)\n  k1 = s8[3,3,8,8] parameter(1)\n"
         "  k2 = s8[3,3,8,4] parameter(2)\n  k3 = s8[5,5,4,8] parameter(3)\n"
         "  k4 = s8[3,3,8,8] parameter(4)\n"
         "  c1 = s32[3,6,6,8] convolution(x, k1), window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=b01f_01io->b01f\n  q1 = s8[3,6,6,8] fusion(c1), kind=kLoop, calls=r1\n"
         "  c2 = s32[3,6,6,4] convolution(q1, k2), window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=b01f_01io->b01f\n  q2 = s8[3,6,6,4] fusion(c2), kind=kLoop, calls=r2\n"
         "  c3 = s32[3,6,6,8] convolution(q2, k3), window={size=5x5 pad=2_2x2_2}, "
         "dim_labels=b01f_01io->b01f\n  q3 = s8[3,6,6,8] fusion(c3), kind=kLoop, calls=r3\n"
         "  c4 = s32[3,4,4,8] convolution(q3, k4), window={size=3x3}, "
         "dim_labels=b01f_01io->b01f\n"
         "  ROOT q4 = s8[3,4,4,8] fusion(c4), kind=kLoop, calls=r4\n}\n";
}

TEST(SystolicConvChain, LayersOfDifferentShapesWithReluMatchOnSignedInputs) {
  Outcome outcome = RunChain(FourLayerChain(), {"array.rows=8", "array.cols=8"});
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.sasm.rfind("# segment 0: c1+q1,c2+q2,c3+q3,c4+q4\n", 0), 0u)
      << outcome.sasm;
  // ReLU is vrequant's quant.relu, never a vmax; the only vfill zeroes layer 2's input
  // images (3 images of 10 x 10 pixels x 4 channels, one vfill each).
  EXPECT_EQ(Count(outcome.sasm, "vmax "), 0u);
  EXPECT_NE(outcome.sasm.find("cfg.set reg=quant.relu, value=1"), std::string::npos);
  EXPECT_EQ(Count(outcome.sasm, "vfill "), 3u);
  EXPECT_EQ(Count(outcome.sasm, "count=400, dtype=s8, value=0"), 3u);
  // Only q4 reaches DRAM; x and the kernels are read once, plus zeros for layer 0's padding
  // and layer 1's halo (per image 2 rows of 8 pixels + 2 columns of 8 rows, 8 channels each).
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 3 * 4 * 4 * 8);
  EXPECT_EQ(outcome.counters["dram_bytes_read"],
            3 * 6 * 6 * 8 + (9 * 8 * 8 + 9 * 8 * 4 + 25 * 4 * 8 + 9 * 8 * 8) +
                2 * 3 * (2 * 8 + 2 * 8) * 8);
  // Each weight tile serves all 3 images: per layer kh x ceil(kw x cin / 8) tiles.
  EXPECT_EQ(Count(outcome.sasm, "mxu.ldw "), 3u * 3 + 3u * 3 + 5u * 3 + 3u * 3);
}

TEST(SystolicConvChain, BatchBeyondTheAccumulatorsIsLoweredLayerByLayer) {
  // A slot per image: 2 x 2 output rows x 8 columns x 4 bytes = 128 bytes, 2 KiB for 16
  // images. With 1 KiB of accumulators the chain does not fit, and the layers run one by one
  // (still on chip between them).
  const std::string text = SmallImageChain(16);
  Outcome fits = RunChain(text, {"array.rows=8", "array.cols=8"});
  ASSERT_TRUE(fits.compare.matched) << fits.compare.summary;
  EXPECT_EQ(fits.sasm.rfind("# segment 0: c1+q1,c2+q2\n", 0), 0u) << fits.sasm;
  Outcome apart = RunChain(text, {"array.rows=8", "array.cols=8", "acc.bytes=1024"});
  ASSERT_TRUE(apart.compare.matched) << apart.compare.summary;
  EXPECT_EQ(apart.sasm.rfind("# segment 0: c1+q1 c2+q2\n", 0), 0u) << apart.sasm;
  EXPECT_EQ(apart.counters["dram_bytes_written"], 16 * 2 * 2 * 8);
}

TEST(SystolicConvChain, ActivationsStayOnChipInPaddedLayouts) {
  Outcome outcome = RunOn8x8(ThreeConvs(8));
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  // One op: the third layer's input layout (VALID: no halo) differs from the first's.
  EXPECT_EQ(outcome.sasm.rfind("# segment 0: c1+q1,c2+q2,c3+q3\n", 0), 0u) << outcome.sasm;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["native_instructions"], 6);  // 3 x (convolution + requantize)
  // Only q3 reaches DRAM: 2 x 4 x 4 x 8 s8. q1 and q2 (2 x 6 x 6 x 8 bytes each) do not.
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 2 * 4 * 4 * 8);
  // Read: x and the three kernels (576 bytes each) once, and zeros for two padded layouts:
  // c1's input bands and the halo of c2's on-chip input, each per image a top and a bottom
  // row of 8 pixels and a left and a right column of 8 rows (4 x 64 bytes). No activation is
  // read back.
  EXPECT_EQ(outcome.counters["dram_bytes_read"], 4 * 576 + 2 * (2 * 4 * 64));
}

TEST(SystolicConvChain, WiderThanTheArrayGoesThroughDramAndMatches) {
  // 16 output channels on an 8-wide array: two column tiles, so a tile row is not a whole
  // pixel and the results of c1 and c2 are stored to DRAM (and read back) as before.
  Outcome outcome = RunOn8x8(ThreeConvs(16));
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 2 * (2 * 6 * 6 * 16) + 2 * 4 * 4 * 8);
}

TEST(SystolicConvChain, WideConvolutionWithoutEpilogueOverSixImagesMatches) {
  // No epilogue: the packed rows are the result and stay in the UB set (the store reads them
  // after the accumulator set is handed to tile t + 2); six tiles reuse every set twice.
  Outcome outcome = RunOn8x8(R"(HloModule c
ENTRY main {
  x = s8[6,5,5,8] parameter(0)
  k = s8[3,3,8,8] parameter(1)
  ROOT c = s32[6,5,5,8] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
})");
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 6 * 5 * 5 * 8 * 4);
}

// Small images: a 2 x 2 SAME image streams (2 - 1) x 4 + 2 = 6 wide rows per weight tile, less
// than the 2 x 8 rows an 8 x 8 array needs to hide its weight turnover, so each weight tile
// serves 3 images (3 x 6 = 18 rows), one matmul per image; 7 images are 3 + 3 + 1.
std::string SmallImageChain(int batch) {
  const std::string b = std::to_string(batch);
  const std::string dims = b + ",2,2,8";
  return "HloModule small\n" + Requant("rq1", dims) + Requant("rq2", dims) +
         "ENTRY main {\n  x = s8[" + dims + "] parameter(0)\n"
         "  k1 = s8[3,3,8,8] parameter(1)\n  k2 = s8[3,3,8,8] parameter(2)\n"
         "  c1 = s32[" + dims + "] convolution(x, k1), window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=b01f_01io->b01f\n  q1 = s8[" + dims + "] fusion(c1), kind=kLoop, calls=rq1\n"
         "  c2 = s32[" + dims + "] convolution(q1, k2), window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=b01f_01io->b01f\n"
         "  ROOT q2 = s8[" + dims + "] fusion(c2), kind=kLoop, calls=rq2\n}\n";
}

TEST(SystolicConvChain, SmallImagesShareEachWeightTileAndMatch) {
  Outcome outcome = RunOn8x8(SmallImageChain(7));
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  // The two layers are one op (emit_conv_chain.h): q1 stays on chip, written image by image
  // into c2's padded layout; only q2 is stored.
  EXPECT_EQ(outcome.sasm.rfind("# segment 0: c1+q1,c2+q2\n", 0), 0u) << outcome.sasm;
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 7 * 2 * 2 * 8);
  // Per convolution: 3 kernel rows (3 taps x 8 channels = 24 deep: 3 weight tiles of 8) = 9
  // weight tiles, each loaded once and serving all 7 images (each image in its own
  // accumulator slot). A tile is one whole tap, so each image is one mxu.conv over its 2 x 2
  // interior window: 4 rows, none of a wide row's 2 padding columns.
  EXPECT_EQ(MatmulRows(outcome.sasm).size(), 0u);
  EXPECT_EQ(Count(outcome.sasm, "mxu.conv "), 2u * 9 * 7);
  EXPECT_EQ(Count(outcome.sasm, "in_h=2, in_w=2, kh=1, kw=1, stride=1"), 2u * 9 * 7);
  EXPECT_EQ(Count(outcome.sasm, "mxu.ldw "), 2u * 9);
}

TEST(SystolicConvChain, SmallImagesFromDramWithoutEpilogueMatch) {
  // Input bands loaded image by image from DRAM, no epilogue: the packed rows are the result
  // and stay in the UB set. 5 images: groups of 3 and 2.
  Outcome outcome = RunOn8x8(R"(HloModule c
ENTRY main {
  x = s8[5,2,3,8] parameter(0)
  k = s8[3,3,8,8] parameter(1)
  ROOT c = s32[5,2,3,8] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
})");
  ASSERT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters["host_instructions"], 0);
  EXPECT_EQ(outcome.counters["dram_bytes_written"], 5 * 2 * 3 * 8 * 4);
  // A 2 x 3 image in the padded width 5 streams 1 x 5 + 3 = 8 rows: 2 images cover 16.
  std::vector<int> rows = MatmulRows(outcome.sasm);
  EXPECT_EQ(rows.size(), 9u * (2 + 2 + 1));
  for (int m : rows) EXPECT_EQ(m, 8);
  EXPECT_EQ(Count(outcome.sasm, "mxu.ldw "), 9u * 3);
}

}  // namespace

// Slice, concatenate and pad on the accelerator as strided DMA through the unified buffer
// (targets/systolic/lowering/emit_block_copy.h): bit-exact against the interpreter for every
// element width, with tiles cut by the buffer (rows of one plane, chunks of planes), rows
// longer than the DMA's 16-bit field, element-granular rows (strided slices, interior
// padding), and the forms the plan does not take (negative padding) running on the host.
#include <gtest/gtest.h>

#include <string>

#include "tests/systolic/systolic_run_support.h"

namespace {

using systolic_testing::ExpectNative;
using systolic_testing::Outcome;

Outcome RunOnGemmini(const std::string& text) {
  // 256 KiB of unified buffer: the larger cases need several tiles.
  // Every result here is moved or computed exactly (copies, maxima, f32 sums in the
  // interpreter's order): no difference is allowed.
  return systolic_testing::RunAgainstInterpreter(text, systolic::LoadArchConfig("gemmini", {}),
                                                 5, {}, &systolic_testing::kExact);
}

TEST(SystolicDataMovement, SlicesConcatenatesAndPadsOfSmallArrays) {
  ExpectNative(RunOnGemmini(R"(HloModule m
ENTRY main {
  p = f32[4,6,10] parameter(0)
  q = bf16[3,5] parameter(1)
  s1 = f32[2,3,4] slice(p), slice={[1:3], [0:6:2], [3:7]}
  s2 = f32[4,6,5] slice(p), slice={[0:4], [0:6], [5:10]}
  e = f32[4,6,5] exponential(s2)
  c = f32[4,6,15] concatenate(e, p), dimensions={2}
  z = bf16[] constant(-1.5)
  pd = bf16[6,12] pad(q, z), padding=1_2_0x0_3_1
  ROOT t = (f32[2,3,4], f32[4,6,15], bf16[6,12]) tuple(s1, c, pd)
})"), 5);  // two slices, exponential, concatenate, pad
}

TEST(SystolicDataMovement, LargeArraysAreTiledThroughTheBuffer) {
  // s: rows of 11,996 bytes, 64 of them (750 KB): chunks of rows. c: rows of 200,000 bytes,
  // re-cut into rows of 50,000 (the largest divisor within the 16-bit field).
  ExpectNative(RunOnGemmini(R"(HloModule m
ENTRY main {
  a = f32[64,3000] parameter(0)
  s = f32[64,2999] slice(a), slice={[0:64], [1:3000]}
  x = bf16[2,100000] parameter(1)
  y = bf16[2,100000] parameter(2)
  c = bf16[2,200000] concatenate(x, y), dimensions={1}
  ROOT t = (f32[64,2999], bf16[2,200000]) tuple(s, c)
})"), 2);
}

TEST(SystolicDataMovement, EveryElementWidthMovesExactly) {
  // s64 and u8 (pad values 0 and 7), s32 concatenated along a leading dimension, pred sliced
  // with a stride in its last dimension (one-element rows).
  ExpectNative(RunOnGemmini(R"(HloModule m
ENTRY main {
  a = s64[5,7] parameter(0)
  z = s64[] constant(0)
  pa = s64[9,10] pad(a, z), padding=2_2_0x1_2_0
  b = u8[4,4] parameter(1)
  seven = u8[] constant(7)
  pb = u8[10,7] pad(b, seven), padding=0_0_2x0_0_1
  c = s32[3,4] parameter(2)
  d = s32[2,4] parameter(3)
  cc = s32[5,4] concatenate(c, d), dimensions={0}
  e = pred[6,9] parameter(4)
  se = pred[3,3] slice(e), slice={[0:6:2], [1:9:3]}
  ROOT t = (s64[9,10], u8[10,7], s32[5,4], pred[3,3]) tuple(pa, pb, cc, se)
})"), 4);
}

TEST(SystolicDataMovement, IotaIsViotaTilesOfEveryNumericType) {
  // Along a middle, the last and the first dimension; s8 wraps past 127 as HLO's iota does;
  // 300,000 f32 elements take several tiles of gemmini's half buffer.
  ExpectNative(RunOnGemmini(R"(HloModule m
ENTRY main {
  a = s32[3,5,7] iota(), iota_dimension=1
  b = bf16[4,9] iota(), iota_dimension=1
  c = s8[300,2] iota(), iota_dimension=0
  d = f32[300000] iota(), iota_dimension=0
  ROOT t = (s32[3,5,7], bf16[4,9], s8[300,2], f32[300000]) tuple(a, b, c, d)
})"), 4);
}

TEST(SystolicDataMovement, TransposesOfLongColumnsAreVtransTiles) {
  // Output rows of 70,000 elements (columns of the operand): no DMA block holds one, so the
  // vector unit transposes tiles; a batch of them in bf16, and 1-byte elements.
  const Outcome outcome = RunOnGemmini(R"(HloModule m
ENTRY main {
  a = f32[70000,3] parameter(0)
  ta = f32[3,70000] transpose(a), dimensions={1,0}
  b = bf16[2,70000,5] parameter(1)
  tb = bf16[2,5,70000] transpose(b), dimensions={0,2,1}
  c = u8[66000,7] parameter(2)
  tc = u8[7,66000] transpose(c), dimensions={1,0}
  ROOT t = (f32[3,70000], bf16[2,5,70000], u8[7,66000]) tuple(ta, tb, tc)
})");
  ExpectNative(outcome, 3);
  EXPECT_NE(outcome.assembly.find("vtrans"), std::string::npos);
}

TEST(SystolicDataMovement, TransposeOfUnitDimensionsIsACopyInRowsTheDmaTakes) {
  // MobileNet's 1x1 convolution weights: [1280,320,1,1] to [1,1,1280,320] moves no element;
  // the 1.6 MB run is cut into DMA rows of a divisor that fits the 16-bit field.
  ExpectNative(RunOnGemmini(R"(HloModule m
ENTRY main {
  w = f32[1280,320,1,1] parameter(0)
  ROOT t = f32[1,1,1280,320] transpose(w), dimensions={2,3,0,1}
})"), 1);
}

TEST(SystolicDataMovement, ReduceWindowsFoldStridedBoxesOnTheVectorUnit) {
  // ResNet's max pool (3x3, stride 2, after an explicit pad; 800 KB of result: tiles of
  // gemmini's buffer), a padded SAME pool, a bf16 window sum, and the s32 running sum of a
  // two-element window padded on the left (llama's position counter).
  ExpectNative(RunOnGemmini(R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
sum16 {
  c = bf16[] parameter(0)
  d = bf16[] parameter(1)
  ROOT s = bf16[] add(c, d)
}
sum32 {
  e = s32[] parameter(0)
  f = s32[] parameter(1)
  ROOT s = s32[] add(e, f)
}
ENTRY main {
  x = f32[1,113,113,64] parameter(0)
  ninf = f32[] constant(-inf)
  pool = f32[1,56,56,64] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1},
      to_apply=max
  y = f32[2,9,9,3] parameter(1)
  same = f32[2,5,5,3] reduce-window(y, ninf),
      window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
  z = bf16[4,10,6] parameter(2)
  zero16 = bf16[] constant(0)
  avg = bf16[4,4,6] reduce-window(z, zero16), window={size=1x4x1 stride=1x2x1}, to_apply=sum16
  w = s32[2] parameter(3)
  zero = s32[] constant(0)
  run = s32[2] reduce-window(w, zero), window={size=2 pad=1_0}, to_apply=sum32
  ROOT t = (f32[1,56,56,64], f32[2,5,5,3], bf16[4,4,6], s32[2]) tuple(pool, same, avg, run)
})"), 4);
}

TEST(SystolicDataMovement, DepthwiseConvolutionsAreWindowFoldsWithWeights) {
  // MobileNet's 3x3 depthwise layers: SAME padding at stride 1 in bf16 (f32 sums, one rounding
  // to bf16 as the interpreter does), stride 2 with asymmetric padding in f32, several tiles of
  // gemmini's buffer; rows of 60 x 512 channels too long for one tile, so tiles are ranges of
  // a row at one row index.
  const Outcome outcome = RunOnGemmini(R"(HloModule m
ENTRY main {
  x = bf16[1,28,28,64] parameter(0)
  w = bf16[3,3,1,64] parameter(1)
  a = bf16[1,28,28,64] convolution(x, w), window={size=3x3 pad=1_1x1_1},
      dim_labels=b01f_01io->b01f, feature_group_count=64
  y = f32[2,15,15,24] parameter(2)
  v = f32[3,3,1,24] parameter(3)
  b = f32[2,8,8,24] convolution(y, v), window={size=3x3 stride=2x2 pad=0_2x1_1},
      dim_labels=b01f_01io->b01f, feature_group_count=24
  z = bf16[1,4,60,512] parameter(4)
  u = bf16[3,3,1,512] parameter(5)
  c = bf16[1,4,60,512] convolution(z, u), window={size=3x3 pad=1_1x1_1},
      dim_labels=b01f_01io->b01f, feature_group_count=512
  ROOT t = (bf16[1,28,28,64], f32[2,8,8,24], bf16[1,4,60,512]) tuple(a, b, c)
})");
  ExpectNative(outcome, 3);
  EXPECT_EQ(outcome.assembly.find("mxu."), std::string::npos);  // the vector unit's work
}

TEST(SystolicDataMovement, ReversesAreOneBoxPerReversedIndex) {
  // A convolution kernel flipped for its backward pass (both spatial dimensions: 9 boxes of
  // whole [cin, cout] blocks), a sequence reversed in time, and a reverse of the innermost
  // dimension (one element per box).
  ExpectNative(RunOnGemmini(R"(HloModule m
ENTRY main {
  k = f32[3,3,16,32] parameter(0)
  rk = f32[3,3,16,32] reverse(k), dimensions={0,1}
  s = bf16[2,50,8] parameter(1)
  rs = bf16[2,50,8] reverse(s), dimensions={1}
  v = s8[4,6] parameter(2)
  rv = s8[4,6] reverse(v), dimensions={1,0}
  ROOT t = (f32[3,3,16,32], bf16[2,50,8], s8[4,6]) tuple(rk, rs, rv)
})"), 3);
}

TEST(SystolicDataMovement, NegativePaddingRunsOnTheHost) {
  const Outcome outcome = RunOnGemmini(R"(HloModule m
ENTRY main {
  a = f32[6,6] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[5,8] pad(a, z), padding=-1_0_0x1_1_0
})");
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 1);
  EXPECT_NE(outcome.assembly.find("# host:"), std::string::npos) << outcome.assembly;
}

}  // namespace

// The systolic lowering's pieces that need no simulator: the scratchpad allocator, the DRAM
// layout, the matmul tiling plan, the program builder's splitting and tokens, the row-program
// analysis, and emitted instruction sequences checked as .sasm text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <variant>

#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "simulator/isa/assembler.h"
#include "simulator/isa/disassembler.h"
#include "targets/systolic/lowering/dispatch_order.h"
#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/lowering.h"
#include "targets/systolic/lowering/program_builder.h"
#include "targets/systolic/lowering/requantize_pattern.h"
#include "targets/systolic/lowering/row_program.h"
#include "targets/systolic/lowering/scratchpad.h"
#include "targets/systolic/lowering/tiling.h"
#include "tests/small_modules.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace systolic::lowering {
namespace {

ArchConfig SmallConfig(int64_t rows, int64_t cols) {
  // TPU v1 multiplies int8 only; these tests also exercise f32 and bf16 matmuls.
  return LoadArchConfig("tpu-v1", std::vector<std::string>{"array.rows=" + std::to_string(rows),
                                                           "array.cols=" + std::to_string(cols),
                                                           "array.dtypes=int8,bf16,f32"});
}

int CountMnemonic(const std::string& text, const std::string& mnemonic) {
  int count = 0;
  for (size_t at = text.find(mnemonic + " "); at != std::string::npos;
       at = text.find(mnemonic + " ", at + 1)) {
    if (at == 0 || text[at - 1] == '\n') ++count;
  }
  return count;
}

TEST(Scratchpad, FirstFitAlignedReusesFreedGaps) {
  ScratchpadAllocator allocator(1024, 64);
  EXPECT_EQ(allocator.Allocate(10), 0);     // rounded up to 64
  EXPECT_EQ(allocator.Allocate(100), 64);   // 128 bytes
  EXPECT_EQ(allocator.Allocate(64), 192);
  allocator.Free(64);
  EXPECT_EQ(allocator.Allocate(64), 64);    // the freed gap, first fit
  EXPECT_EQ(allocator.Allocate(128), 256);  // the remaining 64-byte gap at 128 is too small
  EXPECT_EQ(allocator.peak(), 384);
  EXPECT_EQ(allocator.Allocate(1024), std::nullopt);  // never more than the capacity
  EXPECT_EQ(allocator.Allocate(640), 384);            // exactly up to the end
  EXPECT_EQ(allocator.Allocate(1), 128);              // the last gap
  EXPECT_EQ(allocator.Allocate(1), std::nullopt);
  EXPECT_THROW(allocator.Free(8), hlo::Error);
}

TEST(DramLayout, OverflowNamesTheValueAndSizes) {
  DramLayout layout(1000, 256);
  EXPECT_EQ(layout.Allocate(10, "a"), 0u);
  EXPECT_EQ(layout.Allocate(10, "b"), 256u);
  try {
    layout.Allocate(600, "big");
    FAIL();
  } catch (const hlo::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dram.bytes = 1000"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("big, 600 bytes with 512 bytes live"),
              std::string::npos)
        << e.what();
  }
  layout.Free(0);
  EXPECT_EQ(layout.Allocate(200, "c"), 0u);  // the freed bytes are reused
  EXPECT_EQ(layout.used(), 512);
}

// Dead values give their DRAM back: x, exp(x), exp(exp(x)), ... need two buffers, not four.
TEST(DramPlan, DeadValuesAreReused) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[64] parameter(0)
  a = f32[64] exponential(x)
  b = f32[64] exponential(a)
  ROOT c = f32[64] exponential(b)
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  EXPECT_EQ(lowered.dram_bytes, 2 * 256);
  EXPECT_EQ(lowered.parameters[0][0].address, 0u);
  EXPECT_EQ(lowered.result[0].address, 256u);  // c reuses a's bytes, b reused x's
}

TEST(MatmulTiling, OddSizesOnA4x4Array) {
  ArchConfig config = SmallConfig(4, 4);
  MatmulShape shape{1, 10, 7, 9, Dtype::kF32};
  auto plan = PlanMatmul(shape, config, [](int64_t, int64_t) { return 0; }, nullptr);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->tk, 4);
  EXPECT_EQ(plan->tn, 4);
  EXPECT_EQ(plan->k_blocks, 2);  // ceil(7 / 4)
  EXPECT_EQ(plan->tm, 10);       // all rows fit a 24 MiB buffer
  EXPECT_EQ(plan->a_bytes, 320);  // 2 blocks x 10 x 4 x 4 B (a multiple of the 64-byte alignment)
  EXPECT_EQ(plan->w_bytes, 128);  // 2 x 4 x 4 x 4 B
  EXPECT_EQ(plan->acc_set_bytes, 192);  // 10 x 4 x 4 B = 160 -> 192
}

TEST(MatmulTiling, ShrinksRowsToFitTheBufferAndRejectsWhatNeverFits) {
  ArchConfig config = SmallConfig(4, 4);
  config.ub_bytes = 2048;  // two sets of 1024 bytes
  MatmulShape shape{1, 64, 8, 4, Dtype::kF32};
  auto plan = PlanMatmul(shape, config, [](int64_t, int64_t) { return 0; }, nullptr);
  ASSERT_TRUE(plan);
  // A panel tm x 8 x 4 B + W panel 8 x 4 x 4 B = 128 must fit 1024: tm = 64 -> 2048 no,
  // 32 -> 1024 + 128 no, 16 -> 512 + 128 = 640 yes.
  EXPECT_EQ(plan->tm, 16);
  EXPECT_LE(2 * plan->set_bytes, config.ub_bytes);

  config.ub_bytes = 256;
  std::string why;
  EXPECT_FALSE(PlanMatmul(MatmulShape{1, 4, 64, 4, Dtype::kF32}, config,
                          [](int64_t, int64_t) { return 0; }, &why));
  EXPECT_NE(why.find("4x64x4 matmul fits"), std::string::npos) << why;
}

TEST(MatmulTiling, OutputStationaryCapsRowsAtTheArray) {
  ArchConfig config = SmallConfig(8, 8);
  config.dataflow = Dataflow::kOs;
  auto plan = PlanMatmul(MatmulShape{1, 100, 8, 8, Dtype::kF32}, config,
                         [](int64_t, int64_t) { return 0; }, nullptr);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->tm, 8);
}

TEST(ProgramBuilder, SplitsLongContiguousCopiesAndSetsStridesOnce) {
  ProgramBuilder builder;
  builder.Load(0x1000, 100000, 0, 100000, 100000, 1);  // one 100000-byte row
  builder.Load(0x2000, 1024, 0x40, 16, 16, 3);           // three 16-byte rows, 1 KiB apart
  builder.Load(0x3000, 1024, 0x80, 16, 16, 2);           // same strides: no cfg.set
  std::string text = Disassemble(builder.Take());
  EXPECT_EQ(text,
            "dma.load dram=0x1000, local=ub:0x0, row_bytes=32768, rows=3, planes=1\n"
            "dma.load dram=0x19000, local=ub:0x18000, row_bytes=1696, rows=1, planes=1\n"
            "cfg.set reg=load.dram_row_stride, value=1024\n"
            "dma.load dram=0x2000, local=ub:0x40, row_bytes=16, rows=3, planes=1\n"
            "dma.load dram=0x3000, local=ub:0x80, row_bytes=16, rows=2, planes=1\n"
            "halt\n");
}

TEST(ProgramBuilder, TokensPairPerUnitPairAndBarrierBalances) {
  ProgramBuilder builder;
  EXPECT_EQ(ProgramBuilder::SemaphoreFor(Unit::kLoad, Unit::kVector), 3);
  EXPECT_EQ(ProgramBuilder::SemaphoreFor(Unit::kVector, Unit::kStore), 13);
  EXPECT_THROW(ProgramBuilder::SemaphoreFor(Unit::kLoad, Unit::kLoad), hlo::Error);
  builder.Signal(Unit::kLoad, Unit::kVector);
  EXPECT_FALSE(builder.Balanced());
  builder.Wait(Unit::kLoad, Unit::kVector);
  builder.Barrier();
  EXPECT_TRUE(builder.Balanced());
  std::string text = Disassemble(builder.Take());
  EXPECT_EQ(text.substr(0, text.find('\n', text.find('\n') + 1)),
            "sem.signal unit=load, sem=3, count=1\nsem.wait unit=vector, sem=3, count=1");
}

TEST(ProgramBuilder, RejectsStridesBeyondTheRegister) {
  ProgramBuilder builder;
  EXPECT_THROW(builder.Load(0, int64_t{1} << 33, 0, 16, 16, 2), hlo::Error);
}

// The operands of `inst` as the external inputs of its row program.
ExternalIndex OperandsOf(const hlo::Instruction& inst) {
  return [&inst](const hlo::Instruction* x) -> std::optional<int64_t> {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (inst.operand(i) == x) return i;
    }
    return std::nullopt;
  };
}
ExternalIndex Parameters() {
  return [](const hlo::Instruction* x) -> std::optional<int64_t> {
    if (x->opcode() != hlo::Opcode::kParameter) return std::nullopt;
    return x->attr<hlo::ParameterAttrs>().number;
  };
}

TEST(RowProgram, SoftmaxIsRowReductionsAndBroadcasts) {
  auto module = testing_support::ParseAndVerify(small_modules::kSoftmax);
  std::string why;
  auto program = AnalyzeRows(*module->entry()->root(), Parameters(), false, &why);
  ASSERT_TRUE(program) << why;
  EXPECT_EQ(program->outer, 2);
  EXPECT_EQ(program->inner, 8);
  std::vector<RowOpKind> kinds;
  for (const RowOp& op : program->ops) kinds.push_back(op.kind);
  EXPECT_EQ(kinds, (std::vector<RowOpKind>{RowOpKind::kLoad, RowOpKind::kReduce,
                                           RowOpKind::kBroadcast, RowOpKind::kBinary,
                                           RowOpKind::kUnary, RowOpKind::kReduce,
                                           RowOpKind::kBroadcast, RowOpKind::kDivide}));
  EXPECT_EQ(program->values[static_cast<size_t>(program->ops[1].dst)].cls, RowClass::kRow);
  EXPECT_EQ(program->values[static_cast<size_t>(program->root)].cls, RowClass::kFull);
}

TEST(RowProgram, RejectsWithAReason) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[2,4,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,8] reduce(p, z), dimensions={1}, to_apply=add_c
})");
  std::string why;
  const hlo::Instruction& root = *module->entry()->root();
  EXPECT_FALSE(AnalyzeRows(root, OperandsOf(root), false, &why));
  EXPECT_EQ(why, "reduce r over other than the last dimension or all the others");

  auto floor_module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  p = f32[4,8] parameter(0)
  ROOT c = s32[4,8] convert(p)
})");
  const hlo::Instruction& convert = *floor_module->entry()->root();
  EXPECT_FALSE(AnalyzeRows(convert, OperandsOf(convert), false, &why));
  EXPECT_EQ(why, "convert f32 -> s32");  // vcvt rounds, HLO truncates
}

TEST(RowTiles, LivenessReusesBuffers) {
  auto module = testing_support::ParseAndVerify(small_modules::kSoftmax);
  auto program = AnalyzeRows(*module->entry()->root(), Parameters(), false, nullptr);
  ASSERT_TRUE(program);
  auto buffers = PlanTileBuffers(*program, 2, 8, 1 << 20);
  ASSERT_TRUE(buffers);
  // Full tiles are 2 x 8 x 4 = 64 B; a row (8 B) also takes one 64-byte block. Without reuse
  // the 8 values need 8 blocks; by hand, at most 3 are live at once (e.g. p, the max row and its
  // broadcast; later e, the sum row and its broadcast).
  EXPECT_EQ(buffers->footprint, 3 * 64);
  EXPECT_FALSE(PlanTileBuffers(*program, 2, 8, 64));  // one block is not enough
}

// The whole lowering of a dot on a 4x4 array, as .sasm text.
TEST(Lowering, OddDotOn4x4IsTiledOverKAndN) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[5,7] parameter(0)
  w = f32[7,6] parameter(1)
  ROOT d = f32[5,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  LoweredModule lowered = Lower(*module, SmallConfig(4, 4));
  EXPECT_EQ(lowered.native_instructions, 1);
  EXPECT_EQ(lowered.host_instructions, 0);
  ASSERT_EQ(lowered.steps.size(), 1u);
  std::string text = lowered.Assembly();
  // 2 n tiles (4 + 2 columns) x 2 k blocks (4 + 3 rows); the W panels follow the two A panel
  // slots (5 rows x 7 x 4 B = 140 B, aligned to 192 = 0xc0, twice: 0x180).
  EXPECT_EQ(CountMnemonic(text, "mxu.matmul"), 4) << text;
  EXPECT_EQ(CountMnemonic(text, "mxu.ldw"), 4);
  EXPECT_NE(text.find("mxu.ldw src=ub:0x180, k=4, n=4, dtype=f32, buf=0"), std::string::npos)
      << text;
  // The A panel serves both column tiles: loaded once (5 rows of 28 B), then two W panels.
  EXPECT_EQ(CountMnemonic(text, "dma.load"), 3) << text;
  EXPECT_NE(text.find("mxu.matmul src=ub:0x0, dst=acc:0x0, m=5, dtype=f32, buf=0, acc=0"),
            std::string::npos);
  EXPECT_NE(text.find("k=3, n=2, dtype=f32"), std::string::npos);  // the corner tile
  // Results leave from the accumulators: no vector op is needed.
  EXPECT_EQ(CountMnemonic(text, "vmov"), 0);
  EXPECT_EQ(CountMnemonic(text, "dma.store"), 2);
  EXPECT_EQ(CountMnemonic(text, "sem.signal"), CountMnemonic(text, "sem.wait"));
}

TEST(Lowering, DotOfATypeTheArrayLacksFallsBackToTheHost) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[5,7] parameter(0)
  w = f32[7,6] parameter(1)
  ROOT d = f32[5,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  LoweredModule lowered = Lower(*module, Preset("tpu-v1"));  // int8 only
  EXPECT_EQ(lowered.host_instructions, 1);
  EXPECT_NE(lowered.Assembly().find("# host: d (array.dtypes of this configuration lacks f32)"),
            std::string::npos)
      << lowered.Assembly();
}

TEST(Lowering, ColumnGatherFallsBackToTheHostWithItsReason) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  t = f32[5,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = f32[5,2] gather(t, i), offset_dims={0}, collapsed_slice_dims={1},
    start_index_map={1}, index_vector_dim=1, slice_sizes={5,1}
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  EXPECT_EQ(lowered.host_instructions, 1);
  EXPECT_NE(lowered.Assembly().find("# host: g (a gather that addresses other than the "
                                    "operand's leading dimensions)"),
            std::string::npos)
      << lowered.Assembly();
}

TEST(Lowering, TooSmallDramIsAnErrorNotACrash) {
  auto module = testing_support::ParseAndVerify(small_modules::kSoftmax);
  ArchConfig config = SmallConfig(8, 8);
  config.dram_bytes = 100;
  EXPECT_THROW(Lower(*module, config), hlo::Error);
}

// The last two dimensions swapped: one planar DMA per batch gathers element columns.
TEST(Lowering, TransposeIsAPlanarDmaGather) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = bf16[2,3,5] parameter(0)
  ROOT t = bf16[2,5,3] transpose(x), dimensions={0,2,1}
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  EXPECT_EQ(lowered.native_instructions, 1);
  std::string text = lowered.Assembly();
  // Output row-major [2,5,3]: per batch, 5 planes (source columns, 2 bytes apart) of 3 rows
  // (10 bytes apart in the source) of one element each; then a contiguous 30-byte store.
  EXPECT_NE(text.find("cfg.set reg=load.dram_row_stride, value=10\n"
                      "cfg.set reg=load.local_row_stride, value=2\n"
                      "cfg.set reg=load.dram_plane_stride, value=2\n"
                      "cfg.set reg=load.local_plane_stride, value=6\n"
                      "dma.load dram=0x0, local=ub:0x0, row_bytes=2, rows=3, planes=5\n"),
            std::string::npos)
      << text;
  // The op runs on half of the UB's 18 MiB op share (24 MiB less two 3 MiB regions for on-chip
  // activations; the next op may load into the other half), so its second buffer set starts
  // at 4.5 MiB.
  EXPECT_NE(text.find("dma.load dram=0x1e, local=ub:0x480000, row_bytes=2, rows=3, planes=5"),
            std::string::npos)
      << text;
  EXPECT_EQ(CountMnemonic(text, "dma.store"), 2);
}

// Unfused ops lower one by one (constant operands of reduces included), one segment in all.
TEST(Lowering, UnfusedSoftmaxIsAllNative) {
  auto module = testing_support::ParseAndVerify(small_modules::kSoftmax);
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  EXPECT_EQ(lowered.native_instructions, 7);  // 2 reduces, 2 broadcasts, sub, exp, divide
  EXPECT_EQ(lowered.host_instructions, 0);
  EXPECT_EQ(lowered.steps.size(), 1u);
  std::string text = lowered.Assembly();
  EXPECT_EQ(CountMnemonic(text, "vredmax"), 1);
  EXPECT_EQ(CountMnemonic(text, "vredsum"), 1);
  EXPECT_EQ(CountMnemonic(text, "sem.signal"), CountMnemonic(text, "sem.wait"));
}

// The requantization idiom only matches when clamping to integral bounds inside the target
// type makes vcvt's round-and-saturate equal HLO's truncating convert.
TEST(Requantize, MatchesOnlyIntegralBoundsInsideTheTargetRange) {
  auto make = [](const std::string& lo, const std::string& hi) {
    return testing_support::ParseAndVerify(R"(HloModule q
ENTRY main {
  x = f32[8] parameter(0)
  r = f32[8] round-nearest-even(x)
  lo = f32[] constant()" + lo + R"()
  hi = f32[] constant()" + hi + R"()
  c = f32[8] clamp(lo, r, hi)
  ROOT o = s8[8] convert(c)
})");
  };
  auto in_range = make("-128", "127");
  auto match = MatchRequantize(*in_range->entry()->root());
  ASSERT_TRUE(match);
  EXPECT_EQ(match->lo, -128);
  EXPECT_EQ(match->hi, 127);
  EXPECT_EQ(match->value->name(), "x");
  EXPECT_FALSE(MatchRequantize(*make("-129", "127")->entry()->root()));  // would wrap in HLO
  EXPECT_FALSE(MatchRequantize(*make("-1.5", "127")->entry()->root()));  // not integral
  EXPECT_FALSE(MatchRequantize(*make("5", "3")->entry()->root()));
}

// A 1x1 convolution is the matmul [B*H*W, cin] x [cin, cout]: one mxu.matmul per k block and
// column tile, streaming every pixel, instead of one per output row.
TEST(Lowering, PointwiseConvolutionIsOneLongMatmulPerTile) {
  auto module = testing_support::ParseAndVerify(R"(HloModule c
ENTRY main {
  x = f32[2,6,5,12] parameter(0)
  k = f32[1,1,12,6] parameter(1)
  ROOT c = f32[2,6,5,6] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  EXPECT_EQ(lowered.native_instructions, 1);
  std::string text = lowered.Assembly();
  EXPECT_EQ(CountMnemonic(text, "mxu.matmul"), 2);  // k blocks of 8 + 4 channels, 1 column tile
  EXPECT_NE(text.find("m=60,"), std::string::npos) << text;  // 2 x 6 x 5 pixels at once
}

TEST(RowProgram, BroadcastRolesFollowTheDimensionMapping) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[3,1] parameter(0)
  y = f32[1,3,1,4] parameter(1)
  b = f32[1,3,1,4] broadcast(x), dimensions={1,2}
  ROOT s = f32[1,3,1,4] add(b, y)
})");
  const hlo::Instruction& root = *module->entry()->root();
  auto program = AnalyzeRows(root, Parameters(), false, nullptr);
  ASSERT_TRUE(program);  // x's unit dimension sits among unit dimensions: one value per row
  EXPECT_EQ(program->values[static_cast<size_t>(program->ops[0].dst)].cls, RowClass::kRow);

  auto transposing = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT b = f32[3,2] broadcast(x), dimensions={1,0}
})");
  std::string why;
  EXPECT_FALSE(AnalyzeRows(*transposing->entry()->root(), Parameters(), false, &why));
  EXPECT_EQ(why, "transposing broadcast b");
}

// The .sasm artifact is valid assembler input (what `retarget sim` reads), instruction for
// instruction: a corpus model's segments reassemble to the same programs.
TEST(Lowering, EmittedAssemblyReassembles) {
  auto module = testing_support::ParseAndVerify(testing_support::ReadFile(
      testing_support::CorpusPath("mha_block_1x12x128x64_bf16.hlo")));
  compiler::MakeTargetPipeline(targets::SystolicDescription()).Run(*module);
  LoweredModule lowered = Lower(*module, SmallConfig(16, 16));
  ASSERT_EQ(lowered.steps.size(), 1u);
  const Program& program = std::get<AcceleratorStep>(lowered.steps[0]).program;
  Program again = Assemble(lowered.Assembly(), "mha.sasm");
  ASSERT_EQ(again.instructions.size(), program.instructions.size());
  EXPECT_TRUE(again.instructions == program.instructions);
}

// A dot whose only user is the requantize idiom becomes one op: the requantize runs on the
// accumulator tile and only s8 rows are stored (nothing leaves from the accumulators).
TEST(Lowering, DotAndRequantizeConsumerAreOneOp) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
requant {
  p = s32[6,12] parameter(0)
  f = f32[6,12] convert(p)
  s = f32[] constant(0.0625)
  b = f32[6,12] broadcast(s), dimensions={}
  m = f32[6,12] multiply(f, b)
  r = f32[6,12] round-nearest-even(m)
  lo = f32[] constant(0)
  hi = f32[] constant(127)
  c = f32[6,12] clamp(lo, r, hi)
  ROOT q = s8[6,12] convert(c)
}
ENTRY main {
  x = s8[6,20] parameter(0)
  w = s8[20,12] parameter(1)
  d = s32[6,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT q = s8[6,12] fusion(d), kind=kLoop, calls=requant
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  EXPECT_EQ(lowered.native_instructions, 2);
  ASSERT_EQ(lowered.steps.size(), 1u);
  EXPECT_EQ(std::get<AcceleratorStep>(lowered.steps[0]).useful_macs, 6 * 20 * 12);
  std::string text = lowered.Assembly();
  EXPECT_EQ(text.rfind("# segment 0: d+q\n", 0), 0u) << text;
  EXPECT_EQ(CountMnemonic(text, "dma.store"), 2) << text;  // two column tiles of 8 + 4
  EXPECT_EQ(text.find("dma.store local=acc:"), std::string::npos) << text;
  EXPECT_NE(text.find("row_bytes=8, rows=6"), std::string::npos);  // s8: 8 columns = 8 bytes
  // The requantize is one vrequant per tile straight from the accumulators (scale 0.0625 =
  // 0x3d800000) with the ReLU bound 0 fused (quant.relu = 1): no zero fill and no vmax; 127 is
  // s8's own limit, so no vmin.
  EXPECT_EQ(CountMnemonic(text, "vrequant"), 2) << text;
  EXPECT_NE(text.find("cfg.set reg=quant.scale, value=1031798784"), std::string::npos) << text;
  EXPECT_NE(text.find("cfg.set reg=quant.relu, value=1"), std::string::npos) << text;
  EXPECT_EQ(CountMnemonic(text, "vmax"), 0);
  EXPECT_EQ(CountMnemonic(text, "vfill"), 0);
  EXPECT_EQ(CountMnemonic(text, "vmin"), 0);
  EXPECT_EQ(CountMnemonic(text, "vmul"), 0);
}

// Two chained dots, the first result also an output (so it goes through DRAM): the second
// op's weight panel is loaded before its load unit waits for the first op (op-done tokens on
// semaphore bank 1: mxu -> load is 16 + 4 * 2 + 0 = 24), and only its A panel (the first op's
// result) waits. Every wait is balanced by a signal.
TEST(Lowering, NextOpsWeightsLoadBeforeItWaitsForThePreviousOp) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[4,8] parameter(0)
  w1 = f32[8,8] parameter(1)
  w2 = f32[8,8] parameter(2)
  d1 = f32[4,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[4,8] dot(d1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,8], f32[4,8]) tuple(d1, d2)
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  ASSERT_EQ(lowered.steps.size(), 1u);
  std::string text = lowered.Assembly();
  char w2_load[64];
  std::snprintf(w2_load, sizeof w2_load, "dma.load dram=0x%llx,",
                static_cast<unsigned long long>(lowered.parameters[2][0].address));
  size_t weights = text.find(w2_load);
  size_t first_wait = text.find("sem.wait unit=load, sem=24,");
  ASSERT_NE(weights, std::string::npos) << text;
  ASSERT_NE(first_wait, std::string::npos) << text;
  EXPECT_LT(weights, first_wait) << text;
  EXPECT_EQ(CountMnemonic(text, "sem.wait"), CountMnemonic(text, "sem.signal"));
  // The second op runs on the other half of the UB's op share (9 MiB = 0x900000 up).
  EXPECT_NE(text.find("local=ub:0x9"), std::string::npos) << text;
  EXPECT_EQ(text.find("sem=30"), std::string::npos);  // no on-chip activation handoff
}

// A dot whose only user is the next dot's lhs: its result stays in a resident UB region
// (TPU v1's unified buffer), the next dot reads it from there, and it never reaches DRAM.
// The handoff is one vector -> mxu token on bank 1 (16 + 4 * 3 + 2 = 30).
TEST(Lowering, ActivationBetweenChainedDotsStaysOnChip) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[4,8] parameter(0)
  w1 = f32[8,8] parameter(1)
  w2 = f32[8,8] parameter(2)
  d1 = f32[4,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d2 = f32[4,8] dot(d1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  ASSERT_EQ(lowered.steps.size(), 1u);
  std::string text = lowered.Assembly();
  EXPECT_EQ(CountMnemonic(text, "dma.store"), 1) << text;  // d2 only
  EXPECT_EQ(CountMnemonic(text, "dma.load"), 3) << text;   // x, w1, w2: d1 is never loaded
  // d1's copy goes to resident region 0 at 18 MiB (0x1200000), where d2's matmul reads it.
  EXPECT_NE(text.find("vmov dst=ub:0x1200000,"), std::string::npos) << text;
  EXPECT_NE(text.find("mxu.matmul src=ub:0x1200000,"), std::string::npos) << text;
  EXPECT_NE(text.find("sem.signal unit=vector, sem=30,"), std::string::npos);
  EXPECT_NE(text.find("sem.wait unit=mxu, sem=30,"), std::string::npos);
  EXPECT_EQ(CountMnemonic(text, "sem.wait"), CountMnemonic(text, "sem.signal"));
}

// Three k blocks on a 4x4 array: the weight loads run one step ahead of the matmuls
// (docs/isa.md, "Back to back (ws)"): ldw 0, ldw 1, mm 0, mm 1, ldw 2, mm 2, with the
// weight buffers alternating 0, 1, 0 and each matmul on its own step's buffer.
TEST(Lowering, WeightLoadsRunOneStepAheadOfTheMatmuls) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[4,12] parameter(0)
  w = f32[12,4] parameter(1)
  ROOT d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  LoweredModule lowered = Lower(*module, SmallConfig(4, 4));
  std::string text = lowered.Assembly();
  std::vector<std::string> mxu;
  size_t at = 0;
  while ((at = text.find("mxu.", at)) != std::string::npos) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end - at);
    if (line.rfind("mxu.ldw", 0) == 0 || line.rfind("mxu.matmul", 0) == 0) {
      size_t buf = line.find("buf=");
      mxu.push_back(line.substr(0, line.find(' ')) + " " + line.substr(buf, 5));
    }
    at = end;
  }
  std::vector<std::string> expected = {"mxu.ldw buf=0", "mxu.ldw buf=1", "mxu.matmul buf=0",
                                       "mxu.matmul buf=1", "mxu.ldw buf=0", "mxu.matmul buf=0"};
  EXPECT_EQ(mxu, expected) << text;
}

// Each instruction as its mnemonic and first operand ("dma.load dram=0x200"), in program order.
std::vector<std::string> MnemonicsAndFirstOperand(const Program& program) {
  std::vector<std::string> order;
  for (const Instruction& inst : program.instructions) {
    const std::string text = Disassemble(Program{{inst}, {}});
    order.push_back(text.substr(0, text.find_first_of(",\n")));
  }
  return order;
}

// HoistLoads moves load-unit work up to where the front end can dispatch it early: a load
// without a wait goes to the top, a load-unit wait only after the signal it consumes (store ->
// load is semaphore 1 * 4 + 0 = 4), and every unit keeps its own order.
TEST(Lowering, HoistLoadsKeepsEachUnitsOrderAndWaitsAfterTheirSignals) {
  Program program = Assemble(R"(mxu.matmul src=ub:0x0, dst=acc:0x0, m=4, dtype=f32, buf=0, acc=0, dataflow=ws
sem.signal unit=mxu, sem=9, count=1
sem.wait unit=store, sem=9, count=1
dma.store local=acc:0x0, dram=0x100, row_bytes=16, rows=4, planes=1
sem.signal unit=store, sem=4, count=1
dma.load dram=0x200, local=ub:0x100, row_bytes=16, rows=4, planes=1
sem.wait unit=load, sem=4, count=1
dma.load dram=0x100, local=ub:0x200, row_bytes=16, rows=4, planes=1
halt
)",
                             "hoist.sasm");
  HoistLoads(program, Preset("tpu-v1"));
  const std::vector<std::string> order = MnemonicsAndFirstOperand(program);
  std::vector<std::string> expected = {
      "dma.load dram=0x200",  "mxu.matmul src=ub:0x0", "sem.signal unit=mxu",
      "sem.wait unit=store",  "dma.store local=acc:0x0", "sem.signal unit=store",
      "sem.wait unit=load",   "dma.load dram=0x100",   "halt"};
  EXPECT_EQ(order, expected);
}

// How far loads move up is the architecture's queue depth less one: with queue.depth = 3, two
// of the three loads go ahead of the matmul and the third follows it.
TEST(Lowering, HoistLoadsStopsOneShortOfTheQueueDepth) {
  Program program = Assemble(R"(mxu.matmul src=ub:0x0, dst=acc:0x0, m=4, dtype=f32, buf=0, acc=0, dataflow=ws
dma.load dram=0x100, local=ub:0x100, row_bytes=16, rows=1, planes=1
dma.load dram=0x200, local=ub:0x200, row_bytes=16, rows=1, planes=1
dma.load dram=0x300, local=ub:0x300, row_bytes=16, rows=1, planes=1
halt
)",
                             "hoist_depth.sasm");
  ArchConfig config = Preset("tpu-v1");
  config.queue_depth = 3;
  HoistLoads(program, config);
  const std::vector<std::string> order = MnemonicsAndFirstOperand(program);
  EXPECT_EQ(order, (std::vector<std::string>{"dma.load dram=0x100", "dma.load dram=0x200",
                                              "mxu.matmul src=ub:0x0", "dma.load dram=0x300",
                                              "halt"}));
}

// An int8 3x3 convolution with 4 input channels on a 16x16 array: a kernel row's three taps
// are one 12-deep weight tile (its rows (j, c) are contiguous in HWIO, and the three input
// pixels of an output pixel are contiguous in the tile), so the band takes 3 weight tiles,
// not 9. The same f32 convolution keeps one tap per tile (9): its rounding is unchanged.
TEST(Lowering, Int8ConvolutionTakesAKernelRowPerWeightTile) {
  auto lower = [](const std::string& type, const std::string& acc) {
    auto module = testing_support::ParseAndVerify(
        "HloModule c\nENTRY main {\n  x = " + type + "[1,5,5,4] parameter(0)\n  k = " + type +
        "[3,3,4,4] parameter(1)\n  ROOT c = " + acc +
        "[1,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
        "dim_labels=b01f_01io->b01f\n}\n");
    return Lower(*module, SmallConfig(16, 16)).Assembly();
  };
  std::string int8 = lower("s8", "s32");
  EXPECT_EQ(CountMnemonic(int8, "mxu.ldw"), 3) << int8;
  EXPECT_NE(int8.find("k=12, n=4, dtype=s8"), std::string::npos) << int8;
  std::string f32 = lower("f32", "f32");
  EXPECT_EQ(CountMnemonic(f32, "mxu.ldw"), 9) << f32;
}

// The consumer is fused into the dot only when its other operands exist at the dot's position:
// here `e` is computed after `d`, so d, e and a stay three ops.
TEST(Lowering, ConsumerWithALaterOperandIsNotFused) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,8] parameter(1)
  z = f32[4,8] parameter(2)
  d = f32[4,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[4,8] exponential(z)
  ROOT a = f32[4,8] add(d, e)
})");
  LoweredModule lowered = Lower(*module, SmallConfig(8, 8));
  EXPECT_EQ(lowered.native_instructions, 3);
  EXPECT_EQ(lowered.Assembly().rfind("# segment 0: d e a\n", 0), 0u) << lowered.Assembly();
}

}  // namespace
}  // namespace systolic::lowering


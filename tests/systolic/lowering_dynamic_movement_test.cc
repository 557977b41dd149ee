// Dynamic-slice, dynamic-update-slice, row gathers and row scatters on the accelerator
// (targets/systolic/lowering/emit_block_copy.h, emit_gather.h, emit_scatter.h): the vector
// unit clamps the start indices as HLO does, cfg.load steers the DMA engines, dma.gather moves
// embedding rows, dma.scatter writes or adds rows (skipping out-of-bounds ones).
// Bit-exact against the interpreter with start indices inside, below and past the operand,
// every element width, tiles cut by the buffer and rows wider than the DMA's 16-bit field;
// forms the plan does not take run on the host with the reason; a gather index outside
// load.index_bound is a simulator error, never a wrong row.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/isa/assembler.h"
#include "simulator/simulator.h"
#include "tests/systolic/systolic_run_support.h"

namespace {

using systolic_testing::ExpectNative;
using systolic_testing::Outcome;

const systolic::ArchConfig& Gemmini() {
  // 256 KiB of unified buffer: the larger cases need several tiles.
  static const systolic::ArchConfig config = systolic::LoadArchConfig("gemmini", {});
  return config;
}

// Runs `text` with its parameters random but for the s32 and u32 ones, which take `indices`
// in turn (each parameter's elements from the list, cycling; a negative value is a u32 of
// 2^31 or more).
Outcome RunWithIndices(const std::string& text, const std::vector<int32_t>& indices) {
  auto module = testing_support::ParseAndVerify(text);
  std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 11);
  size_t next = 0;
  for (hlo::Literal& input : inputs) {
    const hlo::PrimitiveType type = input.shape().type;
    if (type != hlo::PrimitiveType::kS32 && type != hlo::PrimitiveType::kU32) continue;
    for (int32_t& value : input.mutable_data<int32_t>()) value = indices[next++ % indices.size()];
  }
  return systolic_testing::RunAgainstInterpreter(text, Gemmini(), 11, std::move(inputs),
                                                 &systolic_testing::kExact);
}

constexpr char kDynamicSlices[] = R"(HloModule m
ENTRY main {
  p = f32[6,5,40] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  zero = s32[] constant(0)
  two = s32[] constant(2)
  ds = f32[2,3,40] dynamic-slice(p, i, j, zero), dynamic_slice_sizes={2,3,40}
  u = bf16[4,9] parameter(3)
  v = bf16[1,9] parameter(4)
  dus = bf16[4,9] dynamic-update-slice(u, v, j, zero)
  w = s8[3,7] parameter(5)
  x = s8[3,2] parameter(6)
  dw = s8[3,7] dynamic-update-slice(w, x, two, i)
  q = f32[10,8] parameter(7)
  k = u32[] parameter(8)
  uzero = u32[] constant(0)
  dq = f32[3,8] dynamic-slice(q, k, uzero), dynamic_slice_sizes={3,8}
  ROOT t = (f32[2,3,40], bf16[4,9], s8[3,7], f32[3,8]) tuple(ds, dus, dw, dq)
})";

TEST(SystolicDynamicMovement, DynamicSlicesClampTheirStartsOnTheAccelerator) {
  // i, j inside the operand, at its edge, past it, and negative: every one clamps as in HLO;
  // the u32 start k takes the third value: 2^31 or more (large: the last start, 7) for a
  // negative one.
  for (const std::vector<int32_t>& starts :
       std::vector<std::vector<int32_t>>{{1, 2, 5}, {4, 3, 9}, {9, 100, -1}, {-3, -1, -7},
                                         {0, 1, 2}}) {
    SCOPED_TRACE(std::to_string(starts[0]) + ", " + std::to_string(starts[1]));
    const Outcome outcome = RunWithIndices(kDynamicSlices, starts);
    ExpectNative(outcome, 4);
    EXPECT_NE(outcome.assembly.find("cfg.load reg=load.dram_offset"), std::string::npos);
    EXPECT_NE(outcome.assembly.find("cfg.load reg=store.dram_offset"), std::string::npos);
  }
}

TEST(SystolicDynamicMovement, LayerSlicesOfStackedWeightsAreTiled) {
  // A scan over stacked layers: one layer (96 KB) of four, more than half of gemmini's buffer,
  // and a KV-cache style update at a dynamic position of a middle dimension.
  ExpectNative(RunWithIndices(R"(HloModule m
ENTRY main {
  w = bf16[4,96,512] parameter(0)
  layer = s32[] parameter(1)
  zero = s32[] constant(0)
  ds = bf16[1,96,512] dynamic-slice(w, layer, zero, zero), dynamic_slice_sizes={1,96,512}
  cache = f32[2,64,8,32] parameter(2)
  kv = f32[2,1,8,32] parameter(3)
  pos = s32[] parameter(4)
  dus = f32[2,64,8,32] dynamic-update-slice(cache, kv, zero, pos, zero, zero)
  ROOT t = (bf16[1,96,512], f32[2,64,8,32]) tuple(ds, dus)
})", {3, 0, 63, 5}), 2);
}

TEST(SystolicDynamicMovement, EmbeddingGatherIsOneDmaGatherPerTile) {
  // Gemma's form: a [vocab, d] table, s32[batch, seq, 1] token ids, including ids past the
  // vocabulary and negative ones (clamped to the last and the first row).
  const Outcome outcome = RunWithIndices(R"(HloModule m
ENTRY main {
  table = bf16[1000,96] parameter(0)
  ids = s32[2,7,1] parameter(1)
  ROOT g = bf16[2,7,96] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=2, slice_sizes={1,96}
})", {5, 999, 1000, -4, 17, 0, 512});
  ExpectNative(outcome, 1);
  EXPECT_NE(outcome.assembly.find("dma.gather"), std::string::npos);
  EXPECT_NE(outcome.assembly.find("cfg.set reg=load.index_bound, value=1000"), std::string::npos);
}

TEST(SystolicDynamicMovement, GathersOfManyRowsWideRowsAndIndexVectors) {
  // 3,000 rows of 512 B (several tiles of gemmini's half buffer); rows of 80,000 bytes (two
  // dma.gather column chunks); a two-component index vector over the first two dimensions,
  // the first component listed second (start_index_map={1,0}), one dimension kept.
  ExpectNative(RunWithIndices(R"(HloModule m
ENTRY main {
  t1 = f32[500,128] parameter(0)
  i1 = s32[3000] parameter(1)
  g1 = f32[3000,128] gather(t1, i1), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
  t2 = u8[6,80000] parameter(2)
  i2 = s32[3,1] parameter(3)
  g2 = u8[3,80000] gather(t2, i2), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,80000}
  t3 = s32[4,11,6] parameter(4)
  i3 = s32[5,2] parameter(5)
  g3 = s32[5,1,6] gather(t3, i3), offset_dims={1,2}, collapsed_slice_dims={1},
      start_index_map={1,0}, index_vector_dim=1, slice_sizes={1,1,6}
  ROOT t = (f32[3000,128], u8[3,80000], s32[5,1,6]) tuple(g1, g2, g3)
})", {7, 499, -1, 3, 10, 250, 2, 5}), 3);
}

TEST(SystolicDynamicMovement, RowScattersReplaceAndAddInUpdateOrder) {
  // Gemma's cache positions (s32 elements replaced) and an embedding gradient (rows added, in
  // f32 and bf16, over several tiles of gemmini's half buffer); indices repeat, and some lie
  // past the operand or below it: those updates are dropped, as HLO drops them.
  ExpectNative(RunWithIndices(R"(HloModule m
replace {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
add_bf16 {
  u = bf16[] parameter(0)
  v = bf16[] parameter(1)
  ROOT s = bf16[] add(v, u)
}
ENTRY main {
  zeros = s32[11] parameter(0)
  pos = s32[11,1] parameter(1)
  vals = s32[11] parameter(2)
  c = s32[11] scatter(zeros, pos, vals), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=replace
  table = f32[500,96] parameter(3)
  ids = s32[3000] parameter(4)
  grads = f32[3000,96] parameter(5)
  g = f32[500,96] scatter(table, ids, grads), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
      to_apply=add_f32
  t16 = bf16[40,1,8] parameter(6)
  i16 = s32[2,5,1] parameter(7)
  u16 = bf16[2,5,1,1,8] parameter(8)
  h = bf16[40,1,8] scatter(t16, i16, u16), update_window_dims={2,3,4},
      inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=2,
      to_apply=add_bf16
  ROOT t = (s32[11], f32[500,96], bf16[40,1,8]) tuple(c, g, h)
})", {3, 10, 3, 11, -1, 0, 499, 500, 7, 39, 40, -7, 7}), 3);
}

TEST(SystolicDynamicMovement, OtherFormsRunOnTheHostWithTheReason) {
  // A computed s64 start, and a gather of a column (slice size 1 in the last dimension).
  const Outcome outcome = RunWithIndices(R"(HloModule m
ENTRY main {
  p = f32[8,16] parameter(0)
  i = s64[] parameter(1)
  zero = s64[] constant(0)
  ds = f32[2,16] dynamic-slice(p, i, zero), dynamic_slice_sizes={2,16}
  ids = s32[3,1] parameter(2)
  g = f32[8,3] gather(p, ids), offset_dims={0}, collapsed_slice_dims={1},
      start_index_map={1}, index_vector_dim=1, slice_sizes={8,1}
  ROOT t = (f32[2,16], f32[8,3]) tuple(ds, g)
})", {2});
  EXPECT_TRUE(outcome.compare.matched) << outcome.compare.summary;
  EXPECT_EQ(outcome.counters.at("host_instructions"), 2) << outcome.assembly;
  EXPECT_NE(outcome.assembly.find("computed start index of type s64"), std::string::npos)
      << outcome.assembly;
  EXPECT_NE(outcome.assembly.find("the operand's leading dimensions"), std::string::npos)
      << outcome.assembly;
}

TEST(SystolicDynamicMovement, GatherIndexOutsideTheBoundIsAnErrorNamingTheLine) {
  const systolic::ArchConfig config = systolic::LoadArchConfig("gemmini", {});
  simulator::Memories memories(config);
  const std::vector<uint8_t> index = {7, 0, 0, 0};  // row 7 of a 4-row bound
  std::copy(index.begin(), index.end(), memories.ub.Write(0x200, 4).begin());
  const systolic::Program program = systolic::Assemble(R"(cfg.set reg=load.index_bound, value=4
dma.gather dram=0x0, local=ub:0x0, index=ub:0x200, row_bytes=8, rows=1
halt
)",
                                                       "gather.sasm");
  try {
    simulator::Simulate(program, config, memories);
    FAIL() << "an index past load.index_bound ran";
  } catch (const hlo::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.location().line, 2) << message;
    EXPECT_NE(message.find("index[0] = 7 is outside [0, 4)"), std::string::npos) << message;
  }
}

}  // namespace

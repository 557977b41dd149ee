// Tiled transposes through shared memory (transpose_kernel.h): values against the interpreter
// (exact: pure data movement) under emulation on several block sizes, for 2-D and batched
// permutations, ragged edge tiles, bf16 and s8 elements and a fused producer; the fusions that
// must stay loop kernels; the launch by hand; ptxas with no spills and the tile's bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "targets/gpu/codegen/nvptx_target.h"
#include "targets/gpu/codegen/transpose_kernel.h"
#include "tests/gpu/codegen_expect.h"

namespace {

using gpu_codegen_test::ExpectMatchesInterpreter;
using gpu_codegen_test::Tolerance;
using testing::HasSubstr;

std::string TransposeModule(const std::string& type, const std::string& in, const std::string& out,
                            const std::string& permutation) {
  return "HloModule transpose\nENTRY main {\n  a = " + type + "[" + in +
         "] parameter(0)\n  ROOT t = " + type + "[" + out + "] transpose(a), dimensions={" +
         permutation + "}\n}\n";
}

std::string KindOf(const gpu::codegen::GpuCompileResult& compiled) {
  return compiled.kernels.size() == 1 ? compiled.kernels[0].kind : "(not one kernel)";
}

TEST(GpuCodegenTranspose, TwoDimensionalWithRaggedTiles) {
  // 70 x 45: tiles of 32 leave 6 and 13 elements at the edges.
  const std::string text = TransposeModule("f32", "70,45", "45,70", "1,0");
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(text, 1, Tolerance{0, 0});
  EXPECT_EQ(KindOf(compiled), "transpose-tiled");
  EXPECT_EQ(compiled.kernels[0].grid, 6u);  // ceil(70/32) * ceil(45/32)
  EXPECT_EQ(compiled.kernels[0].block, 256u);
  EXPECT_THAT(compiled.ptx, HasSubstr("st.shared.f32"));
  EXPECT_THAT(compiled.ptx, HasSubstr("ld.shared.f32"));
  EXPECT_THAT(compiled.ptx, HasSubstr("bar.sync"));
  EXPECT_EQ(compiled.ptx.find(".local"), std::string::npos);
  for (gpu::emulator::EmulatedGrid grid :
       {gpu::emulator::EmulatedGrid{1, 32}, gpu::emulator::EmulatedGrid{4, 96},
        gpu::emulator::EmulatedGrid{7, 1024}})
    ExpectMatchesInterpreter(text, 1, Tolerance{0, 0}, grid);
}

TEST(GpuCodegenTranspose, BatchedPermutationsAndNarrowTypes) {
  // M is a middle dim with rest dims on both sides; bf16 (2 bytes) and s8 (1 byte) tiles.
  const std::string cases[] = {
      TransposeModule("f32", "3,100,70", "70,3,100", "2,0,1"),
      TransposeModule("bf16", "2,40,5,33", "2,5,33,40", "0,2,3,1"),
      TransposeModule("s8", "48,3,20", "3,20,48", "1,2,0"),
  };
  for (const std::string& text : cases) {
    gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(text, 2, Tolerance{0, 0});
    EXPECT_EQ(KindOf(compiled), "transpose-tiled") << text;
    ExpectMatchesInterpreter(text, 2, Tolerance{0, 0}, {3, 64});
  }
}

TEST(GpuCodegenTranspose, FusedProducerIsComputedOnce) {
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule fused_transpose
ENTRY main {
  a = f32[64,40] parameter(0)
  b = f32[64,40] parameter(1)
  m = f32[64,40] multiply(a, b)
  e = f32[64,40] exponential(m)
  ROOT t = f32[40,64] transpose(e), dimensions={1,0}
})",
                                                                    3);
  EXPECT_EQ(KindOf(compiled), "transpose-tiled");
}

TEST(GpuCodegenTranspose, ReshapeAfterTheTransposeIsFree) {
  // mha's K^T: [1,12,128,64] -> [1,12,64,128], then the unit dim dropped (fusion root: reshape).
  gpu::codegen::GpuCompileResult compiled = ExpectMatchesInterpreter(R"(
HloModule k_transpose
ENTRY main {
  k = bf16[1,12,128,64] parameter(0)
  n = bf16[1,12,128,64] negate(k)
  t = bf16[1,12,64,128] transpose(n), dimensions={0,1,3,2}
  ROOT r = bf16[12,64,128] reshape(t)
})",
                                                                    4, Tolerance{0, 0});
  EXPECT_EQ(KindOf(compiled), "transpose-tiled");
  EXPECT_EQ(compiled.kernels[0].grid, 96u);  // 12 * (128/32) * (64/32)
}

TEST(GpuCodegenTranspose, OtherTransposesStayLoopKernels) {
  // The minor dim stays minor: already coalesced.
  EXPECT_EQ(
      KindOf(ExpectMatchesInterpreter(TransposeModule("f32", "40,50,64", "50,40,64", "1,0,2"))),
      "loop");
  // A dim narrower than 16: most of a tile would be idle.
  EXPECT_EQ(KindOf(ExpectMatchesInterpreter(TransposeModule("f32", "300,8", "8,300", "1,0"))),
            "loop");
  // pred elements are not tiled.
  EXPECT_EQ(KindOf(ExpectMatchesInterpreter(TransposeModule("pred", "40,40", "40,40", "1,0"))),
            "loop");
}

TEST(GpuCodegenTranspose, CorpusMhaTilesItsKeyTranspose) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::CorpusPath("mha_block_1x12x128x64_bf16.hlo")));
  gpu::codegen::GpuCompileOptions options;
  options.assemble = false;
  gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*module, options);
  std::vector<std::string> kinds;
  for (const gpu::codegen::KernelRecord& kernel : compiled.kernels) kinds.push_back(kernel.kind);
  EXPECT_THAT(kinds, testing::UnorderedElementsAre("transpose-tiled", "loop", "row-reduction"));
}

TEST(GpuCodegenTranspose, PtxasAcceptsTheTiledKernel) {
  ASSERT_TRUE(gpu::codegen::FindPtxas()) << "ptxas (CUDA toolkit) is missing";
  std::unique_ptr<hlo::Module> module =
      testing_support::ParseAndVerify(TransposeModule("f32", "4096,1024", "1024,4096", "1,0"));
  gpu::codegen::GpuCompileOptions options;
  options.assemble = true;
  gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*module, options);
  ASSERT_EQ(compiled.kernels.size(), 1u);
  const gpu::codegen::KernelRecord& kernel = compiled.kernels[0];
  ASSERT_TRUE(kernel.assembled);
  EXPECT_EQ(kernel.kind, "transpose-tiled");
  EXPECT_EQ(kernel.spill_store_bytes, 0);
  EXPECT_EQ(kernel.stack_bytes, 0);
  EXPECT_EQ(kernel.shared_bytes, 32 * 33 * 4);
  EXPECT_EQ(kernel.grid, 1056u);  // 4096 tiles, one wave of 132 SMs * 8 blocks
}

}  // namespace

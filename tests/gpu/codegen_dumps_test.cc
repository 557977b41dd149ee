// Per-kernel dumps (targets/gpu/codegen/kernel_dumps.h): each kernel's .ll holds only its own
// function and parses; each .ptx holds only its own .entry and assembles alone with ptxas.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>

#include "targets/gpu/codegen/gpu_compiler.h"
#include "targets/gpu/codegen/kernel_dumps.h"
#include "targets/gpu/codegen/nvptx_target.h"
#include "tests/test_support.h"

namespace {

using testing::HasSubstr;
using testing::Not;

// Three kernels: a loop kernel with an array constant, a row kernel, the topk kernel.
constexpr const char* kThreeKernels = R"(
HloModule three
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[64,32] parameter(0)
  c = f32[32] constant({0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31})
  cb = f32[64,32] broadcast(c), dimensions={1}
  m = f32[64,32] multiply(a, cb)
  z = f32[] constant(0)
  r = f32[64] reduce(m, z), dimensions={1}, to_apply=add
  t = (f32[64,3], s32[64,3]) topk(a), k=3, largest=true
  v = f32[64,3] get-tuple-element(t), index=0
  ROOT out = (f32[64], f32[64,3]) tuple(r, v)
})";

TEST(GpuCodegenDumps, OneLlAndOnePtxPerKernel) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kThreeKernels);
  gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*module);
  std::vector<gpu::codegen::KernelDump> dumps = gpu::codegen::SplitKernelDumps(compiled);
  ASSERT_EQ(dumps.size(), compiled.kernels.size());
  ASSERT_GE(dumps.size(), 2u);
  for (const gpu::codegen::KernelDump& dump : dumps) {
    SCOPED_TRACE(dump.entry);
    EXPECT_THAT(dump.llvm_ir, HasSubstr("define ptx_kernel void @" + dump.entry + "("));
    EXPECT_THAT(dump.ptx, HasSubstr(".visible .entry " + dump.entry + "("));
    EXPECT_THAT(dump.ptx, HasSubstr(".target sm_90"));
    for (const gpu::codegen::KernelDump& other : dumps) {
      if (other.entry == dump.entry) continue;
      EXPECT_THAT(dump.llvm_ir, Not(HasSubstr("@" + other.entry + "(")));
      EXPECT_THAT(dump.ptx, Not(HasSubstr(".entry " + other.entry + "(")));
    }
    llvm::LLVMContext context;
    llvm::SMDiagnostic diagnostic;
    EXPECT_NE(llvm::parseIR(llvm::MemoryBufferRef(dump.llvm_ir, dump.entry), diagnostic, context),
              nullptr)
        << diagnostic.getMessage().str();
    if (std::optional<std::string> ptxas = gpu::codegen::FindPtxas()) {
      gpu::codegen::PtxasResult assembled = gpu::codegen::RunPtxas(*ptxas, dump.ptx, "sm_90");
      ASSERT_EQ(assembled.kernels.count(dump.entry), 1u) << assembled.log;
      EXPECT_EQ(assembled.kernels.size(), 1u);
      EXPECT_EQ(assembled.kernels.at(dump.entry).spill_store_bytes, 0);
    }
  }
}

}  // namespace

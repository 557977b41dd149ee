// retarget-gpu-cublaslt-baseline: times one cuBLASLt matmul of a given shape directly (no
// artifact), as the speed-of-light baseline the device check compares our matmul steps with.
//
//   retarget-gpu-cublaslt-baseline M N K [--batch B] [--dtype f32|f16|bf16] [--tf32] [--repeat N]
//
// Prints one line: "cublaslt m=M n=N k=K batch=B dtype=D: median X ms, min Y ms, Z TFLOP/s".
// Inputs are left as cuMemsetD8 zero bytes: timing does not depend on the values.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "targets/gpu/runtime/cublaslt_matmul.h"
#include "targets/gpu/runtime/cuda_driver.h"
#include "targets/gpu/runtime/executor.h"
#include "targets/gpu/runtime/run_error.h"

namespace {

using gpu::runtime::CudaDriver;

int64_t Positive(const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || v < 1 || v > (int64_t{1} << 20)) throw gpu::runtime::RunError(std::string("bad size '") + text + "'");
  return v;
}

int Run(int argc, char** argv) {
  if (argc < 4) throw gpu::runtime::RunError("usage: retarget-gpu-cublaslt-baseline M N K [--batch B] [--dtype f32|f16|bf16] [--tf32] [--repeat N]");
  gpu::MatmulCall mm;
  mm.m = Positive(argv[1]);
  mm.n = Positive(argv[2]);
  mm.k = Positive(argv[3]);
  int repeat = 20;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { if (i + 1 >= argc) throw gpu::runtime::RunError(a + " needs a value"); return argv[++i]; };
    if (a == "--batch") mm.batch = Positive(next());
    else if (a == "--repeat") repeat = static_cast<int>(Positive(next()));
    else if (a == "--tf32") mm.allow_tf32 = true;
    else if (a == "--dtype") {
      const auto d = gpu::ParseDType(next());
      if (!d) throw gpu::runtime::RunError("unknown dtype");
      mm.dtype = *d;
    } else throw gpu::runtime::RunError("unknown option " + a);
  }
  mm.lda = mm.k;
  mm.ldb = mm.n;
  mm.ldd = mm.n;
  mm.stride_a = mm.m * mm.k;
  mm.stride_b = mm.k * mm.n;
  mm.stride_d = mm.m * mm.n;
  const uint64_t esize = gpu::DTypeBytes(mm.dtype);
  mm.a = {0, static_cast<uint64_t>(mm.batch * mm.m * mm.k) * esize};
  mm.b = {mm.a.bytes, static_cast<uint64_t>(mm.batch * mm.k * mm.n) * esize};
  mm.d = {mm.a.bytes + mm.b.bytes, static_cast<uint64_t>(mm.batch * mm.m * mm.n) * esize};
  const uint64_t arena_bytes = mm.d.offset + mm.d.bytes;
  const uint64_t workspace_bytes = uint64_t{32} << 20;

  const CudaDriver& cu = CudaDriver::Load();
  CUdevice device = 0;
  CUcontext context = nullptr;
  cu.Check(cu.cuDeviceGet(&device, 0), "cuDeviceGet");
  cu.Check(cu.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  cu.Check(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUdeviceptr arena = 0, workspace = 0;
  cu.Check(cu.cuMemAlloc(&arena, arena_bytes), "cuMemAlloc");
  cu.Check(cu.cuMemAlloc(&workspace, workspace_bytes), "cuMemAlloc");
  cu.Check(cu.cuMemsetD8(arena, 0, arena_bytes), "cuMemsetD8");
  CUstream stream = nullptr;
  cu.Check(cu.cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
  CUevent start = nullptr, stop = nullptr;
  cu.Check(cu.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  cu.Check(cu.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> times;
  {
    gpu::runtime::CublasLtHandle handle;
    gpu::runtime::MatmulPlan plan(handle, mm, workspace_bytes, "baseline");
    for (int w = 0; w < 3; ++w) plan.Enqueue(arena, workspace, stream);
    for (int r = 0; r < repeat; ++r) {
      cu.Check(cu.cuEventRecord(start, stream), "cuEventRecord");
      plan.Enqueue(arena, workspace, stream);
      cu.Check(cu.cuEventRecord(stop, stream), "cuEventRecord");
      cu.Check(cu.cuEventSynchronize(stop), "matmul");
      float ms = 0;
      cu.Check(cu.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
      times.push_back(ms);
    }
  }
  cu.cuEventDestroy(start);
  cu.cuEventDestroy(stop);
  cu.cuStreamDestroy(stream);
  cu.cuMemFree(workspace);
  cu.cuMemFree(arena);
  cu.cuDevicePrimaryCtxRelease(device);
  const double median = gpu::runtime::Median(times);
  const double flops = 2.0 * mm.batch * mm.m * mm.n * mm.k;
  std::printf("cublaslt m=%lld n=%lld k=%lld batch=%lld dtype=%s: median %.4f ms, min %.4f ms, %.2f TFLOP/s\n",
              static_cast<long long>(mm.m), static_cast<long long>(mm.n), static_cast<long long>(mm.k),
              static_cast<long long>(mm.batch), gpu::DTypeName(mm.dtype), median,
              *std::min_element(times.begin(), times.end()), flops / (median * 1e-3) / 1e12);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "retarget-gpu-cublaslt-baseline: error: %s\n", e.what());
    return 1;
  }
}

// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1").
//
// Guarantees: the runtime binary starts on machines without an NVIDIA driver; Load() then throws
// RunError("no NVIDIA driver found (libcuda.so.1 could not be loaded: <dlerror>)"). Entry points
// are resolved by the names cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2, ...), so the ABI
// matches the toolkit headers the runtime was built with. Check() turns a CUresult into a
// RunError carrying cuGetErrorName/cuGetErrorString and the call that failed.
#pragma once

#include <cuda.h>

#include <string>

namespace gpu::runtime {

// One table of every driver entry point the runtime uses.
#define RTGPU_DRIVER_ENTRY_POINTS(X) \
  X(cuInit)                          \
  X(cuDriverGetVersion)              \
  X(cuDeviceGetCount)                \
  X(cuDeviceGet)                     \
  X(cuDeviceGetName)                 \
  X(cuDeviceGetAttribute)            \
  X(cuDevicePrimaryCtxRetain)        \
  X(cuDevicePrimaryCtxRelease)       \
  X(cuCtxSetCurrent)                 \
  X(cuCtxSynchronize)                \
  X(cuModuleLoadDataEx)              \
  X(cuModuleUnload)                  \
  X(cuModuleGetFunction)             \
  X(cuFuncSetAttribute)              \
  X(cuLaunchKernel)                  \
  X(cuMemAlloc)                      \
  X(cuMemFree)                       \
  X(cuMemcpyHtoD)                    \
  X(cuMemcpyDtoH)                    \
  X(cuMemcpyDtoDAsync)               \
  X(cuMemcpy2DAsync)                 \
  X(cuMemsetD8)                      \
  X(cuMemsetD8Async)                 \
  X(cuMemsetD32Async)                \
  X(cuStreamCreate)                  \
  X(cuStreamDestroy)                 \
  X(cuStreamSynchronize)             \
  X(cuEventCreate)                   \
  X(cuEventDestroy)                  \
  X(cuEventRecord)                   \
  X(cuEventSynchronize)              \
  X(cuEventElapsedTime)              \
  X(cuGetErrorName)                  \
  X(cuGetErrorString)

class CudaDriver {
 public:
  // Loads libcuda.so.1 and resolves every entry point, then calls cuInit(0). Throws RunError.
  static const CudaDriver& Load();

  // Throws RunError("<what>: CUDA_ERROR_X (text)") when result != CUDA_SUCCESS.
  void Check(CUresult result, const std::string& what) const;

#define RTGPU_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  RTGPU_DRIVER_ENTRY_POINTS(RTGPU_DRIVER_MEMBER)
#undef RTGPU_DRIVER_MEMBER

 private:
  CudaDriver() = default;
};

}  // namespace gpu::runtime

// A fake libcuda.so.1 for testing retarget-gpu-run's run loop on machines without a GPU.
//
// "Device" memory is host memory, copies are memcpy, events count, and the one kernel it knows,
// `add_one(const float* x, float* y, u32 count)` (the sample artifact's), is executed on the
// host so the runtime's argument marshalling, upload, step order and download are checked end to
// end; 2-D copies and memsets too (strided_copy, fill, device_id, one-device collectives). Event
// times are synthetic (0.25 ms per recorded event) so the timing arithmetic is predictable. Module loading checks that the image is the PTX text or an ELF; anything else
// fails as the real driver would. Not a CUDA emulator: other kernels fail with
// CUDA_ERROR_NOT_FOUND, and cuBLASLt (which calls the driver itself) is not supported.
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct FakeEvent {
  int sequence = 0;
};
int g_event_clock = 0;
const char kAddOne[] = "add_one";

}  // namespace

extern "C" {

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int* v) { *v = 99999; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* d, int ordinal) { *d = ordinal; return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult cuDeviceGetName(char* name, int len, CUdevice) { std::strncpy(name, "Fake GPU (test stand-in, tests/gpu/fake_driver.cc)", len); return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute attr, CUdevice) {
  *v = attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) { *c = reinterpret_cast<CUcontext>(0x1); return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }
CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned int, CUjit_option*, void**) {
  const char* text = static_cast<const char*>(image);
  if (std::strncmp(text, "\x7f" "ELF", 4) != 0 && std::strstr(text, ".entry") == nullptr) return CUDA_ERROR_INVALID_IMAGE;
  *m = reinterpret_cast<CUmodule>(std::strstr(text, ".entry add_one") != nullptr ? 0x2 : 0x3);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  if (reinterpret_cast<uintptr_t>(m) != 0x2 || std::strcmp(name, kAddOne) != 0) return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(const_cast<char*>(kAddOne));
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned, unsigned,
                        CUstream, void** params, void**) {
  if (reinterpret_cast<const char*>(f) != kAddOne) return CUDA_ERROR_INVALID_HANDLE;
  const float* x = *static_cast<const float* const*>(params[0]);
  float* y = *static_cast<float* const*>(params[1]);
  const uint32_t count = *static_cast<const uint32_t*>(params[2]);
  const uint64_t threads = uint64_t{gx} * bx;
  for (uint64_t i = 0; i < threads && i < count; ++i) y[i] = x[i] + 1.0f;
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  void* mem = std::calloc(1, bytes);
  *p = reinterpret_cast<CUdeviceptr>(mem);
  return mem ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFree(CUdeviceptr p) { std::free(reinterpret_cast<void*>(p)); return CUDA_SUCCESS; }
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) { std::memcpy(reinterpret_cast<void*>(dst), src, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) { std::memcpy(dst, reinterpret_cast<void*>(src), n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) { std::memset(reinterpret_cast<void*>(p), v, n); return CUDA_SUCCESS; }
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream) { return cuMemsetD8(p, v, n); }
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream) {
  for (size_t i = 0; i < n; ++i) std::memcpy(reinterpret_cast<char*>(p) + 4 * i, &v, 4);
  return CUDA_SUCCESS;
}
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* c, CUstream) {
  if (c->srcMemoryType != CU_MEMORYTYPE_DEVICE || c->dstMemoryType != CU_MEMORYTYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  for (size_t row = 0; row < c->Height; ++row) {
    std::memmove(reinterpret_cast<char*>(c->dstDevice) + row * c->dstPitch,
                 reinterpret_cast<const char*>(c->srcDevice) + row * c->srcPitch, c->WidthInBytes);
  }
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream* s, unsigned int) { *s = reinterpret_cast<CUstream>(0x4); return CUDA_SUCCESS; }
CUresult cuStreamDestroy(CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent* e, unsigned int) { *e = reinterpret_cast<CUevent>(new FakeEvent); return CUDA_SUCCESS; }
CUresult cuEventDestroy(CUevent e) { delete reinterpret_cast<FakeEvent*>(e); return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream) { reinterpret_cast<FakeEvent*>(e)->sequence = ++g_event_clock; return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  *ms = 0.25f * static_cast<float>(reinterpret_cast<FakeEvent*>(end)->sequence - reinterpret_cast<FakeEvent*>(start)->sequence);
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char** s) { *s = r == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_FAKE"; return CUDA_SUCCESS; }
CUresult cuGetErrorString(CUresult, const char** s) { *s = "fake driver"; return CUDA_SUCCESS; }

}  // extern "C"

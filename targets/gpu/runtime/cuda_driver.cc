// Loading the driver (see cuda_driver.h).
#include "targets/gpu/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <memory>
#include <mutex>

#include "targets/gpu/runtime/run_error.h"

namespace gpu::runtime {
namespace {

// Two-level stringification expands cuda.h's renaming macros first: cuMemAlloc -> "cuMemAlloc_v2".
#define RTGPU_STR(x) #x
#define RTGPU_EXPANDED_NAME(x) RTGPU_STR(x)

void* Resolve(void* library, const char* versioned, const char* plain) {
  if (void* p = dlsym(library, versioned)) return p;
  // cuEventElapsedTime_v2 only exists in drivers from CUDA 12.8 on; the older symbol has the
  // same signature. Other entry points must match exactly.
  if (std::string(plain) == "cuEventElapsedTime") return dlsym(library, plain);
  return nullptr;
}

}  // namespace

const CudaDriver& CudaDriver::Load() {
  static std::unique_ptr<CudaDriver> driver;
  static std::string load_error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      load_error = std::string("no NVIDIA driver found (libcuda.so.1 could not be loaded: ") +
                   (why != nullptr ? why : "unknown reason") + ")";
      return;
    }
    auto loaded = std::unique_ptr<CudaDriver>(new CudaDriver());
#define RTGPU_DRIVER_RESOLVE(fn)                                                              \
  loaded->fn = reinterpret_cast<decltype(&::fn)>(Resolve(library, RTGPU_EXPANDED_NAME(fn), #fn)); \
  if (loaded->fn == nullptr) {                                                                \
    load_error = std::string("the NVIDIA driver is too old: libcuda.so.1 lacks ") + RTGPU_EXPANDED_NAME(fn); \
    return;                                                                                   \
  }
    RTGPU_DRIVER_ENTRY_POINTS(RTGPU_DRIVER_RESOLVE)
#undef RTGPU_DRIVER_RESOLVE
    const CUresult init = loaded->cuInit(0);
    if (init != CUDA_SUCCESS) {
      const char* name = nullptr;
      loaded->cuGetErrorName(init, &name);
      load_error = std::string("the NVIDIA driver failed to initialize (cuInit: ") + (name ? name : "?") +
                   "); is a GPU visible to this process?";
      return;
    }
    driver = std::move(loaded);
  });
  if (!driver) throw RunError(load_error);
  return *driver;
}

void CudaDriver::Check(CUresult result, const std::string& what) const {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  throw RunError(what + ": " + (name ? name : "CUDA error " + std::to_string(result)) + " (" +
                 (text ? text : "no description") + ")");
}

}  // namespace gpu::runtime

// cuDNN 9 backend-API convolution plans (see cudnn_conv.h).
#include "targets/gpu/runtime/cudnn_conv.h"

#include <cudnn_backend.h>
#include <cudnn_graph.h>
#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "targets/gpu/runtime/run_error.h"

namespace gpu::runtime {
namespace {

#define RTGPU_CUDNN_ENTRY_POINTS(X) \
  X(cudnnCreate)                    \
  X(cudnnDestroy)                   \
  X(cudnnSetStream)                 \
  X(cudnnGetErrorString)            \
  X(cudnnBackendCreateDescriptor)   \
  X(cudnnBackendDestroyDescriptor)  \
  X(cudnnBackendSetAttribute)       \
  X(cudnnBackendGetAttribute)       \
  X(cudnnBackendFinalize)           \
  X(cudnnBackendExecute)

struct Cudnn {
#define RTGPU_CUDNN_MEMBER(fn) decltype(&::fn) fn = nullptr;
  RTGPU_CUDNN_ENTRY_POINTS(RTGPU_CUDNN_MEMBER)
#undef RTGPU_CUDNN_MEMBER
};

const Cudnn& LoadCudnn() {
  static Cudnn api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      error = std::string("cuDNN not found (libcudnn.so.9 could not be loaded: ") + (why ? why : "?") + ")";
      return;
    }
#define RTGPU_CUDNN_RESOLVE(fn)                                          \
  api.fn = reinterpret_cast<decltype(&::fn)>(dlsym(lib, #fn));           \
  if (api.fn == nullptr) {                                               \
    error = "libcudnn.so.9 lacks " #fn;                                  \
    return;                                                              \
  }
    RTGPU_CUDNN_ENTRY_POINTS(RTGPU_CUDNN_RESOLVE)
#undef RTGPU_CUDNN_RESOLVE
  });
  if (!error.empty()) throw RunError(error);
  return api;
}

cudnnDataType_t CudnnType(DType dtype, const std::string& where) {
  switch (dtype) {
    case DType::kF32: return CUDNN_DATA_FLOAT;
    case DType::kF16: return CUDNN_DATA_HALF;
    case DType::kBF16: return CUDNN_DATA_BFLOAT16;
    case DType::kF64: return CUDNN_DATA_DOUBLE;
    case DType::kPred: case DType::kS8: case DType::kU8: case DType::kS16: case DType::kU16:
    case DType::kS32: case DType::kU32: case DType::kS64: case DType::kU64:
      break;
  }
  throw RunError(where + ": dtype " + DTypeName(dtype) + " is not supported by the cuDNN path");
}

// Packed row-major (NCHW-style) strides.
std::vector<int64_t> PackedStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// The largest power of two (<= 16) dividing the offset: the arena base is 256-byte aligned.
int64_t Alignment(uint64_t offset) {
  int64_t a = 16;
  while (a > 1 && offset % a != 0) a /= 2;
  return a;
}

constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;

}  // namespace

struct CudnnConvPlan::State {
  const Cudnn& api;
  std::string name;
  ConvCall call;
  cudnnHandle_t handle = nullptr;
  std::vector<cudnnBackendDescriptor_t> owned;  // destroyed in reverse order
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t workspace = 0;

  explicit State(const Cudnn& a) : api(a) {}
  ~State() {
    for (auto it = owned.rbegin(); it != owned.rend(); ++it) api.cudnnBackendDestroyDescriptor(*it);
    if (handle) api.cudnnDestroy(handle);
  }
  void Check(cudnnStatus_t s, const std::string& what) const {
    if (s != CUDNN_STATUS_SUCCESS) throw RunError(name + ": " + what + ": " + api.cudnnGetErrorString(s));
  }
  cudnnBackendDescriptor_t Create(cudnnBackendDescriptorType_t type, const char* what) {
    cudnnBackendDescriptor_t d = nullptr;
    Check(api.cudnnBackendCreateDescriptor(type, &d), std::string("creating ") + what);
    owned.push_back(d);
    return d;
  }
  template <typename T>
  void Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type,
           const T* values, int64_t count, const char* what) {
    Check(api.cudnnBackendSetAttribute(d, attr, type, count, values), std::string("setting ") + what);
  }
  cudnnBackendDescriptor_t Tensor(const std::vector<int64_t>& dims, int64_t uid, uint64_t offset, cudnnDataType_t type,
                                  const char* what) {
    cudnnBackendDescriptor_t t = Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
    const std::vector<int64_t> strides = PackedStrides(dims);
    const int64_t alignment = Alignment(offset);
    Set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type, 1, what);
    Set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), static_cast<int64_t>(dims.size()), what);
    Set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), static_cast<int64_t>(strides.size()), what);
    Set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid, 1, what);
    Set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment, 1, what);
    Check(api.cudnnBackendFinalize(t), std::string("finalizing ") + what);
    return t;
  }
};

CudnnConvPlan::CudnnConvPlan(const ConvCall& call, CUstream stream, const std::string& name)
    : state_(std::make_unique<State>(LoadCudnn())) {
  State& s = *state_;
  s.name = "cudnn_conv '" + name + "'";
  s.call = call;
  s.Check(s.api.cudnnCreate(&s.handle), "cudnnCreate");
  s.Check(s.api.cudnnSetStream(s.handle, reinterpret_cast<cudaStream_t>(stream)), "cudnnSetStream");
  const cudnnDataType_t type = CudnnType(call.dtype, s.name);
  const cudnnDataType_t compute = call.dtype == DType::kF64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t x = s.Tensor(call.input_dims, kUidX, call.input.offset, type, "input tensor");
  cudnnBackendDescriptor_t w = s.Tensor(call.filter_dims, kUidW, call.filter.offset, type, "filter tensor");
  cudnnBackendDescriptor_t y = s.Tensor(call.output_dims, kUidY, call.output.offset, type, "output tensor");

  cudnnBackendDescriptor_t conv = s.Create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "convolution");
  const int64_t spatial = static_cast<int64_t>(call.strides.size());
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;  // HLO convolution does not flip the kernel
  s.Set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial, 1, "spatial dims");
  s.Set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute, 1, "compute type");
  s.Set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode, 1, "mode");
  s.Set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, call.dilations.data(), spatial, "dilations");
  s.Set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, call.strides.data(), spatial, "strides");
  s.Set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, call.padding_low.data(), spatial, "pre paddings");
  s.Set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, call.padding_high.data(), spatial, "post paddings");
  s.Check(s.api.cudnnBackendFinalize(conv), "finalizing the convolution");

  cudnnBackendDescriptor_t op = s.Create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "operation");
  s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, &x, 1, "X");
  s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, &w, 1, "W");
  s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, &y, 1, "Y");
  s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, &conv, 1, "conv");
  if (call.dtype == DType::kF64) {
    const double alpha = 1.0, beta = 0.0;
    s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_DOUBLE, &alpha, 1, "alpha");
    s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_DOUBLE, &beta, 1, "beta");
  } else {
    const float alpha = 1.0f, beta = 0.0f;
    s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha, 1, "alpha");
    s.Set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta, 1, "beta");
  }
  s.Check(s.api.cudnnBackendFinalize(op), "finalizing the operation");

  cudnnBackendDescriptor_t graph = s.Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
  s.Set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, &op, 1, "graph ops");
  s.Set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &s.handle, 1, "graph handle");
  s.Check(s.api.cudnnBackendFinalize(graph), "finalizing the operation graph");

  cudnnBackendDescriptor_t heuristics = s.Create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics");
  const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
  s.Set(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, &graph, 1, "heuristics graph");
  s.Set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &heur_mode, 1, "heuristics mode");
  s.Check(s.api.cudnnBackendFinalize(heuristics), "finalizing the heuristics");
  constexpr int64_t kMaxConfigs = 8;
  std::vector<cudnnBackendDescriptor_t> configs;
  for (int64_t i = 0; i < kMaxConfigs; ++i) configs.push_back(s.Create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"));
  int64_t found = 0;
  s.Check(s.api.cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                         kMaxConfigs, &found, configs.data()),
          "reading heuristic results");
  std::string last_error = "cuDNN proposed no engine";
  for (int64_t i = 0; i < found && s.plan == nullptr; ++i) {
    cudnnBackendDescriptor_t plan = s.Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
    s.Set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &s.handle, 1, "plan handle");
    s.Set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, &configs[i], 1, "plan config");
    const cudnnStatus_t status = s.api.cudnnBackendFinalize(plan);
    if (status == CUDNN_STATUS_SUCCESS) s.plan = plan;
    else last_error = s.api.cudnnGetErrorString(status);
  }
  if (s.plan == nullptr) throw RunError(s.name + ": no cuDNN engine accepts this convolution (" + last_error + ")");
  int64_t count = 0;
  s.Check(s.api.cudnnBackendGetAttribute(s.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                         &s.workspace),
          "reading the workspace size");
}

CudnnConvPlan::~CudnnConvPlan() = default;

uint64_t CudnnConvPlan::workspace_bytes() const { return static_cast<uint64_t>(state_->workspace); }

void CudnnConvPlan::Enqueue(CUdeviceptr arena, CUdeviceptr workspace) const {
  State& s = *state_;
  auto address = [&](const Slice& slice) { return reinterpret_cast<void*>(static_cast<uintptr_t>(arena + slice.offset)); };
  void* pointers[] = {address(s.call.input), address(s.call.filter), address(s.call.output)};
  const int64_t uids[] = {kUidX, kUidW, kUidY};
  void* workspace_pointer = reinterpret_cast<void*>(static_cast<uintptr_t>(workspace));
  // The variant pack is tiny; building it per launch keeps the plan independent of addresses.
  cudnnBackendDescriptor_t pack = nullptr;
  s.Check(s.api.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack), "creating the variant pack");
  auto destroy = [&] { s.api.cudnnBackendDestroyDescriptor(pack); };
  try {
    s.Set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, 3, "variant uids");
    s.Set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers, 3, "variant pointers");
    s.Set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace_pointer, 1, "variant workspace");
    s.Check(s.api.cudnnBackendFinalize(pack), "finalizing the variant pack");
    s.Check(s.api.cudnnBackendExecute(s.handle, s.plan, pack), "executing");
  } catch (...) {
    destroy();
    throw;
  }
  destroy();
}

}  // namespace gpu::runtime

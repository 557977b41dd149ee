// A cuDNN 9 forward-convolution plan for one artifact `cudnn_conv` step (gpu::ConvCall), built
// with the cuDNN backend (graph) API: tensors X (NC + spatial), W (K, C/groups, + spatial) and
// Y, a cross-correlation descriptor, one CONVOLUTION_FORWARD operation, heuristics mode A, and
// the first engine configuration that finalizes into an execution plan.
//
// Guarantees: libcudnn.so.9 is opened with dlopen when the first plan is built, so the runtime
// starts (and runs artifacts without convolutions) where cuDNN is absent; then the plan reports
// "cuDNN not found (libcudnn.so.9 could not be loaded: ...)". Every cuDNN failure is a RunError
// naming the step and cudnnGetErrorString's text. Compiled only when cudnn_backend.h is found
// (RTGPU_HAVE_CUDNN); otherwise CheckSupported refuses cudnn_conv steps before the driver starts.
// Status: written against the cuDNN 9 headers and compiled here, but not yet executed on a GPU.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

#include "targets/gpu/artifact.h"

namespace gpu::runtime {

class CudnnConvPlan {
 public:
  CudnnConvPlan(const ConvCall& call, CUstream stream, const std::string& name);
  ~CudnnConvPlan();
  CudnnConvPlan(const CudnnConvPlan&) = delete;
  CudnnConvPlan& operator=(const CudnnConvPlan&) = delete;

  uint64_t workspace_bytes() const;
  // `arena` is the device address of arena offset 0; `workspace` holds workspace_bytes().
  void Enqueue(CUdeviceptr arena, CUdeviceptr workspace) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpu::runtime

// A cuBLASLt matmul plan for one artifact `cublaslt_matmul` step (gpu::MatmulCall).
//
// Guarantees: the row-major contract of MatmulCall (artifact.h) is mapped onto cuBLASLt's
// column-major API by computing D^T = op(B)^T . op(A)^T, which also makes cuBLASLt's bias (one
// value per row of its D) a bias per output column n, as the manifest defines it. The algorithm is
// chosen once by cublasLtMatmulAlgoGetHeuristic at plan time, not per run. Every cuBLASLt
// failure is a RunError naming the step and the status.
#pragma once

#include <cublasLt.h>
#include <cuda.h>

#include <string>

#include "targets/gpu/artifact.h"

namespace gpu::runtime {

class CublasLtHandle {
 public:
  CublasLtHandle();
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

// Throws RunError("<what>: CUBLAS_STATUS_X (text)") on failure.
void CheckCublas(cublasStatus_t status, const std::string& what);

class MatmulPlan {
 public:
  MatmulPlan(const CublasLtHandle& handle, const MatmulCall& call, uint64_t workspace_bytes, const std::string& name);
  ~MatmulPlan();
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;

  // Enqueues the matmul on `stream`; `arena` is the device address of arena offset 0.
  void Enqueue(CUdeviceptr arena, CUdeviceptr workspace, CUstream stream) const;

 private:
  const CublasLtHandle& handle_;
  MatmulCall call_;
  std::string name_;
  uint64_t workspace_bytes_;
  float alpha_, beta_;      // f32 compute (f32, f16, bf16)
  double alpha64_, beta64_;  // f64 compute
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace gpu::runtime

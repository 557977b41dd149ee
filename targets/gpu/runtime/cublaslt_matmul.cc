// cuBLASLt matmul plans (see cublaslt_matmul.h for the row-major mapping).
#include "targets/gpu/runtime/cublaslt_matmul.h"

#include "targets/gpu/runtime/run_error.h"

namespace gpu::runtime {
namespace {

cudaDataType_t CudaType(DType dtype) {
  switch (dtype) {
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kF32: return CUDA_R_32F;
    case DType::kF64: return CUDA_R_64F;
    case DType::kPred: case DType::kS8: case DType::kU8: case DType::kS16: case DType::kU16:
    case DType::kS32: case DType::kU32: case DType::kS64: case DType::kU64:
      break;
  }
  throw RunError(std::string("cuBLASLt matmul: unsupported dtype ") + DTypeName(dtype));
}

cublasLtEpilogue_t CublasEpilogue(Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::kRelu: return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::kBias: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::kReluBias: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::kGelu: return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::kGeluBias: return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

void* Address(CUdeviceptr arena, const Slice& s) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(arena + s.offset));
}

}  // namespace

void CheckCublas(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw RunError(what + ": " + cublasLtGetStatusName(status) + " (" + cublasLtGetStatusString(status) + ")");
}

CublasLtHandle::CublasLtHandle() { CheckCublas(cublasLtCreate(&handle_), "cublasLtCreate"); }
CublasLtHandle::~CublasLtHandle() {
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

MatmulPlan::MatmulPlan(const CublasLtHandle& handle, const MatmulCall& call, uint64_t workspace_bytes,
                       const std::string& name)
    : handle_(handle), call_(call), name_("cublaslt_matmul '" + name + "'"), workspace_bytes_(workspace_bytes),
      alpha_(static_cast<float>(call.alpha)), beta_(static_cast<float>(call.beta)), alpha64_(call.alpha),
      beta64_(call.beta) {
  const cudaDataType_t type = CudaType(call.dtype);
  // f64 computes and scales in f64 (alpha and beta are doubles); the rest in f32.
  const bool f64 = call.dtype == DType::kF64;
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F : call.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  CheckCublas(cublasLtMatmulDescCreate(&desc_, compute, f64 ? CUDA_R_64F : CUDA_R_32F), name_ + ": descriptor");
  auto set_desc = [&](cublasLtMatmulDescAttributes_t attr, const void* value, size_t bytes, const char* what) {
    CheckCublas(cublasLtMatmulDescSetAttribute(desc_, attr, value, bytes), name_ + ": " + what);
  };
  // Column-major problem: A' = B (n x k after op), B' = A (k x m after op), D' = D^T (n x m).
  const cublasOperation_t op_a = call.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = call.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a, "transa");
  set_desc(CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b, "transb");
  const cublasLtEpilogue_t epilogue = CublasEpilogue(call.epilogue);
  set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, "epilogue");
  if (EpilogueHasBias(call.epilogue)) {
    set_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof type, "bias data type");
  }

  auto layout = [&](cublasLtMatrixLayout_t* out, uint64_t rows, uint64_t cols, int64_t ld, int64_t stride,
                    const char* what) {
    CheckCublas(cublasLtMatrixLayoutCreate(out, type, rows, cols, ld), name_ + ": layout " + what);
    if (call.batch > 1) {
      const int32_t batch = static_cast<int32_t>(call.batch);
      CheckCublas(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
                  name_ + ": batch count");
      CheckCublas(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                   sizeof stride),
                  name_ + ": batch stride");
    }
  };
  // Stored row-major R x C with row stride ld is column-major C x R with the same ld.
  if (call.transpose_b) layout(&a_layout_, call.k, call.n, call.ldb, call.stride_b, "a'");
  else layout(&a_layout_, call.n, call.k, call.ldb, call.stride_b, "a'");
  if (call.transpose_a) layout(&b_layout_, call.m, call.k, call.lda, call.stride_a, "b'");
  else layout(&b_layout_, call.k, call.m, call.lda, call.stride_a, "b'");
  layout(&d_layout_, call.n, call.m, call.ldd, call.stride_d, "d'");

  CheckCublas(cublasLtMatmulPreferenceCreate(&preference_), name_ + ": preference");
  CheckCublas(cublasLtMatmulPreferenceSetAttribute(preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &workspace_bytes_, sizeof workspace_bytes_),
              name_ + ": workspace preference");
  // The bias pointer is part of the heuristic query on some versions; a placeholder is set at
  // Enqueue time. The heuristic needs only shapes, types and the epilogue.
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  CheckCublas(cublasLtMatmulAlgoGetHeuristic(handle_.get(), desc_, a_layout_, b_layout_, d_layout_, d_layout_,
                                             preference_, 1, &result, &found),
              name_ + ": algorithm heuristic");
  if (found == 0) throw RunError(name_ + ": cuBLASLt found no algorithm for this shape, dtype and epilogue");
  algo_ = result.algo;
}

MatmulPlan::~MatmulPlan() {
  if (preference_) cublasLtMatmulPreferenceDestroy(preference_);
  if (d_layout_) cublasLtMatrixLayoutDestroy(d_layout_);
  if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void MatmulPlan::Enqueue(CUdeviceptr arena, CUdeviceptr workspace, CUstream stream) const {
  if (EpilogueHasBias(call_.epilogue)) {
    void* bias = Address(arena, call_.bias);
    CheckCublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                name_ + ": bias pointer");
  }
  void* d = Address(arena, call_.d);
  const bool f64 = call_.dtype == DType::kF64;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64_) : &alpha_;
  const void* beta = f64 ? static_cast<const void*>(&beta64_) : &beta_;
  CheckCublas(cublasLtMatmul(handle_.get(), desc_, alpha, Address(arena, call_.b), a_layout_,
                             Address(arena, call_.a), b_layout_, beta, d, d_layout_, d, d_layout_, &algo_,
                             reinterpret_cast<void*>(static_cast<uintptr_t>(workspace)), workspace_bytes_,
                             reinterpret_cast<cudaStream_t>(stream)),
              name_);
}

}  // namespace gpu::runtime

// NCCL for retarget-gpu-run: the library loaded at run time with dlopen("libnccl.so.2"), the
// communicators of an artifact's collective steps, and the calls one step becomes.
//
// Guarantees:
//  - The runtime binary starts without NCCL; NcclLibrary::Load() then throws RunError naming
//    dlerror's reason. Entry points are resolved by the names nccl.h declares, so the ABI is the
//    header's the runtime was built with (NCCL 2.x: ncclComm_t, ncclDataType_t, ncclRedOp_t).
//  - One communicator per distinct group of the artifact's steps (send_receive steps use one
//    over every device), made with ncclCommInitAll in one process: device d of the grid is CUDA
//    ordinal d. A group's rank order is the artifact's.
//  - Enqueue puts one step on the device's stream: all_reduce, all_gather and reduce_scatter as
//    the NCCL call of that name; all_to_all and send_receive as ncclSend / ncclRecv inside
//    ncclGroupStart / ncclGroupEnd; data movement travels as bytes (ncclUint8), reductions in
//    the element's NCCL type. A send_receive with no source for this device zeroes its receive
//    buffer; a device that is its own source copies.
//  - Abort() (ncclCommAbort on every communicator) frees the other devices' threads when one of
//    them fails, so a failure ends the run instead of hanging it.
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "targets/gpu/artifact.h"

namespace gpu::runtime {

class CudaDriver;

#define RTGPU_NCCL_ENTRY_POINTS(X) \
  X(ncclGetErrorString)            \
  X(ncclCommInitAll)               \
  X(ncclCommDestroy)               \
  X(ncclCommAbort)                 \
  X(ncclAllReduce)                 \
  X(ncclAllGather)                 \
  X(ncclReduceScatter)             \
  X(ncclSend)                      \
  X(ncclRecv)                      \
  X(ncclGroupStart)                \
  X(ncclGroupEnd)

class NcclLibrary {
 public:
  // Loads libnccl.so.2 and resolves every entry point. Throws RunError.
  static const NcclLibrary& Load();
  // Throws RunError("<what>: <ncclGetErrorString>") unless result is ncclSuccess.
  void Check(ncclResult_t result, const std::string& what) const;

#define RTGPU_NCCL_MEMBER(fn) decltype(&::fn) fn = nullptr;
  RTGPU_NCCL_ENTRY_POINTS(RTGPU_NCCL_MEMBER)
#undef RTGPU_NCCL_MEMBER

 private:
  NcclLibrary() = default;
};

class NcclCommunicators {
 public:
  // Communicators for every group of `manifest`'s collective steps whose group has more than
  // one device. Throws RunError (NCCL's reason) when one cannot be made.
  NcclCommunicators(const NcclLibrary& nccl, const Manifest& manifest);
  ~NcclCommunicators();
  NcclCommunicators(const NcclCommunicators&) = delete;
  NcclCommunicators& operator=(const NcclCommunicators&) = delete;

  // Enqueues `call` (step `name`) for grid device `device` on `stream`, its buffers in `arena`.
  void Enqueue(const CudaDriver& cu, const CollectiveCall& call, const std::string& name,
               int64_t device, CUdeviceptr arena, CUstream stream) const;
  void Abort();

 private:
  ncclComm_t CommunicatorOf(const std::vector<int64_t>& group, int64_t device) const;

  const NcclLibrary& nccl_;
  int64_t devices_ = 1;
  std::map<std::vector<int64_t>, std::vector<ncclComm_t>> communicators_;  // by group, per rank
  std::mutex abort_mutex_;
  bool aborted_ = false;
};

}  // namespace gpu::runtime

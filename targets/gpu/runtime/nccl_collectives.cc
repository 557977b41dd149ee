// NCCL at run time (see nccl_collectives.h).
#include "targets/gpu/runtime/nccl_collectives.h"

#include <dlfcn.h>

#include <algorithm>
#include <memory>

#include "targets/gpu/runtime/cuda_driver.h"
#include "targets/gpu/runtime/run_error.h"

namespace gpu::runtime {
namespace {

// The NCCL type reductions run in; data movement always travels as bytes.
ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kPred:
    case DType::kU8: return ncclUint8;
    case DType::kS8: return ncclInt8;
    case DType::kS32: return ncclInt32;
    case DType::kU32: return ncclUint32;
    case DType::kS64: return ncclInt64;
    case DType::kU64: return ncclUint64;
    case DType::kF16: return ncclFloat16;
    case DType::kBF16: return ncclBfloat16;
    case DType::kF32: return ncclFloat32;
    case DType::kF64: return ncclFloat64;
    case DType::kS16:
    case DType::kU16: break;  // validated away: NCCL has no 16-bit integers
  }
  throw RunError(std::string("NCCL cannot reduce ") + DTypeName(dtype));
}

ncclRedOp_t NcclOp(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum: return ncclSum;
    case Reduction::kProd: return ncclProd;
    case Reduction::kMax: return ncclMax;
    case Reduction::kMin: return ncclMin;
  }
  return ncclSum;
}

int RankIn(const std::vector<int64_t>& group, int64_t device) {
  return static_cast<int>(std::find(group.begin(), group.end(), device) - group.begin());
}

}  // namespace

const NcclLibrary& NcclLibrary::Load() {
  static std::unique_ptr<NcclLibrary> library;
  static std::string load_error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      load_error = std::string("this artifact's collectives need NCCL (libnccl.so.2 could not "
                               "be loaded: ") +
                   (why != nullptr ? why : "unknown reason") + ")";
      return;
    }
    auto loaded = std::unique_ptr<NcclLibrary>(new NcclLibrary());
#define RTGPU_NCCL_RESOLVE(fn)                                                         \
  loaded->fn = reinterpret_cast<decltype(&::fn)>(dlsym(handle, #fn));                 \
  if (loaded->fn == nullptr) {                                                         \
    load_error = "libnccl.so.2 lacks " #fn " (NCCL 2.7 or later is needed)";           \
    return;                                                                            \
  }
    RTGPU_NCCL_ENTRY_POINTS(RTGPU_NCCL_RESOLVE)
#undef RTGPU_NCCL_RESOLVE
    library = std::move(loaded);
  });
  if (!library) throw RunError(load_error);
  return *library;
}

void NcclLibrary::Check(ncclResult_t result, const std::string& what) const {
  if (result == ncclSuccess) return;
  const char* text = ncclGetErrorString(result);
  throw RunError(what + ": NCCL error " + std::to_string(static_cast<int>(result)) + " (" +
                 (text != nullptr ? text : "no description") + ")");
}

NcclCommunicators::NcclCommunicators(const NcclLibrary& nccl, const Manifest& manifest)
    : nccl_(nccl), devices_(manifest.grid.size()) {
  std::vector<std::vector<int64_t>> groups;
  ForEachStep(manifest, [&](const Step& step) {
    const auto* call = std::get_if<CollectiveCall>(&step.call);
    if (call == nullptr) return;
    for (int64_t device = 0; device < devices_; ++device) {
      std::vector<int64_t> group = CollectiveGroupOf(*call, device, devices_);
      if (group.size() > 1 && communicators_.count(group) == 0) {
        std::vector<int> ordinals(group.begin(), group.end());
        std::vector<ncclComm_t> comms(group.size(), nullptr);
        nccl_.Check(nccl_.ncclCommInitAll(comms.data(), static_cast<int>(ordinals.size()),
                                          ordinals.data()),
                    "making the communicator of step '" + step.name + "'");
        communicators_.emplace(std::move(group), std::move(comms));
      }
    }
  });
}

NcclCommunicators::~NcclCommunicators() {
  if (aborted_) return;  // ncclCommAbort already freed them
  for (auto& [group, comms] : communicators_) {
    for (ncclComm_t comm : comms) nccl_.ncclCommDestroy(comm);
  }
}

void NcclCommunicators::Abort() {
  std::lock_guard<std::mutex> lock(abort_mutex_);
  if (aborted_) return;
  aborted_ = true;
  for (auto& [group, comms] : communicators_) {
    for (ncclComm_t comm : comms) nccl_.ncclCommAbort(comm);
  }
}

ncclComm_t NcclCommunicators::CommunicatorOf(const std::vector<int64_t>& group,
                                             int64_t device) const {
  auto it = communicators_.find(group);
  if (it == communicators_.end()) throw RunError("no communicator for a collective's group");
  return it->second.at(static_cast<size_t>(RankIn(group, device)));
}

void NcclCommunicators::Enqueue(const CudaDriver& cu, const CollectiveCall& call,
                                const std::string& name, int64_t device, CUdeviceptr arena,
                                CUstream stream) const {
  const std::vector<int64_t> group = CollectiveGroupOf(call, device, devices_);
  const ncclComm_t comm = CommunicatorOf(group, device);
  auto* const send = reinterpret_cast<void*>(arena + call.send.offset);
  auto* const receive = reinterpret_cast<void*>(arena + call.receive.offset);
  auto* const cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  const size_t block = call.count * static_cast<size_t>(DTypeBytes(call.dtype));
  const std::string what = "collective '" + name + "'";
  switch (call.op) {
    case Collective::kAllReduce:
      nccl_.Check(nccl_.ncclAllReduce(send, receive, call.count, NcclType(call.dtype),
                                      NcclOp(call.reduction), comm, cuda_stream),
                  what);
      return;
    case Collective::kReduceScatter:
      nccl_.Check(nccl_.ncclReduceScatter(send, receive, call.count, NcclType(call.dtype),
                                          NcclOp(call.reduction), comm, cuda_stream),
                  what);
      return;
    case Collective::kAllGather:
      nccl_.Check(nccl_.ncclAllGather(send, receive, block, ncclUint8, comm, cuda_stream), what);
      return;
    case Collective::kAllToAll:
      nccl_.Check(nccl_.ncclGroupStart(), what);
      for (size_t peer = 0; peer < group.size(); ++peer) {
        auto* const out = static_cast<char*>(send) + peer * block;
        auto* const in = static_cast<char*>(receive) + peer * block;
        nccl_.Check(nccl_.ncclSend(out, block, ncclUint8, static_cast<int>(peer), comm,
                                   cuda_stream),
                    what);
        nccl_.Check(nccl_.ncclRecv(in, block, ncclUint8, static_cast<int>(peer), comm,
                                   cuda_stream),
                    what);
      }
      nccl_.Check(nccl_.ncclGroupEnd(), what);
      return;
    case Collective::kSendReceive: {
      bool received = false;
      nccl_.Check(nccl_.ncclGroupStart(), what);
      for (const auto& [source, target] : call.pairs) {
        if (source == device && target == device) {
          cu.Check(cu.cuMemcpyDtoDAsync(arena + call.receive.offset, arena + call.send.offset,
                                        block, stream),
                   what);
          received = true;
        } else if (source == device) {
          nccl_.Check(nccl_.ncclSend(send, block, ncclUint8, RankIn(group, target), comm,
                                     cuda_stream),
                      what);
        } else if (target == device) {
          nccl_.Check(nccl_.ncclRecv(receive, block, ncclUint8, RankIn(group, source), comm,
                                     cuda_stream),
                      what);
          received = true;
        }
      }
      nccl_.Check(nccl_.ncclGroupEnd(), what);
      if (!received && block > 0)
        cu.Check(cu.cuMemsetD8Async(arena + call.receive.offset, 0, block, stream), what);
      return;
    }
  }
}

}  // namespace gpu::runtime

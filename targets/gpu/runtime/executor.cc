// The run loop (see executor.h).
#include "targets/gpu/runtime/executor.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "targets/gpu/runtime/cublaslt_matmul.h"
#include "targets/gpu/runtime/cuda_driver.h"
#include "targets/gpu/runtime/cudnn_conv.h"
#include "targets/gpu/runtime/run_error.h"
#ifdef RTGPU_HAVE_NCCL
#include "targets/gpu/runtime/nccl_collectives.h"
#endif

namespace gpu::runtime {
namespace {

// cuBLASLt's recommended workspace on Hopper; used when the manifest asks for none.
constexpr uint64_t kDefaultMatmulWorkspace = uint64_t{32} << 20;
constexpr size_t kJitLogBytes = 8192;

// Owns every driver object of one execution; the destructor releases them in reverse order.
class Session {
 public:
  Session(const CudaDriver& cu, int ordinal) : cu_(cu) {
    int count = 0;
    cu_.Check(cu_.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count) {
      throw RunError("device " + std::to_string(ordinal) + " requested, " + std::to_string(count) + " visible");
    }
    cu_.Check(cu_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    cu_.Check(cu_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    cu_.Check(cu_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    cu_.Check(cu_.cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
  }
  ~Session() {
    for (CUevent e : events_) cu_.cuEventDestroy(e);
    for (CUmodule m : modules_) cu_.cuModuleUnload(m);
    for (CUdeviceptr p : allocations_) cu_.cuMemFree(p);
    if (stream_) cu_.cuStreamDestroy(stream_);
    if (context_) cu_.cuDevicePrimaryCtxRelease(device_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  CUdeviceptr Allocate(uint64_t bytes, const std::string& what) {
    CUdeviceptr p = 0;
    cu_.Check(cu_.cuMemAlloc(&p, std::max<uint64_t>(bytes, 1)), "cuMemAlloc of " + std::to_string(bytes) + " bytes for " + what);
    allocations_.push_back(p);
    return p;
  }
  CUmodule LoadModule(const std::string& image, const std::string& what) {
    std::string log(kJitLogBytes, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size()))};
    CUmodule module = nullptr;
    const CUresult r = cu_.cuModuleLoadDataEx(&module, image.c_str(), 2, options, values);
    if (r != CUDA_SUCCESS) {
      log.resize(log.find('\0'));
      try {
        cu_.Check(r, "loading module " + what);
      } catch (const RunError& e) {
        throw RunError(std::string(e.what()) + (log.empty() ? "" : "\n" + log));
      }
    }
    modules_.push_back(module);
    return module;
  }
  CUevent Event() {
    CUevent e = nullptr;
    cu_.Check(cu_.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    events_.push_back(e);
    return e;
  }
  CUdevice device() const { return device_; }
  CUstream stream() const { return stream_; }

 private:
  const CudaDriver& cu_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::vector<CUdeviceptr> allocations_;
  std::vector<CUmodule> modules_;
  std::vector<CUevent> events_;
};

// What a step needs at launch time, prepared once.
struct PreparedStep {
  CUfunction function = nullptr;
  std::vector<uint64_t> arg_storage;  // one 8-byte slot per kernel argument
  std::vector<void*> arg_pointers;
  std::unique_ptr<MatmulPlan> matmul;
  std::unique_ptr<CudnnConvPlan> conv;
  CUdeviceptr conv_workspace = 0;
};

// How loops and branches run: the predicate read back by the host each trip. (CUDA graphs with
// conditional nodes, which keep the decision on the device, are not used yet.)
std::string ControlFlowMode(const Manifest& m) {
  if (m.programs.empty()) return "none";
  return "host-driven (predicate read back each trip)";
}

}  // namespace

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void CheckSupported(const Artifact& artifact) {
  const int64_t devices = artifact.manifest.grid.size();
  ForEachStep(artifact.manifest, [&](const Step& step) {
#ifndef RTGPU_HAVE_CUDNN
    if (std::holds_alternative<ConvCall>(step.call)) {
      throw RunError("step '" + step.name + "': cudnn_conv not supported by this runtime build (built without cudnn_backend.h)");
    }
#endif
#ifndef RTGPU_HAVE_NCCL
    if (std::holds_alternative<CollectiveCall>(step.call) && devices > 1) {
      throw RunError("step '" + step.name +
                     "': collectives between devices not supported by this runtime build (built "
                     "without nccl.h)");
    }
#endif
    (void)step;
    (void)devices;
  });
}

// A collective whose group is this device alone: a copy (send_receive: from itself, or zeros).
void EnqueueLocalCollective(const CudaDriver& cu, const CollectiveCall& call,
                            const std::string& name, int64_t device, CUdeviceptr arena,
                            CUstream stream) {
  bool from_itself = call.op != Collective::kSendReceive;
  for (const auto& [source, target] : call.pairs)
    from_itself = from_itself || (source == device && target == device);
  const std::string what = "collective '" + name + "'";
  if (call.receive.bytes == 0 || (from_itself && call.send == call.receive)) return;
  if (from_itself) {
    cu.Check(cu.cuMemcpyDtoDAsync(arena + call.receive.offset, arena + call.send.offset,
                                  call.receive.bytes, stream),
             what);
  } else {
    cu.Check(cu.cuMemsetD8Async(arena + call.receive.offset, 0, call.receive.bytes, stream), what);
  }
}

std::vector<RunResult> ExecuteOnDevices(const Artifact& artifact,
                                        const std::vector<std::vector<std::string>>& inputs,
                                        const RunOptions& options) {
  CheckSupported(artifact);
  const int64_t devices = artifact.manifest.grid.size();
  if (static_cast<int64_t>(inputs.size()) != devices) {
    throw RunError("inputs for " + std::to_string(inputs.size()) +
                   " devices, the artifact runs on " + std::to_string(devices));
  }
  if (devices == 1) return {Execute(artifact, inputs[0], options)};
  const CudaDriver& cu = CudaDriver::Load();
  int visible = 0;
  cu.Check(cu.cuDeviceGetCount(&visible), "cuDeviceGetCount");
  if (visible < devices) {
    throw RunError("the artifact runs on " + std::to_string(devices) + " devices (" +
                   std::to_string(artifact.manifest.grid.replicas) + " replica(s) x " +
                   std::to_string(artifact.manifest.grid.partitions) + " partition(s)); " +
                   std::to_string(visible) + " visible");
  }
  // NCCL only when a collective spans devices: an artifact for a grid may exchange nothing.
  bool exchanges = false;
  ForEachStep(artifact.manifest, [&](const Step& step) {
    if (const auto* call = std::get_if<CollectiveCall>(&step.call)) {
      exchanges = exchanges || CollectiveGroupOf(*call, 0, devices).size() > 1;
    }
  });
#ifdef RTGPU_HAVE_NCCL
  std::optional<NcclCommunicators> communicators;
  if (exchanges) communicators.emplace(NcclLibrary::Load(), artifact.manifest);
#else
  (void)exchanges;  // CheckSupported refused them
#endif
  std::vector<RunResult> results(static_cast<size_t>(devices));
  std::vector<std::string> failures(static_cast<size_t>(devices));
  std::mutex failure_mutex;
  int64_t first_failure = -1;  // the device that failed first: the others may fail because of it
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < devices; ++d) {
    threads.emplace_back([&, d] {
      RunOptions mine = options;
      mine.device = static_cast<int>(d);
      mine.grid_device = d;
#ifdef RTGPU_HAVE_NCCL
      if (communicators) mine.communicators = &*communicators;
#endif
      try {
        results[static_cast<size_t>(d)] = Execute(artifact, inputs[static_cast<size_t>(d)], mine);
      } catch (const std::exception& e) {
        {
          std::lock_guard<std::mutex> lock(failure_mutex);
          failures[static_cast<size_t>(d)] = e.what();
          if (first_failure < 0) first_failure = d;
        }
#ifdef RTGPU_HAVE_NCCL
        // The others' collectives would wait for this device forever.
        if (communicators) communicators->Abort();
#endif
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (first_failure >= 0) {
    throw RunError("device " + std::to_string(first_failure) + ": " +
                   failures[static_cast<size_t>(first_failure)]);
  }
  return results;
}

RunResult Execute(const Artifact& artifact, const std::vector<std::string>& inputs, const RunOptions& options) {
  CheckSupported(artifact);
  const Manifest& m = artifact.manifest;
  const CudaDriver& cu = CudaDriver::Load();
  Session session(cu, options.device);
  RunResult result;
  {
    char name[256] = {};
    cu.Check(cu.cuDeviceGetName(name, sizeof name - 1, session.device()), "cuDeviceGetName");
    result.device_name = name;
    int major = 0, minor = 0;
    cu.Check(cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, session.device()), "compute capability");
    cu.Check(cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, session.device()), "compute capability");
    result.compute_capability = major * 10 + minor;
    cu.Check(cu.cuDriverGetVersion(&result.driver_version), "cuDriverGetVersion");
  }
  const std::string device_arch = "sm_" + std::to_string(result.compute_capability);

  // Modules: the cubin when it was built for this exact device, else the PTX through the JIT.
  std::map<std::string, CUmodule> modules;
  for (const PtxModule& mod : m.modules) {
    const bool use_cubin = !mod.cubin_section.empty() && mod.cubin_arch == device_arch;
    const std::string& image = artifact.sections.at(use_cubin ? mod.cubin_section : mod.ptx_section);
    modules[mod.name] = session.LoadModule(image, "'" + mod.name + "' (" + (use_cubin ? "cubin" : "PTX") + ")");
  }

  const CUdeviceptr arena = session.Allocate(m.arena_bytes, "the arena");
  bool any_matmul = false;
  ForEachStep(m, [&](const Step& s) { any_matmul = any_matmul || std::holds_alternative<MatmulCall>(s.call); });
  const uint64_t workspace_bytes = any_matmul ? std::max(m.workspace_bytes, kDefaultMatmulWorkspace) : m.workspace_bytes;
  const CUdeviceptr workspace = workspace_bytes > 0 ? session.Allocate(workspace_bytes, "the workspace") : 0;
  std::unique_ptr<CublasLtHandle> cublas;
  if (any_matmul) cublas = std::make_unique<CublasLtHandle>();

  auto prepare = [&](const Step& step, PreparedStep& p) {
    if (const auto* k = std::get_if<KernelLaunch>(&step.call)) {
      cu.Check(cu.cuModuleGetFunction(&p.function, modules.at(k->module), k->entry.c_str()),
               "kernel '" + k->entry + "' in module '" + k->module + "'");
      if (k->shared_bytes > 48 * 1024) {
        cu.Check(cu.cuFuncSetAttribute(p.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->shared_bytes),
                 "shared memory opt-in for '" + k->entry + "'");
      }
      p.arg_storage.resize(k->args.size());
      for (size_t a = 0; a < k->args.size(); ++a) {
        const KernelArg& arg = k->args[a];
        uint64_t& slot = p.arg_storage[a];
        switch (arg.kind) {
          case KernelArg::Kind::kBuffer: slot = arena + arg.slice.offset; break;
          case KernelArg::Kind::kS32: { const int32_t v = static_cast<int32_t>(arg.integer); std::memcpy(&slot, &v, 4); break; }
          case KernelArg::Kind::kS64: std::memcpy(&slot, &arg.integer, 8); break;
          case KernelArg::Kind::kF32: { const float v = static_cast<float>(arg.real); std::memcpy(&slot, &v, 4); break; }
        }
      }
      for (uint64_t& slot : p.arg_storage) p.arg_pointers.push_back(&slot);
    } else if (const auto* mm = std::get_if<MatmulCall>(&step.call)) {
      p.matmul = std::make_unique<MatmulPlan>(*cublas, *mm, workspace_bytes, step.name);
    } else if (const auto* conv = std::get_if<ConvCall>(&step.call)) {
#ifdef RTGPU_HAVE_CUDNN
      p.conv = std::make_unique<CudnnConvPlan>(*conv, session.stream(), step.name);
      if (p.conv->workspace_bytes() > 0) p.conv_workspace = session.Allocate(p.conv->workspace_bytes(), "cuDNN workspace");
#else
      (void)conv;
#endif
    }
  };
  auto prepare_all = [&](const std::vector<Step>& steps) {
    std::vector<PreparedStep> prepared(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) prepare(steps[i], prepared[i]);
    return prepared;
  };
  std::vector<PreparedStep> prepared = prepare_all(m.steps);
  std::vector<std::vector<PreparedStep>> prepared_programs;
  for (const Program& program : m.programs) prepared_programs.push_back(prepare_all(program.steps));
  result.control_flow = ControlFlowMode(m);

  auto upload = [&] {
    for (const Constant& c : m.constants) {
      const std::string& data = artifact.sections.at(c.section);
      if (!data.empty()) cu.Check(cu.cuMemcpyHtoD(arena + c.slice.offset, data.data(), data.size()), "uploading constants");
    }
    for (size_t i = 0; i < m.parameters.size(); ++i) {
      if (!inputs[i].empty()) {
        cu.Check(cu.cuMemcpyHtoD(arena + m.parameters[i].slice.offset, inputs[i].data(), inputs[i].size()),
                 "uploading " + m.parameters[i].name);
      }
    }
  };
  // Host-driven control flow: the predicate or selector is read back after the stream drains,
  // once per trip or branch (docs/gpu-runtime.md).
  auto read_back = [&](const Slice& slice, void* out, size_t bytes, const std::string& what) {
    cu.Check(cu.cuStreamSynchronize(session.stream()), what);
    cu.Check(cu.cuMemcpyDtoH(out, arena + slice.offset, bytes), what);
  };
  std::function<void(const Step&, const PreparedStep&)> enqueue_step;
  auto run_program = [&](uint32_t index) {
    const Program& program = m.programs.at(index);
    for (size_t i = 0; i < program.steps.size(); ++i) enqueue_step(program.steps[i], prepared_programs.at(index)[i]);
  };
  enqueue_step = [&](const Step& step, const PreparedStep& p) {
    if (const auto* loop = std::get_if<WhileLoop>(&step.call)) {
      const std::string reading = "reading the predicate of '" + step.name + "'";
      for (int64_t trip = 0;; ++trip) {
        run_program(loop->condition);
        uint8_t predicate = 0;
        read_back(loop->predicate, &predicate, 1, reading);
        if (predicate == 0) break;
        if (trip >= options.max_while_iterations) {
          throw RunError("the loop '" + step.name + "' exceeded " + std::to_string(options.max_while_iterations) +
                         " iterations");
        }
        run_program(loop->body);
      }
      return;
    }
    if (const auto* conditional = std::get_if<Conditional>(&step.call)) {
      uint8_t selector[4] = {};
      read_back(conditional->selector, selector, conditional->selector.bytes,
                "reading the selector of '" + step.name + "'");
      run_program(SelectedBranch(*conditional, selector));
      return;
    }
    if (const auto* k = std::get_if<KernelLaunch>(&step.call)) {
      cu.Check(cu.cuLaunchKernel(p.function, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
                                 k->shared_bytes, session.stream(), const_cast<void**>(p.arg_pointers.data()), nullptr),
               "launching '" + step.name + "'");
    } else if (p.matmul) {
      p.matmul->Enqueue(arena, workspace, session.stream());
    } else if (p.conv) {
      p.conv->Enqueue(arena, p.conv_workspace);
    } else if (const auto* c = std::get_if<DeviceCopy>(&step.call)) {
      cu.Check(cu.cuMemcpyDtoDAsync(arena + c->destination.offset, arena + c->source.offset, c->source.bytes,
                                    session.stream()),
               "copy '" + step.name + "'");
    } else if (const auto* strided = std::get_if<StridedCopy>(&step.call)) {
      if (strided->rows == 0 || strided->row_bytes == 0) return;
      CUDA_MEMCPY2D copy{};
      copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      copy.srcDevice = arena + strided->source;
      copy.srcPitch = strided->source_pitch;
      copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      copy.dstDevice = arena + strided->destination;
      copy.dstPitch = strided->destination_pitch;
      copy.WidthInBytes = strided->row_bytes;
      copy.Height = strided->rows;
      cu.Check(cu.cuMemcpy2DAsync(&copy, session.stream()), "strided copy '" + step.name + "'");
    } else if (const auto* fill = std::get_if<Fill>(&step.call)) {
      if (fill->destination.bytes == 0) return;
      cu.Check(cu.cuMemsetD8Async(arena + fill->destination.offset, fill->value,
                                  fill->destination.bytes, session.stream()),
               "fill '" + step.name + "'");
    } else if (const auto* id = std::get_if<DeviceIdWrite>(&step.call)) {
      cu.Check(cu.cuMemsetD32Async(arena + id->destination.offset,
                                   DeviceIdValue(*id, m.grid, options.grid_device), 1,
                                   session.stream()),
               "device id '" + step.name + "'");
    } else if (const auto* collective = std::get_if<CollectiveCall>(&step.call)) {
      if (CollectiveGroupOf(*collective, options.grid_device, m.grid.size()).size() <= 1) {
        EnqueueLocalCollective(cu, *collective, step.name, options.grid_device, arena,
                               session.stream());
        return;
      }
#ifdef RTGPU_HAVE_NCCL
      if (options.communicators == nullptr)
        throw RunError("collective '" + step.name + "' runs between devices: use ExecuteOnDevices");
      options.communicators->Enqueue(cu, *collective, step.name, options.grid_device, arena,
                                     session.stream());
#else
      throw RunError("collective '" + step.name + "': this runtime build has no NCCL");
#endif
    } else {
      throw RunError("step '" + step.name + "' cannot run in this runtime build");
    }
  };
  auto enqueue = [&](size_t i) { enqueue_step(m.steps[i], prepared[i]); };

  upload();
  for (int w = 0; w < options.warmup; ++w) {
    for (size_t i = 0; i < m.steps.size(); ++i) enqueue(i);
  }
  cu.Check(cu.cuStreamSynchronize(session.stream()), "warm-up");

  std::vector<CUevent> marks;
  for (size_t i = 0; i <= m.steps.size(); ++i) marks.push_back(session.Event());
  std::vector<std::vector<double>> step_ms(m.steps.size());
  std::vector<double> total_ms;
  for (int r = 0; r < options.repeat; ++r) {
    cu.Check(cu.cuEventRecord(marks[0], session.stream()), "cuEventRecord");
    for (size_t i = 0; i < m.steps.size(); ++i) {
      enqueue(i);
      cu.Check(cu.cuEventRecord(marks[i + 1], session.stream()), "cuEventRecord");
    }
    cu.Check(cu.cuEventSynchronize(marks.back()), "running the steps");
    for (size_t i = 0; i < m.steps.size(); ++i) {
      float ms = 0;
      cu.Check(cu.cuEventElapsedTime(&ms, marks[i], marks[i + 1]), "cuEventElapsedTime");
      step_ms[i].push_back(ms);
    }
    float total = 0;
    cu.Check(cu.cuEventElapsedTime(&total, marks[0], marks.back()), "cuEventElapsedTime");
    total_ms.push_back(total);
  }
  for (size_t i = 0; i < m.steps.size(); ++i) {
    StepTiming t{m.steps[i].name, StepKindName(m.steps[i])};
    if (!step_ms[i].empty()) {
      t.median_ms = Median(step_ms[i]);
      t.min_ms = *std::min_element(step_ms[i].begin(), step_ms[i].end());
    }
    result.steps.push_back(t);
  }
  if (!total_ms.empty()) {
    result.total_median_ms = Median(total_ms);
    result.total_min_ms = *std::min_element(total_ms.begin(), total_ms.end());
  }

  // The results come from one clean run on fresh inputs.
  cu.Check(cu.cuCtxSynchronize(), "synchronizing");
  upload();
  for (size_t i = 0; i < m.steps.size(); ++i) enqueue(i);
  cu.Check(cu.cuStreamSynchronize(session.stream()), "final run");
  for (const TensorSlot& r : m.results) {
    std::string bytes(r.slice.bytes, '\0');
    if (!bytes.empty()) cu.Check(cu.cuMemcpyDtoH(bytes.data(), arena + r.slice.offset, bytes.size()), "downloading " + r.name);
    result.results.push_back(std::move(bytes));
  }
  return result;
}

}  // namespace gpu::runtime

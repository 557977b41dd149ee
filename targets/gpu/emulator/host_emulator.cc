// Host emulation of GPU artifacts (see host_emulator.h).
#include "targets/gpu/emulator/host_emulator.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "hlo/diagnostic.h"
#include "hlo/literal.h"
#include "targets/gpu/emulator/emulated_collectives.h"
#include "targets/gpu/emulator/fiber_block.h"
#include "targets/llvm/host_runtime.h"

namespace gpu::emulator {
namespace {

// The emulated device arena, 256-byte aligned like cudaMalloc's memory: the kernels' IR states
// that alignment on its pointer arguments, and the host code LLVM generates from it uses
// aligned vector loads and stores (a 16-byte aligned buffer faults in them).
template <typename T>
struct DeviceAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{256};
  DeviceAligned() = default;
  template <typename U>
  DeviceAligned(const DeviceAligned<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const DeviceAligned<U>&) const { return true; }
};
using Arena = std::vector<uint8_t, DeviceAligned<uint8_t>>;

// The running emulated thread's ids (set by the fiber scheduler before each switch into it).
// Per OS thread, like the warp exchange and block barrier below: the devices of a multi-device
// run emulate at once, each on a thread of its own, and a block's fibers never leave the OS
// thread that runs them.
struct ThreadIds {
  int32_t tid = 0, ctaid = 0, ntid = 0, nctaid = 0;
};
thread_local ThreadIds current;

// One exchange area and barrier per emulated warp of the running block.
struct WarpExchange {
  FiberBarrier barrier{32};
  int32_t slots[32] = {};
};
thread_local std::vector<std::unique_ptr<WarpExchange>>* warps = nullptr;
// bar.sync (llvm.nvvm.barrier0) of the running block: all its threads.
thread_local FiberBarrier* block_barrier = nullptr;

extern "C" int32_t EmuTidX() { return current.tid; }
extern "C" int32_t EmuCtaidX() { return current.ctaid; }
extern "C" int32_t EmuNtidX() { return current.ntid; }
extern "C" int32_t EmuNctaidX() { return current.nctaid; }
extern "C" int32_t EmuShflBfly(int32_t, int32_t value, int32_t lane_mask, int32_t) {
  WarpExchange& warp = *(*warps)[static_cast<size_t>(current.tid / 32)];
  const int lane = current.tid % 32;
  warp.slots[lane] = value;
  warp.barrier.ArriveAndWait();
  const int32_t other = warp.slots[(lane ^ lane_mask) & 31];
  warp.barrier.ArriveAndWait();
  return other;
}

extern "C" void EmuBarrier0() { block_barrier->ArriveAndWait(); }

void* Unary(double (*function)(double)) { return reinterpret_cast<void*>(function); }
void* Binary(double (*function)(double, double)) { return reinterpret_cast<void*>(function); }

const std::map<std::string, std::pair<std::string, void*>>& Replacements() {
  static const std::map<std::string, std::pair<std::string, void*>> table = {
      {"llvm.nvvm.read.ptx.sreg.tid.x", {"emu_tid_x", reinterpret_cast<void*>(&EmuTidX)}},
      {"llvm.nvvm.read.ptx.sreg.ctaid.x", {"emu_ctaid_x", reinterpret_cast<void*>(&EmuCtaidX)}},
      {"llvm.nvvm.read.ptx.sreg.ntid.x", {"emu_ntid_x", reinterpret_cast<void*>(&EmuNtidX)}},
      {"llvm.nvvm.read.ptx.sreg.nctaid.x", {"emu_nctaid_x", reinterpret_cast<void*>(&EmuNctaidX)}},
      {"llvm.nvvm.shfl.sync.bfly.i32", {"emu_shfl_bfly", reinterpret_cast<void*>(&EmuShflBfly)}},
      {"llvm.nvvm.barrier0", {"emu_barrier0", reinterpret_cast<void*>(&EmuBarrier0)}},
      // libdevice's f64 functions (loop_kernel.h) are the C library's on the host, which is
      // what the reference interpreter computes with.
      {"__nv_exp", {"emu_nv_exp", Unary(&::exp)}},
      {"__nv_expm1", {"emu_nv_expm1", Unary(&::expm1)}},
      {"__nv_log", {"emu_nv_log", Unary(&::log)}},
      {"__nv_log1p", {"emu_nv_log1p", Unary(&::log1p)}},
      {"__nv_tanh", {"emu_nv_tanh", Unary(&::tanh)}},
      {"__nv_sin", {"emu_nv_sin", Unary(&::sin)}},
      {"__nv_cos", {"emu_nv_cos", Unary(&::cos)}},
      {"__nv_tan", {"emu_nv_tan", Unary(&::tan)}},
      {"__nv_cbrt", {"emu_nv_cbrt", Unary(&::cbrt)}},
      {"__nv_erf", {"emu_nv_erf", Unary(&::erf)}},
      {"__nv_pow", {"emu_nv_pow", Binary(&::pow)}},
      {"__nv_atan2", {"emu_nv_atan2", Binary(&::atan2)}},
  };
  return table;
}

// Whether a kernel may wait for the other threads of its block or warp: a barrier, a shuffle,
// or a call into another defined function (which might).
bool MaySynchronize(const llvm::Function& kernel) {
  for (const llvm::BasicBlock& block : kernel)
    for (const llvm::Instruction& inst : block)
      if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
        const llvm::Function* callee = call->getCalledFunction();
        if (callee == nullptr || !callee->isDeclaration()) return true;
        const llvm::StringRef name = callee->getName();
        if (name.starts_with("llvm.nvvm.barrier") || name.starts_with("llvm.nvvm.shfl") ||
            name.starts_with("llvm.nvvm.bar."))
          return true;
      }
  return false;
}

// emu_<kernel>(ptr* arguments) calls the kernel with arguments[0..n): one C++ signature for all.
void AddArgumentArrayWrapper(llvm::Function& kernel) {
  llvm::Module& module = *kernel.getParent();
  llvm::IRBuilder<> b(module.getContext());
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false);
  auto* wrapper = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                         "emu_" + kernel.getName().str(), module);
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", wrapper));
  std::vector<llvm::Value*> arguments;
  for (unsigned i = 0; i < kernel.arg_size(); ++i)
    arguments.push_back(
        b.CreateLoad(b.getPtrTy(), b.CreateConstGEP1_64(b.getPtrTy(), wrapper->getArg(0), i)));
  b.CreateCall(&kernel, arguments);
  b.CreateRetVoid();
}

std::string Message(llvm::Error error) { return llvm::toString(std::move(error)); }

float LoadFloat(const uint8_t* p, gpu::DType dtype) {
  switch (dtype) {
    case gpu::DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case gpu::DType::kBF16:
    case gpu::DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return dtype == gpu::DType::kBF16 ? hlo::BF16ToFloat(h) : hlo::F16ToFloat(h);
    }
    default:
      throw std::runtime_error(std::string("emulator: library operand type ") +
                               gpu::DTypeName(dtype) + " not emulated");
  }
}

void StoreFloat(uint8_t* p, gpu::DType dtype, float f) {
  if (dtype == gpu::DType::kF32) {
    std::memcpy(p, &f, 4);
    return;
  }
  if (dtype != gpu::DType::kBF16 && dtype != gpu::DType::kF16)
    throw std::runtime_error(std::string("emulator: library result type ") +
                             gpu::DTypeName(dtype) + " not emulated");
  // Rounded as the interpreter rounds (literal.h: nearest even, NaN stays a quiet NaN).
  const uint16_t h = dtype == gpu::DType::kBF16 ? hlo::FloatToBF16(f) : hlo::FloatToF16(f);
  std::memcpy(p, &h, 2);
}

// One element as the accumulation type T: double for f64, float for f32, f16 and bf16.
template <typename T>
T LoadValue(const uint8_t* p, gpu::DType dtype) {
  if (dtype == gpu::DType::kF64) {
    double d;
    std::memcpy(&d, p, 8);
    return static_cast<T>(d);
  }
  return static_cast<T>(LoadFloat(p, dtype));
}

template <typename T>
void StoreValue(uint8_t* p, gpu::DType dtype, T value) {
  if (dtype == gpu::DType::kF64) {
    const auto d = static_cast<double>(value);
    std::memcpy(p, &d, 8);
    return;
  }
  StoreFloat(p, dtype, static_cast<float>(value));
}

// `count` elements of `slice` as T (bounds checked once, not per element).
template <typename T>
std::vector<T> LoadValues(const Arena& arena, const gpu::Slice& slice,
                          int64_t count, gpu::DType dtype) {
  const auto bytes = static_cast<uint64_t>(gpu::DTypeBytes(dtype));
  if (count < 0 || slice.offset + static_cast<uint64_t>(count) * bytes > arena.size())
    throw std::runtime_error("emulator: a library operand lies outside the arena");
  std::vector<T> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    values[static_cast<size_t>(i)] =
        LoadValue<T>(&arena[slice.offset + static_cast<uint64_t>(i) * bytes], dtype);
  return values;
}

// Every output's products are added in increasing k from 0 (the interpreter's order); the
// loops run over j innermost so the host vectorizes across outputs without reordering any sum.
// T is the accumulation type: f32 for f32/f16/bf16 (cuBLASLt's COMPUTE_32F), f64 for f64.
template <typename T>
void RunMatmulAs(const gpu::MatmulCall& c, Arena& arena) {
  const bool relu = c.epilogue == gpu::Epilogue::kRelu || c.epilogue == gpu::Epilogue::kReluBias;
  const bool gelu = c.epilogue == gpu::Epilogue::kGelu || c.epilogue == gpu::Epilogue::kGeluBias;
  const int64_t bytes = gpu::DTypeBytes(c.dtype);
  const std::vector<T> a = LoadValues<T>(arena, c.a, static_cast<int64_t>(c.a.bytes) / bytes, c.dtype);
  const std::vector<T> b = LoadValues<T>(arena, c.b, static_cast<int64_t>(c.b.bytes) / bytes, c.dtype);
  std::vector<T> bias;
  if (gpu::EpilogueHasBias(c.epilogue)) bias = LoadValues<T>(arena, c.bias, c.n, c.dtype);
  std::vector<T> row(static_cast<size_t>(c.n));
  for (int64_t batch = 0; batch < c.batch; ++batch)
    for (int64_t i = 0; i < c.m; ++i) {
      std::fill(row.begin(), row.end(), T{0});
      for (int64_t p = 0; p < c.k; ++p) {
        const T x =
            a.at(static_cast<size_t>(batch * c.stride_a + (c.transpose_a ? p * c.lda + i : i * c.lda + p)));
        for (int64_t j = 0; j < c.n; ++j) {
          const int64_t at = batch * c.stride_b + (c.transpose_b ? j * c.ldb + p : p * c.ldb + j);
          row[static_cast<size_t>(j)] += x * b[static_cast<size_t>(at)];
        }
      }
      for (int64_t j = 0; j < c.n; ++j) {
        T value = static_cast<T>(c.alpha) * row[static_cast<size_t>(j)];
        if (!bias.empty()) value += bias[static_cast<size_t>(j)];
        if (relu) value = std::max(value, T{0});
        if (gelu)  // cuBLASLt's GELU: the tanh approximation
          value = T(0.5) * value *
                  (T(1) + std::tanh(T(0.7978845608) * (value + T(0.044715) * value * value * value)));
        StoreValue<T>(&arena.at(c.d.offset + static_cast<uint64_t>((batch * c.stride_d + i * c.ldd + j) * bytes)),
                      c.dtype, value);
      }
    }
}

void RunMatmul(const gpu::MatmulCall& c, Arena& arena) {
  if (c.dtype == gpu::DType::kF64) return RunMatmulAs<double>(c, arena);
  RunMatmulAs<float>(c, arena);
}

// Cross-correlation, NCHW input, KCRS filter (C/groups channels), NKPQ output, f32 accumulation.
// Every output adds its taps in (c, r, s) order from 0; the innermost loop runs over the
// output row q (vectorizable across outputs, each sum's order unchanged).
void RunConv(const gpu::ConvCall& c, Arena& arena) {
  if (c.input_dims.size() != 4) throw std::runtime_error("emulator: only 2-D convolutions");
  const int64_t bytes = gpu::DTypeBytes(c.dtype);
  const int64_t N = c.input_dims[0], C = c.input_dims[1], H = c.input_dims[2], W = c.input_dims[3];
  const int64_t K = c.filter_dims[0], CG = c.filter_dims[1], R = c.filter_dims[2],
                S = c.filter_dims[3];
  const int64_t P = c.output_dims[2], Q = c.output_dims[3];
  if (c.groups < 1 || K % c.groups != 0 || CG * c.groups != C)
    throw std::runtime_error("emulator: bad conv groups");
  const int64_t k_per_group = K / c.groups;
  const std::vector<float> input = LoadValues<float>(arena, c.input, N * C * H * W, c.dtype);
  const std::vector<float> filter = LoadValues<float>(arena, c.filter, K * CG * R * S, c.dtype);
  std::vector<float> row(static_cast<size_t>(Q));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t p = 0; p < P; ++p) {
        std::fill(row.begin(), row.end(), 0.0f);
        const int64_t group = k / k_per_group;
        for (int64_t cg = 0; cg < CG; ++cg)
          for (int64_t r = 0; r < R; ++r) {
            const int64_t h = p * c.strides[0] - c.padding_low[0] + r * c.dilations[0];
            if (h < 0 || h >= H) continue;
            const float* in_row = &input[static_cast<size_t>(((n * C + group * CG + cg) * H + h) * W)];
            for (int64_t t = 0; t < S; ++t) {
              const float f = filter[static_cast<size_t>(((k * CG + cg) * R + r) * S + t)];
              const int64_t w0 = t * c.dilations[1] - c.padding_low[1];
              // q such that 0 <= q * stride + w0 < W.
              int64_t q_begin = 0;
              while (q_begin < Q && q_begin * c.strides[1] + w0 < 0) ++q_begin;
              int64_t q_end = Q;
              while (q_end > q_begin && (q_end - 1) * c.strides[1] + w0 >= W) --q_end;
              for (int64_t q = q_begin; q < q_end; ++q)
                row[static_cast<size_t>(q)] += in_row[q * c.strides[1] + w0] * f;
            }
          }
        for (int64_t q = 0; q < Q; ++q) {
          const int64_t out = ((n * K + k) * P + p) * Q + q;
          StoreFloat(&arena.at(c.output.offset + static_cast<uint64_t>(out * bytes)), c.dtype,
                     row[static_cast<size_t>(q)]);
        }
      }
}

hlo::PrimitiveType ToPrimitive(gpu::DType dtype) {
  std::optional<hlo::PrimitiveType> type = hlo::PrimitiveTypeFromName(gpu::DTypeName(dtype));
  if (!type) throw std::runtime_error("emulator: unknown dtype");
  return *type;
}

// The array leaves of `literal`, depth first.
void AppendLeaves(const hlo::Literal& literal, std::vector<const hlo::Literal*>& leaves) {
  if (!literal.IsTuple()) {
    leaves.push_back(&literal);
    return;
  }
  for (const hlo::Literal& element : literal.elements()) AppendLeaves(element, leaves);
}

}  // namespace

std::vector<hlo::Literal> EmulateArtifact(const gpu::codegen::GpuCompileResult& compiled,
                                          std::span<const hlo::Literal> inputs, EmulatedGrid grid,
                                          const hlo::DeviceView* device) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  const gpu::Manifest& manifest = compiled.artifact.manifest;
  Arena arena(manifest.arena_bytes, 0xA5);  // garbage, like device memory
  for (const gpu::Constant& constant : manifest.constants) {
    const std::string& data = compiled.artifact.sections.at(constant.section);
    std::memcpy(&arena.at(constant.slice.offset), data.data(), data.size());
  }
  std::vector<const hlo::Literal*> leaves;
  for (const hlo::Literal& input : inputs) AppendLeaves(input, leaves);
  if (leaves.size() != manifest.parameters.size())
    throw std::runtime_error("emulator: wrong input count");
  for (size_t i = 0; i < leaves.size(); ++i) {
    auto bytes = leaves[i]->bytes();
    if (bytes.size() != manifest.parameters[i].slice.bytes)
      throw std::runtime_error("emulator: input size");
    if (bytes.empty()) continue;  // a zero-element parameter has no storage to copy from
    std::memcpy(&arena.at(manifest.parameters[i].slice.offset), bytes.data(), bytes.size());
  }

  // Kernels: the IR before O3, re-targeted to the host.
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<std::pair<std::string, uint64_t>> shared_globals;  // name, bytes
  std::set<std::string> synchronizing_kernels;  // the rest run their threads one after another
  if (!compiled.llvm_ir.empty()) {
    auto context = std::make_unique<llvm::LLVMContext>();
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> module =
        llvm::parseIR(llvm::MemoryBufferRef(compiled.llvm_ir, "kernels"), diagnostic, *context);
    if (!module) throw std::runtime_error("emulator: cannot parse the kernels' IR");
    auto created = llvm::orc::LLJITBuilder().create();
    if (!created) throw std::runtime_error("emulator: " + Message(created.takeError()));
    jit = std::move(*created);
    module->setTargetTriple(jit->getTargetTriple().str());
    module->setDataLayout(jit->getDataLayout());
    if (auto* annotations = module->getNamedMetadata("nvvm.annotations"))
      module->eraseNamedMetadata(annotations);
    // Shared memory (addrspace 3 globals) becomes ordinary host globals; blocks run one after
    // another, so one copy serves every block. It is refilled with garbage before each block,
    // as a GPU's shared memory starts undefined: a kernel that reads a slot it did not write
    // gets wrong values here instead of lucky zeros.
    for (llvm::GlobalVariable& global : module->globals())
      if (global.getAddressSpace() == 3) {
        global.setLinkage(llvm::GlobalValue::ExternalLinkage);  // so that lookup finds it
        const llvm::DataLayout& layout = module->getDataLayout();
        shared_globals.emplace_back(global.getName().str(),
                                    layout.getTypeAllocSize(global.getValueType()));
      }
    llvm::orc::SymbolMap symbols;
    symbols[jit->mangleAndIntern("__truncsfbf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(llvm_codegen::TruncSfBf2Address()),
        llvm::JITSymbolFlags::Exported};
    std::vector<llvm::Function*> functions;
    for (llvm::Function& function : *module) functions.push_back(&function);
    for (llvm::Function* function : functions)
      if (!function->isDeclaration() && MaySynchronize(*function))
        synchronizing_kernels.insert(function->getName().str());
    for (llvm::Function* kernel_or_declaration : functions) {
      llvm::Function& function = *kernel_or_declaration;
      if (!function.isDeclaration()) {
        function.setCallingConv(llvm::CallingConv::C);
        AddArgumentArrayWrapper(function);
        continue;
      }
      const std::string name = function.getName().str();
      auto it = Replacements().find(name);
      if (it == Replacements().end()) {
        if (name.rfind("llvm.nvvm.", 0) == 0)
          throw std::runtime_error("emulator: no host version of " + name);
        continue;
      }
      llvm::Function* host = llvm::Function::Create(
          function.getFunctionType(), llvm::Function::ExternalLinkage, it->second.first, *module);
      function.replaceAllUsesWith(host);
      function.eraseFromParent();
      symbols[jit->mangleAndIntern(it->second.first)] = {
          llvm::orc::ExecutorAddr::fromPtr(it->second.second), llvm::JITSymbolFlags::Exported};
    }
    if (auto error = jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols))))
      throw std::runtime_error("emulator: " + Message(std::move(error)));
    if (auto error =
            jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
      throw std::runtime_error("emulator: " + Message(std::move(error)));
  }

  // Runs a list of steps; while and conditional steps run programs of the manifest (validated:
  // a program runs only earlier ones, so this recursion ends).
  std::vector<std::pair<uint8_t*, uint64_t>> shared_memory;  // resolved once, for every launch
  for (const auto& [name, bytes] : shared_globals) {
    auto shared_address = jit->lookup(name);
    if (!shared_address)
      throw std::runtime_error("emulator: " + Message(shared_address.takeError()));
    shared_memory.emplace_back(shared_address->toPtr<uint8_t*>(), bytes);
  }
  // What a launch needs, resolved at its first run: a loop runs the same launch every trip.
  struct PreparedLaunch {
    void (*kernel)(void**) = nullptr;
    std::vector<void*> arguments;
    bool synchronizing = false;
  };
  std::map<const gpu::KernelLaunch*, PreparedLaunch> prepared;
  auto prepare = [&](const gpu::KernelLaunch& launch) -> const PreparedLaunch& {
    auto [it, fresh] = prepared.try_emplace(&launch);
    if (!fresh) return it->second;
    auto address = jit->lookup("emu_" + launch.entry);
    if (!address) throw std::runtime_error("emulator: " + Message(address.takeError()));
    it->second.kernel = address->toPtr<void (*)(void**)>();
    for (const gpu::KernelArg& arg : launch.args) {
      if (arg.kind != gpu::KernelArg::Kind::kBuffer)
        throw std::runtime_error("emulator: scalar args");
      it->second.arguments.push_back(arena.data() + arg.slice.offset);
    }
    it->second.synchronizing = synchronizing_kernels.count(launch.entry) != 0;
    return it->second;
  };
  const int64_t max_trips = hlo::GlobalLimits().max_while_iterations;
  std::function<void(const std::vector<gpu::Step>&)> run_steps;
  run_steps = [&](const std::vector<gpu::Step>& steps) {
    for (const gpu::Step& step : steps) {
      if (const auto* launch = std::get_if<gpu::KernelLaunch>(&step.call)) {
        const PreparedLaunch& ready = prepare(*launch);
        auto* kernel = ready.kernel;
        void** arguments = const_cast<void**>(ready.arguments.data());
        // The emulated grid's block size, or the launch's own (1-D blocks) when asked for.
        int threads = grid.threads_per_block;
        if (grid.artifact_block_size) {
          if (launch->block[1] != 1 || launch->block[2] != 1 || launch->block[0] % 32 != 0)
            throw std::runtime_error("emulator: kernel " + launch->entry +
                                     " has a block that is not 1-D in whole warps");
          threads = static_cast<int>(launch->block[0]);
        }
        if (!ready.synchronizing) {
          // No barrier and no shuffle: the threads are independent, and running them one after
          // another is one of the schedules a GPU may choose (no fibers, no switches).
          for (int block = 0; block < grid.blocks; ++block) {
            for (const auto& [memory, bytes] : shared_memory) std::memset(memory, 0xA5, bytes);
            for (int t = 0; t < threads; ++t) {
              current = {t, block, threads, grid.blocks};
              kernel(arguments);
            }
          }
          continue;
        }
        for (int block = 0; block < grid.blocks; ++block) {
          for (const auto& [memory, bytes] : shared_memory) std::memset(memory, 0xA5, bytes);
          std::vector<std::unique_ptr<WarpExchange>> block_warps;
          for (int w = 0; w < threads / 32; ++w)
            block_warps.push_back(std::make_unique<WarpExchange>());
          warps = &block_warps;
          FiberBarrier whole_block(threads);
          block_barrier = &whole_block;
          try {
            RunFiberBlock(
                threads,
                [&](int t) { current = {t, block, threads, grid.blocks}; },
                [&](int) { kernel(arguments); });
          } catch (const std::runtime_error& error) {
            throw std::runtime_error(std::string(error.what()) + " in kernel " + launch->entry);
          }
          warps = nullptr;
          block_barrier = nullptr;
        }
      } else if (const auto* matmul = std::get_if<gpu::MatmulCall>(&step.call)) {
        RunMatmul(*matmul, arena);
      } else if (const auto* conv = std::get_if<gpu::ConvCall>(&step.call)) {
        RunConv(*conv, arena);
      } else if (const auto* copy = std::get_if<gpu::DeviceCopy>(&step.call)) {
        std::memmove(&arena.at(copy->destination.offset), &arena.at(copy->source.offset),
                     copy->source.bytes);
      } else if (const auto* strided = std::get_if<gpu::StridedCopy>(&step.call)) {
        for (uint64_t row = 0; row < strided->rows; ++row) {
          std::memmove(&arena.at(strided->destination + row * strided->destination_pitch),
                       &arena.at(strided->source + row * strided->source_pitch),
                       strided->row_bytes);
        }
      } else if (const auto* fill = std::get_if<gpu::Fill>(&step.call)) {
        if (fill->destination.bytes > 0)
          std::memset(&arena.at(fill->destination.offset), fill->value, fill->destination.bytes);
      } else if (const auto* id = std::get_if<gpu::DeviceIdWrite>(&step.call)) {
        const uint32_t value =
            gpu::DeviceIdValue(*id, manifest.grid, device != nullptr ? device->device : 0);
        std::memcpy(&arena.at(id->destination.offset), &value, 4);
      } else if (const auto* collective = std::get_if<gpu::CollectiveCall>(&step.call)) {
        EmulateCollective(step.name, *collective, arena.data(), device);
      } else if (const auto* loop = std::get_if<gpu::WhileLoop>(&step.call)) {
        for (int64_t trip = 0;; ++trip) {
          run_steps(manifest.programs.at(loop->condition).steps);
          if (arena.at(loop->predicate.offset) == 0) break;
          if (trip >= max_trips) {
            throw std::runtime_error("the loop '" + step.name + "' (while) exceeded " +
                                     std::to_string(max_trips) + " iterations");
          }
          run_steps(manifest.programs.at(loop->body).steps);
        }
      } else if (const auto* conditional = std::get_if<gpu::Conditional>(&step.call)) {
        run_steps(manifest.programs
                        .at(gpu::SelectedBranch(*conditional,
                                                &arena.at(conditional->selector.offset)))
                        .steps);
      } else {
        throw std::runtime_error("emulator: step kind not emulated: " +
                                 std::string(gpu::StepKindName(step)));
      }
    }
  };
  run_steps(manifest.steps);

  std::vector<hlo::Literal> results;
  for (const gpu::TensorSlot& slot : manifest.results) {
    hlo::Shape shape;
    shape = hlo::Shape::Array(ToPrimitive(slot.dtype), slot.shape);
    hlo::Literal literal(shape);
    auto bytes = literal.mutable_bytes();
    if (bytes.size() != slot.slice.bytes) throw std::runtime_error("emulator: result size");
    if (!bytes.empty()) std::memcpy(bytes.data(), &arena.at(slot.slice.offset), bytes.size());
    results.push_back(std::move(literal));
  }
  return results;
}

}  // namespace gpu::emulator

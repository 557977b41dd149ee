// The CPU backend: compile (optimize, lower to thunks + LLVM kernels, O3, JIT) and run.
// See cpu_backend.h for the overall design and thunk_builder.h for what each op becomes.
#include "targets/cpu/cpu_backend.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <llvm/IR/StructuralHash.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Transforms/IPO/ConstantMerge.h>
#include <llvm/Transforms/Utils/FunctionComparator.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/memory/buffer_assignment.h"
#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "targets/cpu/aot.h"
#include "targets/cpu/jit.h"
#include "targets/cpu/kernel_cache.h"
#include "targets/cpu/parallel_codegen.h"
#include "targets/cpu/thunk_builder.h"
#include "targets/cpu/description.h"

namespace cpu {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw hlo::Error("cpu backend: cannot write " + path.string());
}

std::string FunctionText(const llvm::Function& function) {
  std::string text;
  llvm::raw_string_ostream os(text);
  function.print(os);
  return os.str();
}

// Verifies each kernel on its own so a failure names the kernel (and its HLO instruction);
// with a dump directory the broken kernel's IR is written there.
void VerifyKernels(const llvm::Module& module, const ThunkBuildResult& built,
                   const std::string& dump_dir) {
  std::vector<std::pair<std::string, std::string>> kernels;  // symbol, instruction
  for (const KernelThunk* kernel : built.kernels) kernels.emplace_back(kernel->symbol(), kernel->name());
  for (const auto& epilogue : built.tile_epilogues)
    kernels.emplace_back(epilogue->symbol, epilogue->symbol + " (a GEMM epilogue)");
  for (const auto& function : built.functions)
    kernels.emplace_back(function->symbol, function->symbol + " (a generated function)");
  for (const auto& [symbol, instruction] : kernels) {
    const llvm::Function* function = module.getFunction(symbol);
    if (function == nullptr) continue;
    std::string report;
    llvm::raw_string_ostream os(report);
    if (!llvm::verifyFunction(*function, &os)) continue;
    std::string where;
    if (!dump_dir.empty()) {
      std::filesystem::create_directories(dump_dir);
      std::filesystem::path path = std::filesystem::path(dump_dir) / (symbol + ".ll");
      WriteText(path, FunctionText(*function));
      where = "; its IR is in " + path.string();
    }
    throw hlo::Error("cpu backend: LLVM rejected kernel '" + symbol + "' for instruction '" +
                     instruction + "': " + os.str() + where);
  }
}

// Identical kernels (a ResNet has dozens of equal conv epilogues, gemma3's 26 layers repeat the
// same fusions) are compiled once: a kernel equal to an earlier one up to names (of itself, its
// values and blocks: LLVM's FunctionComparator) is deleted and its thunk calls the earlier
// symbol. Equal private constants are merged first (each fusion emits its own iota table), so
// kernels that read equal tables compare equal. Returns how many kernels were merged.
// The comparator was written for LLVM's MergeFunctions and has blind spots that pass is built
// around: it does not tell `ptr` from `i64` (so the function types are compared here too), and
// of metadata it compares only what loads carry (`!invariant.load`, the one kind the emitters
// set before this point; `llvm.loop` marks come later, in O3). An emitter that adds
// `!noalias`/`!alias.scope` or store metadata before merging must compare those itself.
int MergeIdenticalKernels(llvm::Module& module, ThunkBuildResult& built) {
  llvm::ModuleAnalysisManager no_analyses;
  llvm::ConstantMergePass().run(module, no_analyses);
  llvm::GlobalNumberState global_numbers;
  std::map<llvm::IRHash, std::vector<llvm::Function*>> kept_by_hash;
  int merged = 0;
  // Returns the symbol to call instead of `symbol` (itself when it is the first of its kind).
  auto merge = [&](const std::string& symbol) -> std::string {
    llvm::Function* function = module.getFunction(symbol);
    if (function == nullptr) return symbol;
    std::vector<llvm::Function*>& candidates = kept_by_hash[llvm::StructuralHash(*function)];
    for (llvm::Function* kept : candidates) {
      if (kept->getFunctionType() != function->getFunctionType() ||
          llvm::FunctionComparator(kept, function, &global_numbers).compare() != 0)
        continue;
      // A compiled loop calls kernels directly: it calls the kept one now.
      function->replaceAllUsesWith(kept);
      function->eraseFromParent();
      ++merged;
      return kept->getName().str();
    }
    candidates.push_back(function);
    return symbol;
  };
  for (KernelThunk* kernel : built.kernels) kernel->set_symbol(merge(kernel->symbol()));
  for (auto& epilogue : built.tile_epilogues) epilogue->symbol = merge(epilogue->symbol);
  return merged;
}

void DumpKernels(const llvm::Module& module, const ThunkBuildResult& built,
                 const std::string& dump_dir, const std::string& suffix) {
  std::filesystem::create_directories(dump_dir);
  std::vector<std::string> symbols;
  for (const KernelThunk* kernel : built.kernels) symbols.push_back(kernel->symbol());
  for (const auto& epilogue : built.tile_epilogues) symbols.push_back(epilogue->symbol);
  for (const std::string& symbol : symbols) {
    if (const llvm::Function* function = module.getFunction(symbol))
      WriteText(std::filesystem::path(dump_dir) / (symbol + suffix), FunctionText(*function));
  }
}

class CpuExecutable final : public targets::Executable {
 public:
  CpuExecutable(std::unique_ptr<hlo::Module> module, std::unique_ptr<ThunkSequence> entry,
                std::unique_ptr<Jit> jit, int threads, std::map<std::string, double> counters,
                std::map<std::string, std::string> artifacts)
      : module_(std::move(module)), entry_(std::move(entry)), jit_(std::move(jit)),
        pool_(std::make_unique<ThreadPool>(threads)), counters_(std::move(counters)),
        artifacts_(std::move(artifacts)) {
    // Storage for parameters whose layout is not row-major: those inputs are converted into it;
    // row-major inputs are used in place (no thunk writes a parameter buffer).
    std::vector<const ValueLayout*> leaves;
    for (const ValueLayout& p : entry_->parameters()) CollectLeaves(p, leaves);
    for (const ValueLayout* leaf : leaves) {
      const bool converted = leaf->shape.IsArray() && !leaf->shape.HasDefaultLayout() &&
                             leaf->shape.rank() > 1;
      parameter_storage_.push_back(
          converted ? std::make_unique<AlignedBytes>(ArrayByteSize(leaf->shape)) : nullptr);
    }
  }

  hlo::Literal Run(std::span<const hlo::Literal> inputs) override {
    return RunOn(inputs, nullptr);
  }
  hlo::Literal RunAsDevice(std::span<const hlo::Literal> inputs,
                           const hlo::DeviceView& device) override {
    return RunOn(inputs, &device);
  }

  hlo::Literal RunOn(std::span<const hlo::Literal> inputs, const hlo::DeviceView* device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto start = std::chrono::steady_clock::now();
    const std::vector<ValueLayout>& parameters = entry_->parameters();
    if (inputs.size() != parameters.size())
      throw hlo::Error("cpu backend: module '" + module_->name() + "' takes " +
                       std::to_string(parameters.size()) + " parameters, got " +
                       std::to_string(inputs.size()) + " inputs");
    std::vector<uint8_t*> leaf_pointers;
    inputs_in_place_.clear();
    for (size_t i = 0; i < inputs.size(); ++i) BindInput(parameters[i], inputs[i], leaf_pointers);
    entry_->BindParameters(leaf_pointers);
    RunContext context;
    context.pool = pool_.get();
    context.kernel_ms = &kernel_ms_;
    context.device = device;
    const ValueLayout& root = entry_->root();
    if (WritesRootInPlace(root)) {
      // Zero-copy result: the thunks write the root straight into the returned literal, every
      // byte of it (a value's producer defines all of it), so it is not zero-filled first.
      hlo::Literal result = hlo::Literal::ForOverwrite(root.shape);
      entry_->Redirect(root.buffer, result.mutable_bytes().data());
      try {
        entry_->Run(context);
      } catch (...) {
        entry_->Redirect(root.buffer, nullptr);
        throw;
      }
      entry_->Redirect(root.buffer, nullptr);
      CountRun(context);
      profile_.wall_ms = MillisecondsSince(start);
      return result;
    }
    entry_->Run(context);
    hlo::Literal result = ReadResult(entry_->root());
    CountRun(context);
    profile_.wall_ms = MillisecondsSince(start);
    return result;
  }

  void CountRun(const RunContext& context) {
    ++runs_;
    counters_["loops.compiled_runs"] += static_cast<double>(context.compiled_loops);
    counters_["loops.thunk_runs"] += static_cast<double>(context.thunk_loops);
    counters_["loops.callback_thunks"] += static_cast<double>(context.loop_callback_thunks);
  }

  targets::Profile profile() const override {
    targets::Profile profile = profile_;
    profile.counters = counters_;
    profile.counters["runs"] = static_cast<double>(runs_);
    // Per-thunk time, averaged over the runs so far.
    for (const auto& [name, ms] : kernel_ms_)
      profile.counters["kernel_ms." + name] = runs_ > 0 ? ms / static_cast<double>(runs_) : 0.0;
    return profile;
  }
  std::map<std::string, std::string> artifacts() const override { return artifacts_; }

 private:
  // An array root in an owned, non-constant buffer in the literal's (row-major) layout: every
  // thunk looks its buffers up when it runs, so lending it the result's memory is safe.
  bool WritesRootInPlace(const ValueLayout& root) const {
    if (!root.shape.IsArray() || root.buffer < 0) return false;
    if (!root.shape.HasDefaultLayout() && root.shape.rank() > 1) return false;
    return !entry_->is_bound(root.buffer) && !entry_->is_preset(root.buffer) &&
           entry_->owned_size(root.buffer) == ArrayByteSize(root.shape);
  }

  void BindInput(const ValueLayout& layout, const hlo::Literal& input,
                 std::vector<uint8_t*>& leaf_pointers) {
    if (!input.shape().Compatible(layout.shape))
      throw hlo::Error("cpu backend: input of shape " + input.shape().ToString(false) +
                       " does not match parameter shape " + layout.shape.ToString(false));
    if (layout.shape.IsTuple()) {
      for (size_t i = 0; i < layout.elements.size(); ++i)
        BindInput(layout.elements[i], input.elements()[i], leaf_pointers);
      return;
    }
    AlignedBytes* storage = parameter_storage_.at(leaf_pointers.size()).get();
    if (storage != nullptr) {
      LiteralToPhysical(input, layout.shape, storage->data());
      leaf_pointers.push_back(storage->data());
      return;
    }
    if (layout.shape.IsArray() &&
        static_cast<int64_t>(input.bytes().size()) != ArrayByteSize(layout.shape))
      throw hlo::Error("cpu backend: input of " + std::to_string(input.bytes().size()) +
                       " bytes for parameter shape " + layout.shape.ToString(false));
    // Literals are logical row-major, which is this buffer's layout: read it in place.
    leaf_pointers.push_back(const_cast<uint8_t*>(input.bytes().data()));
    inputs_in_place_[layout.buffer] = &input;
  }

  // The root as a new literal. A leaf that is an entry parameter read in place (a training
  // step's state passed through, ResNet-50's 100 MB of weights) is a copy of the caller's
  // input literal: one allocation and copy, without hlo::Literal(shape)'s zero-fill first.
  hlo::Literal ReadResult(const ValueLayout& value) const {
    if (value.shape.IsTuple()) {
      std::vector<hlo::Literal> elements;
      for (const ValueLayout& element : value.elements) elements.push_back(ReadResult(element));
      return hlo::Literal::Tuple(std::move(elements));
    }
    // Only when shapes and layouts agree: a reshape or bitcast of a parameter shares its buffer.
    if (auto it = inputs_in_place_.find(value.buffer);
        it != inputs_in_place_.end() && it->second->shape().Equal(value.shape))
      return *it->second;
    return ReadValue(*entry_, value);
  }

  std::unique_ptr<hlo::Module> module_;  // the optimized module the thunks point into
  std::unique_ptr<ThunkSequence> entry_;
  std::unique_ptr<Jit> jit_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::unique_ptr<AlignedBytes>> parameter_storage_;
  std::map<int64_t, const hlo::Literal*> inputs_in_place_;  // this run's bound leaves, by buffer
  std::map<std::string, double> counters_;
  std::map<std::string, std::string> artifacts_;
  std::map<std::string, double> kernel_ms_;
  int64_t runs_ = 0;
  targets::Profile profile_;
  std::mutex mutex_;
};

class CpuBackend final : public targets::Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "cpu"; }
  bool multi_device() const override { return true; }
  std::vector<std::string> emit_kinds() const override { return {"llvm", "obj"}; }
  // Native code on this machine: its wall time is the latency.
  targets::LatencySource latency_source() const override {
    return targets::LatencySource::kWallClock;
  }
  std::string description() const override {
    return "LLVM CPU backend: generated AVX-512 kernels (ORC JIT) + own GEMM/convolution";
  }

  // --emit llvm: the kernels' IR before O3 (OUT.ll), after it (OUT.opt.ll; on stdout without
  // -o). --emit obj: a relocatable object with `retarget_model_run` (OUT.o) and its header
  // (OUT.h); modules made only of generated kernels (aot.h), others an error naming the first
  // other instruction. --dump-dir D: each kernel's IR, written by the compile itself.
  targets::Emitted Emit(const hlo::Module& module, const std::string& kind,
                        const std::string& dump_dir) override {
    CpuBackendOptions options = options_;
    options.dump_dir = dump_dir;
    options.skip_jit = true;
    options.keep_ir = kind == "llvm";
    options.keep_object = kind == "obj";
    std::map<std::string, std::string> artifacts =
        CpuBackend(options).Compile(module)->artifacts();
    targets::Emitted emitted;
    if (kind == "llvm") {
      emitted.main = artifacts["kernels.ll"];
      emitted.to_stdout = artifacts["kernels.opt.ll"];
      emitted.beside.push_back({".ll", ".opt.ll", artifacts["kernels.opt.ll"]});
      return emitted;
    }
    if (artifacts.count("aot_error")) emitted.error = artifacts["aot_error"];
    emitted.needs_output = true;
    emitted.main = artifacts["kernels.o"];
    emitted.beside.push_back({".o", ".h", artifacts["model.h"]});
    return emitted;
  }

  std::unique_ptr<targets::Executable> Compile(const hlo::Module& input) override {
    auto start = std::chrono::steady_clock::now();
    std::map<std::string, double> counters;
    std::unique_ptr<hlo::Module> module = input.Clone();
    const compiler::TargetDescription& target = targets::CpuDescription();
    compiler::MakeTargetPipeline(target).Run(*module);
    counters["compile_ms.optimize"] = MillisecondsSince(start);

    compiler::BufferAssignment assignment = compiler::AssignBuffers(*module, target);
    counters["peak_bytes"] = static_cast<double>(assignment.peak_bytes());

    auto lower_start = std::chrono::steady_clock::now();
    auto context = std::make_unique<llvm::LLVMContext>();
    auto llvm_module = std::make_unique<llvm::Module>(module->name(), *context);
    ThunkBuilder builder(*llvm_module, nullptr);
    std::unique_ptr<ThunkSequence> entry = builder.Build(*module->entry(), assignment.schedule());
    ThunkBuildResult& built = builder.result();
    counters["compile_ms.lower"] = MillisecondsSince(lower_start);
    double entry_bytes = 0;  // the entry's own buffers (nested computations not counted)
    for (int64_t id = 0; id < entry->buffer_count(); ++id)
      entry_bytes += static_cast<double>(entry->owned_size(id));
    counters["buffer_bytes.entry"] = entry_bytes;
    for (const auto& [name, value] : built.counters) counters[name] = value;
    counters.try_emplace("thunks.fallback", 0.0);
    counters.try_emplace("thunks.kernel", 0.0);

    std::map<std::string, std::string> artifacts;
    std::string fallbacks;
    for (const std::string& reason : built.fallback_reasons) fallbacks += reason + "\n";
    artifacts["fallbacks.txt"] = fallbacks;

    VerifyKernels(*llvm_module, built, options_.dump_dir);
    counters["kernels.merged"] = MergeIdenticalKernels(*llvm_module, built);
    if (options_.keep_object) {
      // Emitted before O3 so the runner and the kernels are optimized together.
      try {
        EmitModelRunner(*llvm_module, *entry);
        artifacts["model.h"] = ModelRunnerHeader(*entry, module->name());
      } catch (const hlo::Error& error) {
        artifacts["aot_error"] = error.what();
      }
    }
    if (options_.keep_ir) artifacts["kernels.ll"] = ModuleToString(*llvm_module);
    if (!options_.dump_dir.empty()) DumpKernels(*llvm_module, built, options_.dump_dir, ".ll");

    auto llvm_start = std::chrono::steady_clock::now();
    const bool needs_jit =
        (!built.kernels.empty() || !built.tile_epilogues.empty() || !built.functions.empty()) &&
        !options_.skip_jit;
    std::unique_ptr<Jit> jit;
    if (options_.keep_ir || options_.keep_object || !options_.dump_dir.empty()) {
      // The artifacts need the whole module optimized as one.
      std::unique_ptr<llvm::TargetMachine> machine = MakeHostTargetMachine();
      OptimizeModule(*llvm_module, *machine);
      if (options_.keep_ir) artifacts["kernels.opt.ll"] = ModuleToString(*llvm_module);
      if (options_.keep_object) artifacts["kernels.o"] = EmitObjectFile(*llvm_module, *machine);
      if (!options_.dump_dir.empty())
        DumpKernels(*llvm_module, built, options_.dump_dir, ".opt.ll");
      if (needs_jit) {
        jit = std::make_unique<Jit>(std::move(llvm_module), std::move(context));
        BindKernels(*jit, built);
      }
    } else if (needs_jit) {
      jit = CompileKernels(*llvm_module, built, counters);
    }
    counters["compile_ms.llvm"] = MillisecondsSince(llvm_start);
    counters["compile_ms"] = MillisecondsSince(start);
    return std::make_unique<CpuExecutable>(std::move(module), std::move(entry), std::move(jit),
                                           options_.threads, std::move(counters),
                                           std::move(artifacts));
  }

 private:
  // Points every thunk at its compiled function.
  static void BindKernels(Jit& jit, ThunkBuildResult& built) {
    for (KernelThunk* kernel : built.kernels)
      kernel->set_function(reinterpret_cast<KernelFunction>(jit.Lookup(kernel->symbol())));
    for (auto& epilogue : built.tile_epilogues)
      epilogue->function = reinterpret_cast<TileFunction>(jit.Lookup(epilogue->symbol));
    for (auto& function : built.functions) function->address = jit.Lookup(function->symbol);
    for (WhileThunk* loop : built.compiled_loops)
      loop->set_compiled_function(
          reinterpret_cast<CompiledLoopFunction>(jit.Lookup(loop->compiled_symbol())));
  }

  // The kernels compiled on every core (parallel_codegen.h), or loaded from options_.cache_dir
  // when an earlier compile stored them under this IR's key; a fresh compile is stored there. A
  // cached entry that does not link is compiled again: a cache never fails a compile.
  std::unique_ptr<Jit> CompileKernels(llvm::Module& module, ThunkBuildResult& built,
                                      std::map<std::string, double>& counters) const {
    const KernelCache cache(options_.cache_dir);
    const bool cached = !options_.cache_dir.empty();
    const std::string key = cached ? CompiledObjectKey(module) : "kernels";
    if (cached) {
      counters["kernel_cache.hit"] = 0;
      if (std::optional<std::vector<std::string>> objects = cache.Find(key)) {
        try {
          auto jit = std::make_unique<Jit>(*objects, key);
          BindKernels(*jit, built);
          counters["kernel_cache.hit"] = 1;
          counters["kernels.object_files"] = static_cast<double>(objects->size());
          return jit;
        } catch (const hlo::Error&) {
          counters["kernel_cache.unusable"] = 1;
        }
      }
    }
    const std::vector<std::string> objects = CompileToObjects(module, options_.threads);
    counters["kernels.object_files"] = static_cast<double>(objects.size());
    if (cached) counters["kernel_cache.stored"] = cache.Store(key, objects) ? 1 : 0;
    auto jit = std::make_unique<Jit>(objects, key);
    BindKernels(*jit, built);
    return jit;
  }

  CpuBackendOptions options_;
};

}  // namespace

std::unique_ptr<targets::Backend> MakeCpuBackend(CpuBackendOptions options) {
  return std::make_unique<CpuBackend>(std::move(options));
}

}  // namespace cpu

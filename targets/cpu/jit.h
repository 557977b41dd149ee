// LLVM for the host CPU: a TargetMachine for this machine's CPU and features (AVX-512 where the
// CPU has it), the O3 pipeline, an ORC LLJIT that turns a module into callable kernels, and
// object-file emission for ahead-of-time use.
//
// Guarantees: every LLVM failure (verification, optimization, code generation, a missing
// symbol) becomes hlo::Error with LLVM's message; nothing here aborts the process on a bad
// module (the module is verified before it is optimized).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace cpu {

// Initializes LLVM's native target once per process.
void InitializeLlvmOnce();

// The host CPU's name and feature string ("sapphirerapids", "+avx512f,...").
std::string HostCpuName();
std::string HostCpuFeatures();

// A TargetMachine for the host at O3 (ownership with the caller).
std::unique_ptr<llvm::TargetMachine> MakeHostTargetMachine();

// Sets the module's triple and data layout from `machine`, verifies it (throwing hlo::Error
// with the verifier's report) and runs the default O3 pipeline, plus one pass before the loop
// vectorizer that marks loop-carried FP add/multiply (reductions) `reassoc` so they vectorize.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine);

// Writes `module` (already optimized) as a relocatable object file; returns its bytes.
std::string EmitObjectFile(llvm::Module& module, llvm::TargetMachine& machine);

std::string ModuleToString(const llvm::Module& module);

// What the object OptimizeModule + EmitObjectFile make of `module` (not yet optimized) depends
// on: a SHA-256 over its IR, this machine's CPU name and features, the LLVM version and the
// version of this file's pipeline (bumped whenever OptimizeModule or the target machine's
// settings change). The key of kernel_cache.h.
std::string CompiledObjectKey(const llvm::Module& module);

// An LLJIT holding one optimized module, or the object files compiled from one; Lookup returns a
// kernel's address.
class Jit {
 public:
  Jit(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context);
  // `objects`: EmitObjectFile's bytes for this machine (CompileToObjects' partitions, linked
  // together); `name` says where they came from.
  Jit(const std::vector<std::string>& objects, const std::string& name);
  void* Lookup(const std::string& name);

 private:
  void CreateWithRuntime();  // the LLJIT, process symbols and the runtime functions
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace cpu

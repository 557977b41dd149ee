// Host TargetMachine, O3 optimization, object emission and the ORC JIT (see jit.h).
#include "targets/cpu/jit.h"

#include <mutex>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include "hlo/diagnostic.h"
#include "targets/llvm/host_runtime.h"

namespace cpu {
namespace {

// `incoming` when it is the floating-point add/multiply that updates the accumulator `phi`
// (phi -> fadd/fmul -> phi); nullptr otherwise.
llvm::BinaryOperator* AccumulatorUpdate(const llvm::PHINode& phi, llvm::Value* incoming) {
  if (!phi.getType()->isFloatingPointTy()) return nullptr;
  auto* op = llvm::dyn_cast<llvm::BinaryOperator>(incoming);
  if (op == nullptr ||
      (op->getOpcode() != llvm::Instruction::FAdd && op->getOpcode() != llvm::Instruction::FMul))
    return nullptr;
  return op->getOperand(0) == &phi || op->getOperand(1) == &phi ? op : nullptr;
}

// Allows reassociation on exactly the floating-point add/multiply that carry a loop's
// accumulator (phi -> fadd -> phi): the reductions of generated kernels. LLVM's loop vectorizer
// vectorizes an FP reduction only when it may reorder it; everything else keeps IEEE order.
// Runs right before the vectorizer, when the emitter's accumulator allocas have become phis.
struct ReassociateReductions : llvm::PassInfoMixin<ReassociateReductions> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager&) {
    bool changed = false;
    for (llvm::BasicBlock& block : function) {
      for (llvm::PHINode& phi : block.phis()) {
        for (llvm::Value* incoming : phi.incoming_values()) {
          if (llvm::BinaryOperator* op = AccumulatorUpdate(phi, incoming)) {
            op->setHasAllowReassoc(true);
            changed = true;
          }
        }
      }
    }
    return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
  }
};

// Whether `loop`'s header carries a floating-point accumulator.
bool Accumulates(const llvm::Loop& loop) {
  for (const llvm::PHINode& phi : loop.getHeader()->phis()) {
    for (llvm::Value* incoming : phi.incoming_values())
      if (AccumulatorUpdate(phi, incoming) != nullptr) return true;
  }
  return false;
}

// Keeps an innermost reduction loop of kMinTrips to kMaxTrips constant trips rolled for the loop
// vectorizer: O3 fully unrolls short constant loops before vectorizing, and an unrolled
// accumulator chain stays scalar (a 32-element sum: 32 dependent adds instead of four vector
// adds and one horizontal step). Runs early, before LoopFullUnroll.
struct KeepReductionLoopsRolled : llvm::PassInfoMixin<KeepReductionLoopsRolled> {
  static constexpr unsigned kMinTrips = 16;
  // Longer loops are not fully unrolled anyway, and the mark would also stop the unrolling and
  // interleaving that serve them (a 1024-element mean ran 2x slower with it).
  static constexpr unsigned kMaxTrips = 64;
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses) {
    llvm::LoopInfo& loops = analyses.getResult<llvm::LoopAnalysis>(function);
    llvm::ScalarEvolution& evolution = analyses.getResult<llvm::ScalarEvolutionAnalysis>(function);
    bool changed = false;
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      if (!loop->isInnermost() || !Accumulates(*loop)) continue;
      const unsigned trips = evolution.getSmallConstantTripCount(loop);
      if (trips < kMinTrips || trips > kMaxTrips) continue;
      if (llvm::hasUnrollTransformation(loop) != llvm::TM_Unspecified) continue;
      // The operand 1 makes it true: LLVM reads the attribute as a boolean.
      llvm::addStringMetadataToLoop(loop, "llvm.loop.unroll.disable", 1);
      changed = true;
    }
    return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
  }
};

}  // namespace

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string HostCpuName() { return llvm::sys::getHostCPUName().str(); }

std::string HostCpuFeatures() {
  std::string features;
  for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty()) features += ",";
    features += enabled ? '+' : '-';
    features += name.str();
  }
  return features;
}

std::unique_ptr<llvm::TargetMachine> MakeHostTargetMachine() {
  InitializeLlvmOnce();
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) throw hlo::Error("cpu backend: no LLVM target for " + triple + ": " + error);
  llvm::TargetOptions options;  // IEEE semantics: no fast-math globally (hlo/ir.h)
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, HostCpuName(), HostCpuFeatures(), options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine) throw hlo::Error("cpu backend: cannot create an LLVM TargetMachine for " + triple);
  return machine;
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine) {
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
  std::string report;
  llvm::raw_string_ostream os(report);
  if (llvm::verifyModule(module, &os))
    throw hlo::Error("cpu backend: generated LLVM IR does not verify: " + os.str());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerVectorizerStartEPCallback(
      [](llvm::FunctionPassManager& passes, llvm::OptimizationLevel) {
        passes.addPass(ReassociateReductions());
      });
  builder.registerPeepholeEPCallback(
      [](llvm::FunctionPassManager& passes, llvm::OptimizationLevel) {
        passes.addPass(KeepReductionLoopsRolled());
      });
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
}

std::string EmitObjectFile(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw hlo::Error("cpu backend: this LLVM target cannot emit object files");
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

std::string ModuleToString(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return os.str();
}

namespace {
std::string TakeMessage(llvm::Error error) { return llvm::toString(std::move(error)); }
}  // namespace

// Bump when OptimizeModule, MakeHostTargetMachine, the partitioning of parallel_codegen.cc or the
// JIT's code generation settings change:
// objects cached under an older version are then never found again.
constexpr int kPipelineVersion = 2;

std::string CompiledObjectKey(const llvm::Module& module) {
  llvm::SHA256 hash;
  const std::string header = "retarget cpu object v" + std::to_string(kPipelineVersion) +
                             "\nllvm " LLVM_VERSION_STRING "\ncpu " + HostCpuName() + "\n" +
                             HostCpuFeatures() + "\n";
  hash.update(header);
  hash.update(ModuleToString(module));
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

Jit::Jit(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context) {
  CreateWithRuntime();
  module->setDataLayout(jit_->getDataLayout());
  if (llvm::Error error = jit_->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    throw hlo::Error("cpu backend: JIT rejected the module: " + TakeMessage(std::move(error)));
}

Jit::Jit(const std::vector<std::string>& objects, const std::string& name) {
  CreateWithRuntime();
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string part = name + "." + std::to_string(i) + ".o";
    if (llvm::Error error =
            jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(objects[i], part)))
      throw hlo::Error("cpu backend: JIT rejected the object " + part + ": " +
                       TakeMessage(std::move(error)));
  }
}

void Jit::CreateWithRuntime() {
  InitializeLlvmOnce();
  auto machine_builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine_builder)
    throw hlo::Error("cpu backend: " + TakeMessage(machine_builder.takeError()));
  machine_builder->setCPU(HostCpuName());
  machine_builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*machine_builder).create();
  if (!jit) throw hlo::Error("cpu backend: cannot create the JIT: " + TakeMessage(jit.takeError()));
  jit_ = std::move(*jit);
  // Generated code may call memcpy/memset (LLVM forms them from loops): resolve from the process.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit_->getDataLayout().getGlobalPrefix());
  if (!process) throw hlo::Error("cpu backend: " + TakeMessage(process.takeError()));
  jit_->getMainJITDylib().addGenerator(std::move(*process));
  // Runtime functions the C runtime may lack (targets/llvm/host_runtime.h).
  llvm::orc::SymbolMap runtime;
  runtime[jit_->mangleAndIntern("__truncsfbf2")] = {
      llvm::orc::ExecutorAddr::fromPtr(llvm_codegen::TruncSfBf2Address()),
      llvm::JITSymbolFlags::Exported};
  if (llvm::Error error =
          jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(runtime))))
    throw hlo::Error("cpu backend: " + TakeMessage(std::move(error)));
}

void* Jit::Lookup(const std::string& name) {
  auto address = jit_->lookup(name);
  if (!address)
    throw hlo::Error("cpu backend: kernel '" + name + "' failed to compile: " +
                     TakeMessage(address.takeError()));
  return address->toPtr<void*>();
}

}  // namespace cpu

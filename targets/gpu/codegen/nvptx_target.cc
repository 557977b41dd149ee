// NVPTX TargetMachine, optimization pipeline, PTX emission and ptxas (see nvptx_target.h).
#include "targets/gpu/codegen/nvptx_target.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>

#include "hlo/diagnostic.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace gpu::codegen {

std::unique_ptr<llvm::TargetMachine> MakeNvptxTargetMachine(const std::string& arch) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  if (!std::regex_match(arch, std::regex("sm_[0-9]{2,3}a?")))
    throw hlo::Error("gpu backend: unknown GPU architecture '" + arch + "' (expected sm_XX)");
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kNvptxTriple, error);
  if (target == nullptr) throw hlo::Error("gpu backend: LLVM has no NVPTX target: " + error);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(kNvptxTriple, "", ""));  // "" : no warning for an unknown arch
  if (!subtarget || !subtarget->isCPUStringValid(arch))
    throw hlo::Error("gpu backend: LLVM's NVPTX backend does not know '" + arch + "'");
  llvm::TargetOptions options;
  // PTX 7.8+ is what sm_90 needs; LLVM picks the lowest PTX version the arch allows.
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(kNvptxTriple, arch, "", options, std::nullopt, std::nullopt,
                                  llvm::CodeGenOptLevel::Aggressive));
  if (!machine) throw hlo::Error("gpu backend: cannot create an NVPTX target machine for " + arch);
  return machine;
}

std::optional<std::string> FindLibdevice() {
  if (const char* env = std::getenv("RETARGET_LIBDEVICE"); env != nullptr && *env != '\0')
    return std::filesystem::exists(env) ? std::optional<std::string>(env) : std::nullopt;
  const char* kToolkit = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  if (std::filesystem::exists(kToolkit)) return kToolkit;
  if (std::optional<std::string> ptxas = FindPtxas()) {
    const std::filesystem::path beside = std::filesystem::path(*ptxas).parent_path().parent_path() /
                                         "nvvm" / "libdevice" / "libdevice.10.bc";
    if (std::filesystem::exists(beside)) return beside.string();
  }
  return std::nullopt;
}

namespace {

// Links the libdevice functions `module` declares (LinkOnlyNeeded) and makes them internal.
void LinkLibdevice(llvm::Module& module) {
  std::string first;
  for (const llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().starts_with(kLibdevicePrefix)) {
      first = function.getName().str();
      break;
    }
  }
  if (first.empty()) return;
  const std::optional<std::string> path = FindLibdevice();
  if (!path) {
    throw hlo::Error("gpu backend: " + first.substr(std::strlen(kLibdevicePrefix)) +
                     " on f64 needs CUDA's libdevice (" +
                     first + "), which is not installed: set RETARGET_LIBDEVICE to " +
                     "libdevice.10.bc or install the CUDA toolkit");
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(*path);
  if (!file) throw hlo::Error("gpu backend: cannot read " + *path);
  llvm::Expected<std::unique_ptr<llvm::Module>> libdevice =
      llvm::parseBitcodeFile((*file)->getMemBufferRef(), module.getContext());
  if (!libdevice) {
    std::string message;
    llvm::handleAllErrors(libdevice.takeError(),
                          [&](const llvm::ErrorInfoBase& e) { message = e.message(); });
    throw hlo::Error("gpu backend: " + *path + " is not LLVM bitcode: " + message);
  }
  (*libdevice)->setTargetTriple(module.getTargetTriple());
  (*libdevice)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*libdevice), llvm::Linker::LinkOnlyNeeded))
    throw hlo::Error("gpu backend: linking " + *path + " failed");
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() && function.getName().starts_with(kLibdevicePrefix))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

}  // namespace

void OptimizeNvptxModule(llvm::Module& module, llvm::TargetMachine& machine) {
  module.setTargetTriple(kNvptxTriple);
  module.setDataLayout(machine.createDataLayout());
  LinkLibdevice(module);
  std::string report;
  llvm::raw_string_ostream os(report);
  if (llvm::verifyModule(module, &os))
    throw hlo::Error("gpu backend: generated LLVM IR does not verify: " + os.str());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
}

std::string EmitPtx(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw hlo::Error("gpu backend: the NVPTX target cannot emit PTX");
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return os.str();
}

std::optional<std::string> FindPtxas() {
  if (const char* env = std::getenv("RETARGET_PTXAS"); env != nullptr && *env != '\0')
    return std::filesystem::exists(env) ? std::optional<std::string>(env) : std::nullopt;
  if (std::filesystem::exists("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty() && std::filesystem::exists(dir + "/ptxas")) return dir + "/ptxas";
  }
  return std::nullopt;
}

std::map<std::string, PtxasKernelInfo> ParsePtxasLog(const std::string& log) {
  std::map<std::string, PtxasKernelInfo> kernels;
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  std::string current;
  std::stringstream lines(log);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, entry) || std::regex_search(line, m, properties)) {
      current = m[1];
      kernels[current];
    }
    if (current.empty()) continue;
    PtxasKernelInfo& info = kernels[current];
    if (std::regex_search(line, m, frame)) {
      info.stack_bytes = std::stoll(m[1]);
      info.spill_store_bytes = std::stoll(m[2]);
      info.spill_load_bytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, used)) info.registers = std::stoi(m[1]);
    if (std::regex_search(line, m, smem)) info.shared_bytes = std::stoll(m[1]);
  }
  return kernels;
}

PtxasResult RunPtxas(const std::string& ptxas, const std::string& ptx, const std::string& arch) {
  namespace fs = std::filesystem;
  std::string pattern = (fs::temp_directory_path() / "retarget-ptxas-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw hlo::Error("gpu backend: cannot create a temp dir");
  const fs::path dir = pattern;
  const fs::path input = dir / "kernels.ptx", output = dir / "kernels.cubin", log = dir / "log";
  { std::ofstream(input, std::ios::binary) << ptx; }
  // Arguments are our own paths and a validated arch: no user text reaches the shell.
  std::string command = "'" + ptxas + "' -arch=" + arch + " -v '" + input.string() + "' -o '" +
                        output.string() + "' > '" + log.string() + "' 2>&1";
  int status = std::system(command.c_str());
  PtxasResult result;
  {
    std::ifstream in(log, std::ios::binary);
    result.log.assign(std::istreambuf_iterator<char>(in), {});
  }
  if (status != 0 || !fs::exists(output)) {
    fs::remove_all(dir);
    throw hlo::Error("gpu backend: ptxas rejected the generated PTX: " + result.log);
  }
  {
    std::ifstream in(output, std::ios::binary);
    result.cubin.assign(std::istreambuf_iterator<char>(in), {});
  }
  fs::remove_all(dir);
  result.kernels = ParsePtxasLog(result.log);
  return result;
}

}  // namespace gpu::codegen

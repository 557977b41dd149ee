// Per-kernel .ll / .ptx dumps (see kernel_dumps.h).
#include "targets/gpu/codegen/kernel_dumps.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <map>
#include <sstream>

namespace gpu::codegen {
namespace {

// `module` with only `entry` defined: other kernels and their annotations removed, unused
// declarations and globals dropped.
std::string KernelModuleText(const llvm::Module& module, const std::string& entry) {
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> alone =
      llvm::CloneModule(module, map, [&](const llvm::GlobalValue* value) {
        return !llvm::isa<llvm::Function>(value) || value->getName() == entry;
      });
  if (llvm::NamedMDNode* annotations = alone->getNamedMetadata("nvvm.annotations")) {
    std::vector<llvm::MDNode*> kept;
    for (llvm::MDNode* node : annotations->operands()) {
      auto* value = node->getNumOperands() > 0
                        ? llvm::dyn_cast_or_null<llvm::ValueAsMetadata>(node->getOperand(0).get())
                        : nullptr;
      if (value != nullptr && value->getValue()->getName() == entry) kept.push_back(node);
    }
    annotations->clearOperands();
    for (llvm::MDNode* node : kept) annotations->addOperand(node);
  }
  // Declarations and globals nothing uses any more (other kernels' helpers and constants).
  for (bool erased = true; erased;) {
    erased = false;
    for (llvm::Function& function : llvm::make_early_inc_range(alone->functions()))
      if (function.isDeclaration() && function.use_empty()) {
        function.eraseFromParent();
        erased = true;
      }
    for (llvm::GlobalVariable& global : llvm::make_early_inc_range(alone->globals()))
      if (global.use_empty()) {
        global.eraseFromParent();
        erased = true;
      }
  }
  std::string text;
  llvm::raw_string_ostream out(text);
  alone->print(out, nullptr);
  return text;
}

// The PTX before the first entry (header and global data), and each entry's text from its
// `.visible .entry NAME(` line through the closing `}` at the start of a line.
struct PtxParts {
  std::string header;
  std::map<std::string, std::string> entries;
};

PtxParts SplitPtx(const std::string& ptx) {
  PtxParts parts;
  std::istringstream lines(ptx);
  std::string line, current, name;
  bool in_entry = false, seen_entry = false;
  const std::string marker = ".visible .entry ";
  while (std::getline(lines, line)) {
    if (!in_entry && line.rfind(marker, 0) == 0) {
      in_entry = seen_entry = true;
      name = line.substr(marker.size(), line.find('(') - marker.size());
      current = "\t// .globl\t" + name + "\n";
    }
    if (in_entry) {
      current += line + "\n";
      if (line.rfind("}", 0) == 0) {
        parts.entries[name] = current;
        in_entry = false;
      }
    } else if (!seen_entry && line.find("// .globl") == std::string::npos) {
      parts.header += line + "\n";
    }
  }
  return parts;
}

}  // namespace

std::vector<KernelDump> SplitKernelDumps(const GpuCompileResult& result) {
  std::vector<KernelDump> dumps;
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module;
  if (!result.llvm_ir.empty())
    module = llvm::parseIR(llvm::MemoryBufferRef(result.llvm_ir, "kernels"), diagnostic, context);
  const PtxParts ptx = SplitPtx(result.ptx);
  for (const KernelRecord& kernel : result.kernels) {
    KernelDump dump;
    dump.entry = kernel.entry;
    if (module && module->getFunction(kernel.entry) != nullptr)
      dump.llvm_ir = KernelModuleText(*module, kernel.entry);
    if (auto it = ptx.entries.find(kernel.entry); it != ptx.entries.end())
      dump.ptx = ptx.header + it->second;
    dumps.push_back(std::move(dump));
  }
  return dumps;
}

}  // namespace gpu::codegen

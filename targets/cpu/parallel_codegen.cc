// CompileToObjects (see parallel_codegen.h).
#include "targets/cpu/parallel_codegen.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/SplitModule.h>

#include "hlo/diagnostic.h"
#include "targets/cpu/jit.h"

namespace cpu {
namespace {

// A partition pays for its own bitcode round trip and TargetMachine (a few milliseconds), so
// small modules — most tests, most single-layer models — stay whole.
constexpr int kFunctionsPerPartition = 16;
// More partitions than cores balance uneven kernels across the workers; beyond this the
// per-partition cost outweighs the balance.
constexpr int kMaxPartitions = 8;

int DefinedFunctions(const llvm::Module& module) {
  int count = 0;
  for (const llvm::Function& function : module)
    if (!function.isDeclaration()) ++count;
  return count;
}

std::string Optimized(llvm::Module& module) {
  std::unique_ptr<llvm::TargetMachine> machine = MakeHostTargetMachine();
  OptimizeModule(module, *machine);
  return EmitObjectFile(module, *machine);
}

// Partition `index`'s object, compiled in an LLVMContext of its own (an LLVMContext is not
// thread-safe: the partitions cross threads as bitcode).
std::string CompilePartition(const std::string& bitcode, int index) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "partition" + std::to_string(index)), context);
  if (!module)
    throw hlo::Error("cpu backend: cannot read back kernel partition " + std::to_string(index) +
                     ": " + llvm::toString(module.takeError()));
  return Optimized(**module);
}

}  // namespace

int PartitionCount(int functions) {
  return std::clamp(functions / kFunctionsPerPartition, 1, kMaxPartitions);
}

std::vector<std::string> CompileToObjects(llvm::Module& module, int threads) {
  InitializeLlvmOnce();
  const int partitions = PartitionCount(DefinedFunctions(module));
  if (partitions == 1) return {Optimized(module)};

  // Verified whole first, so an error is reported against the module the backend generated
  // rather than against a partition of it.
  std::string report;
  llvm::raw_string_ostream os(report);
  if (llvm::verifyModule(module, &os))
    throw hlo::Error("cpu backend: generated LLVM IR does not verify: " + os.str());

  std::vector<std::string> bitcode;
  llvm::SplitModule(
      module, static_cast<unsigned>(partitions),
      [&](std::unique_ptr<llvm::Module> part) {
        std::string bytes;
        llvm::raw_string_ostream out(bytes);
        llvm::WriteBitcodeToFile(*part, out);
        out.flush();
        bitcode.push_back(std::move(bytes));
      },
      /*PreserveLocals=*/true, /*RoundRobin=*/true);

  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int workers = std::min(threads, static_cast<int>(bitcode.size()));
  std::vector<std::string> objects(bitcode.size());
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&] {
    for (size_t index = next++; index < bitcode.size(); index = next++) {
      try {
        objects[index] = CompilePartition(bitcode[index], static_cast<int>(index));
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started and this one share the partitions.
  }
  work();
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  return objects;
}

}  // namespace cpu

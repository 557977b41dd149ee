// The JIT harness: see jit_harness.h.
#include "tests/llvm/jit_harness.h"

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "targets/llvm/elemental_emitter.h"

namespace llvm_test {
namespace {

// Physical element offset of the row-major element `linear` of `shape`.
int64_t PhysicalOffset(const hlo::Shape& shape, int64_t linear) {
  const std::vector<int64_t> strides = hlo::RowMajorStrides(shape.dims);
  std::vector<int64_t> index(shape.dims.size());
  for (size_t d = 0; d < shape.dims.size(); ++d) index[d] = (linear / strides[d]) % shape.dims[d];
  int64_t offset = 0, stride = 1;
  for (int64_t dim : shape.EffectiveMinorToMajor()) {
    offset += index[static_cast<size_t>(dim)] * stride;
    stride *= shape.dims[static_cast<size_t>(dim)];
  }
  return offset;
}

// One JIT for the process (creating a target machine per run costs more than compiling a small
// function); each run adds its module under a fresh function name.
llvm::orc::LLJIT& SharedJit() {
  static std::unique_ptr<llvm::orc::LLJIT> jit = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto created = llvm::orc::LLJITBuilder().create();
    if (!created) throw hlo::Error("LLJIT: " + llvm::toString(created.takeError()));
    return std::move(*created);
  }();
  return *jit;
}
std::mutex jit_mutex;
int64_t next_function = 0;

// The host's target machine, so the optimizer knows the vector width (the loop vectorizer
// needs it) and the same CPU features the JIT compiles for.
llvm::TargetMachine* HostTargetMachine() {
  static std::unique_ptr<llvm::TargetMachine> machine = [] {
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) throw hlo::Error("host target: " + llvm::toString(builder.takeError()));
    auto created = builder->createTargetMachine();
    if (!created) throw hlo::Error("host target: " + llvm::toString(created.takeError()));
    return std::move(*created);
  }();
  return machine.get();
}

void Optimize(llvm::Module& module) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(HostTargetMachine());
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(module, mam);
}

std::string ToString(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

std::vector<uint8_t> ToPhysical(const hlo::Literal& literal, const hlo::Shape& shape) {
  const int64_t size = hlo::ByteSize(shape.type);
  std::vector<uint8_t> bytes(literal.bytes().size());
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    std::memcpy(bytes.data() + PhysicalOffset(shape, i) * size, literal.bytes().data() + i * size,
                static_cast<size_t>(size));
  }
  return bytes;
}

hlo::Literal FromPhysical(std::span<const uint8_t> bytes, const hlo::Shape& shape) {
  hlo::Literal literal(shape);
  const int64_t size = hlo::ByteSize(shape.type);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    std::memcpy(literal.mutable_bytes().data() + i * size,
                bytes.data() + PhysicalOffset(shape, i) * size, static_cast<size_t>(size));
  }
  return literal;
}

hlo::Literal RunComputation(const hlo::Computation& computation,
                            std::span<const hlo::Literal> arguments, const JitOptions& options) {
  std::lock_guard<std::mutex> lock(jit_mutex);
  llvm::orc::LLJIT& jit = SharedJit();
  const std::string function_name = "f" + std::to_string(next_function++);
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("jit_harness", *context);
  llvm::IRBuilder<> b(*context);
  llvm::Type* pointer = b.getPtrTy();
  llvm::Function* function =
      llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {pointer}, false),
                             llvm::Function::ExternalLinkage, function_name, module.get());
  b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", function));
  llvm::Value* buffers = function->getArg(0);
  auto buffer = [&](int64_t i) {
    return b.CreateLoad(pointer,
                        b.CreateConstInBoundsGEP1_64(pointer, buffers, static_cast<uint64_t>(i)));
  };

  const int64_t parameter_count = computation.parameter_count();
  if (static_cast<int64_t>(arguments.size()) != parameter_count) {
    throw hlo::Error("expected " + std::to_string(parameter_count) + " arguments, got " +
                     std::to_string(arguments.size()));
  }
  std::vector<llvm_codegen::ElementGenerator> parameters;
  for (int64_t i = 0; i < parameter_count; ++i) {
    llvm_codegen::IrArray array(buffer(i), computation.parameter(i)->shape());
    array.set_read_only(true);
    parameters.push_back(
        [&b, array](const llvm_codegen::IrIndex& index) { return array.EmitLoad(b, index); });
  }
  std::vector<const hlo::Shape*> outputs;
  hlo::FlattenShape(computation.root()->shape(), outputs);

  llvm_codegen::ElementalEmitter emitter(b, *module);
  std::vector<llvm_codegen::ElementGenerator> generators =
      emitter.MakeComputationGenerators(computation, parameters);
  for (size_t k = 0; k < outputs.size(); ++k) {
    llvm_codegen::IrArray out(buffer(parameter_count + static_cast<int64_t>(k)), *outputs[k]);
    // One scalar loop over physical positions (exercises DelinearizeIndex with the layout).
    llvm::BasicBlock* preheader = b.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(*context, "out.header", function);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(*context, "out.body", function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(*context, "out.exit", function);
    b.CreateBr(header);
    b.SetInsertPoint(header);
    llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
    i->addIncoming(b.getInt64(0), preheader);
    b.CreateCondBr(
        b.CreateICmpSLT(i, b.getInt64(static_cast<uint64_t>(outputs[k]->ElementCount()))), body,
        exit);
    b.SetInsertPoint(body);
    llvm_codegen::IrIndex index = out.DelinearizeIndex(b, i);
    out.EmitStore(b, index, generators[k](index));
    i->addIncoming(b.CreateAdd(i, b.getInt64(1)), b.GetInsertBlock());
    b.CreateBr(header);
    b.SetInsertPoint(exit);
  }
  b.CreateRetVoid();

  if (options.ir_out != nullptr) {
    llvm::raw_string_ostream stream(*options.ir_out);
    module->print(stream, nullptr);
  }
  // Debugging aid: RETARGET_JIT_DUMP_DIR=dir writes every module's IR as dir/<function>.ll.
  if (const char* dump_dir = std::getenv("RETARGET_JIT_DUMP_DIR")) {
    std::error_code error;
    llvm::raw_fd_ostream file(std::string(dump_dir) + "/" + function_name + ".ll", error);
    if (!error) module->print(file, nullptr);
  }
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(*module, &problem_stream))
    throw hlo::Error("invalid LLVM IR: " + problems);

  module->setDataLayout(jit.getDataLayout());
  module->setTargetTriple(jit.getTargetTriple().str());
  if (options.optimize) Optimize(*module);
  if (options.optimized_ir_out != nullptr) {
    llvm::raw_string_ostream stream(*options.optimized_ir_out);
    module->print(stream, nullptr);
  }
  if (auto error =
          jit.addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    throw hlo::Error("LLJIT: " + ToString(std::move(error)));
  }
  auto symbol = jit.lookup(function_name);
  if (!symbol) throw hlo::Error("LLJIT: " + ToString(symbol.takeError()));
  auto* entry = symbol->toPtr<void (*)(void**)>();

  std::vector<std::vector<uint8_t>> storage;
  for (int64_t i = 0; i < parameter_count; ++i) {
    const hlo::Shape& shape = computation.parameter(i)->shape();
    const hlo::Literal& argument = arguments[static_cast<size_t>(i)];
    if (!argument.shape().IsArray() || argument.shape().type != shape.type ||
        argument.shape().dims != shape.dims) {
      throw hlo::Error("argument " + std::to_string(i) + " has shape " +
                       argument.shape().ToString() + ", expected " + shape.ToString());
    }
    storage.push_back(ToPhysical(argument, shape));
  }
  for (const hlo::Shape* shape : outputs) {
    storage.emplace_back(static_cast<size_t>(shape->ElementCount() * hlo::ByteSize(shape->type)));
  }
  std::vector<void*> pointers;
  for (auto& bytes : storage) pointers.push_back(bytes.data());
  const auto start = std::chrono::steady_clock::now();
  entry(pointers.data());
  if (options.run_seconds != nullptr) {
    *options.run_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  std::vector<hlo::Literal> results;
  for (size_t k = 0; k < outputs.size(); ++k) {
    results.push_back(FromPhysical(storage[static_cast<size_t>(parameter_count) + k], *outputs[k]));
  }
  if (!computation.root()->shape().IsTuple()) return std::move(results[0]);
  return hlo::Literal::Tuple(std::move(results));
}

hlo::Literal RunEntry(const hlo::Module& module, std::span<const hlo::Literal> arguments,
                      const JitOptions& options) {
  return RunComputation(*module.entry(), arguments, options);
}

int64_t UlpDistance(hlo::PrimitiveType type, double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int64_t>::max();
  // Each value as a signed magnitude in the type's bit order (-0 and +0 both map to 0).
  auto key = [type](double v) -> __int128 {
    uint64_t bits = 0;
    int width = 64;
    switch (type) {
      case hlo::PrimitiveType::kF64:
        bits = std::bit_cast<uint64_t>(v);
        break;
      case hlo::PrimitiveType::kF32:
        bits = std::bit_cast<uint32_t>(static_cast<float>(v));
        width = 32;
        break;
      case hlo::PrimitiveType::kBF16:
        bits = hlo::FloatToBF16(static_cast<float>(v));
        width = 16;
        break;
      case hlo::PrimitiveType::kF16:
        bits = hlo::FloatToF16(static_cast<float>(v));
        width = 16;
        break;
      default:
        return static_cast<__int128>(v);
    }
    const uint64_t sign = uint64_t{1} << (width - 1);
    const __int128 magnitude = static_cast<__int128>(bits & (sign - 1));
    return (bits & sign) ? -magnitude : magnitude;
  };
  __int128 distance = key(a) - key(b);
  if (distance < 0) distance = -distance;
  return distance > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max()
                                                        : static_cast<int64_t>(distance);
}

}  // namespace llvm_test

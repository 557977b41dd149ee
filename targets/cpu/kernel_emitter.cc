// Loop-nest kernels around the elemental emitter (see kernel_emitter.h).
#include "targets/cpu/kernel_emitter.h"

#include <llvm/IR/IRBuilder.h>

#include "targets/cpu/buffers.h"

namespace cpu {

using llvm_codegen::ElementGenerator;
using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

void EmitCopyUnlessInPlace(llvm::IRBuilder<>& b, const IrArray& from, const IrArray& to,
                           const hlo::Shape& shape) {
  EmitIf(b, b.CreateICmpNE(from.base(), to.base()), "copy", [&] {
    // Element alignment only: an entry parameter is the caller's literal memory.
    const llvm::MaybeAlign align(static_cast<uint64_t>(hlo::ByteSize(shape.type)));
    b.CreateMemCpy(to.base(), align, from.base(), align,
                   b.getInt64(static_cast<uint64_t>(ArrayByteSize(shape))));
  });
}

int64_t OuterRows(const hlo::Shape& shape) {
  if (shape.rank() == 0) return 1;
  return shape.dims[static_cast<size_t>(shape.EffectiveMinorToMajor().back())];
}

int64_t ElementsPerRow(const hlo::Shape& shape) {
  int64_t rows = OuterRows(shape);
  return rows == 0 ? 0 : shape.ElementCount() / rows;
}

size_t LoopKernelSplitLevel(const hlo::Shape& iteration) {
  const std::vector<int64_t> minor_to_major = iteration.EffectiveMinorToMajor();
  for (size_t level = 0; level < minor_to_major.size(); ++level) {
    const int64_t dim = minor_to_major[minor_to_major.size() - 1 - level];
    if (iteration.dims[static_cast<size_t>(dim)] != 1) return level;
  }
  return 0;
}

int64_t LoopKernelRows(const hlo::Shape& iteration) {
  if (iteration.rank() == 0) return 1;
  const std::vector<int64_t> minor_to_major = iteration.EffectiveMinorToMajor();
  const size_t level = LoopKernelSplitLevel(iteration);
  return iteration.dims[static_cast<size_t>(minor_to_major[minor_to_major.size() - 1 - level])];
}

int64_t LoopKernelElementsPerRow(const hlo::Shape& iteration) {
  const int64_t rows = LoopKernelRows(iteration);
  return rows == 0 ? 0 : iteration.ElementCount() / rows;
}

std::string KernelSymbol(const llvm::Module& module, const std::string& hlo_name,
                         const std::string& prefix) {
  std::string base = prefix;
  for (char c : hlo_name) base += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  std::string symbol = base;
  for (int n = 1; module.getFunction(symbol) != nullptr; ++n) symbol = base + "_" + std::to_string(n);
  return symbol;
}

KernelPrologue BeginKernelFunction(llvm::IRBuilder<>& b, llvm::Module& module,
                                   const std::string& name,
                                   const std::vector<hlo::Shape>& operands,
                                   const std::vector<hlo::Shape>& outputs, int index_arguments) {
  llvm::Type* ptr = b.getPtrTy();
  std::vector<llvm::Type*> parameters = {ptr};
  for (int i = 0; i < index_arguments; ++i) parameters.push_back(b.getInt64Ty());
  auto* type = llvm::FunctionType::get(b.getVoidTy(), parameters, false);
  KernelPrologue kernel;
  kernel.function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  kernel.function->addFnAttr(llvm::Attribute::NoUnwind);
  kernel.function->addParamAttr(0, llvm::Attribute::NoAlias);
  // LLVM prefers 256-bit vectors on AVX-512 hosts; kernels are loops that run hot, where full
  // width doubles the arithmetic per instruction (layer_norm's row kernel 2.8 -> 2.4 ms; the
  // exact GELU's loop kernel below).
  kernel.function->addFnAttr("prefer-vector-width", "512");
  llvm::Argument* buffers = kernel.function->getArg(0);
  buffers->setName("buffers");
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", kernel.function));
  auto load_base = [&](size_t slot) {
    llvm::Value* address = b.CreateConstInBoundsGEP1_64(ptr, buffers, slot);
    return b.CreateLoad(ptr, address, "buffer" + std::to_string(slot));
  };
  for (size_t i = 0; i < operands.size(); ++i) {
    kernel.operands.emplace_back(load_base(i), operands[i]);
    kernel.operands.back().set_read_only(true);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    kernel.outputs.emplace_back(load_base(operands.size() + i), outputs[i]);
  return kernel;
}

std::vector<ElementGenerator> OperandLoads(llvm::IRBuilder<>& b,
                                           const std::vector<IrArray>& operands) {
  std::vector<ElementGenerator> loads;
  for (const IrArray& operand : operands)
    loads.push_back([&b, operand](const IrIndex& index) { return operand.EmitLoad(b, index); });
  return loads;
}

namespace {

// The function, its arrays and its generators: what the tile kernel starts with.
struct KernelFrame {
  llvm::Function* function = nullptr;
  std::vector<IrArray> outputs;
  std::vector<ElementGenerator> generators;
};

KernelFrame BeginKernel(llvm::IRBuilder<>& b, llvm::Module& module, const LoopKernelSpec& spec,
                        const GeneratorFactory& make_outputs, int index_arguments,
                        llvm_codegen::ElementalEmitter& emitter) {
  KernelPrologue kernel =
      BeginKernelFunction(b, module, spec.name, spec.operands, spec.outputs, index_arguments);
  KernelFrame frame;
  frame.function = kernel.function;
  frame.outputs = std::move(kernel.outputs);
  frame.generators = make_outputs(emitter, OperandLoads(b, kernel.operands));
  if (frame.generators.size() != frame.outputs.size())
    throw hlo::Error("cpu backend: kernel " + spec.name + " has " +
                     std::to_string(frame.generators.size()) + " generators for " +
                     std::to_string(frame.outputs.size()) + " outputs");
  return frame;
}

void StoreAll(llvm::IRBuilder<>& b, KernelFrame& frame, const IrIndex& index) {
  std::vector<llvm::Value*> values;
  for (const ElementGenerator& generator : frame.generators) values.push_back(generator(index));
  for (size_t i = 0; i < frame.outputs.size(); ++i) frame.outputs[i].EmitStore(b, index, values[i]);
}

}  // namespace

void EmitTileKernel(llvm::Module& module, const LoopKernelSpec& spec,
                    const GeneratorFactory& make_outputs) {
  llvm::IRBuilder<> b(module.getContext());
  llvm_codegen::ElementalEmitter emitter(b, module);
  KernelFrame frame = BeginKernel(b, module, spec, make_outputs, 4, emitter);
  llvm::Value* row = frame.function->getArg(1);
  llvm::Value* rows = frame.function->getArg(2);
  llvm::Value* col = frame.function->getArg(3);
  llvm::Value* cols = frame.function->getArg(4);
  const hlo::Shape& shape = spec.outputs.at(0);
  if (shape.rank() == 0 || !shape.HasDefaultLayout())
    throw hlo::Error("cpu backend: tile kernel " + spec.name + " needs a row-major array");
  const size_t last = static_cast<size_t>(shape.rank() - 1);
  EmitForLoop(b, row, b.CreateAdd(row, rows), "row", [&](llvm::Value* r) {
    // Row r of the matrix view -> indices of all dimensions but the last (row-major).
    IrIndex index(last + 1, nullptr);
    llvm::Value* rest = r;
    for (size_t d = last; d-- > 0;) {
      llvm::Value* extent = b.getInt64(shape.dims[d]);
      index[d] = b.CreateURem(rest, extent);
      rest = b.CreateUDiv(rest, extent);
    }
    EmitForLoop(b, col, b.CreateAdd(col, cols), "col", [&](llvm::Value* c) {
      index[last] = c;
      StoreAll(b, frame, index);
    });
  });
  b.CreateRetVoid();
}

void EmitLoopKernel(llvm::Module& module, const LoopKernelSpec& spec,
                    const GeneratorFactory& make_outputs) {
  llvm::IRBuilder<> b(module.getContext());
  KernelPrologue kernel = BeginKernelFunction(b, module, spec.name, spec.operands, spec.outputs,
                                              /*index_arguments=*/2);
  llvm::Argument* begin = kernel.function->getArg(1);
  llvm::Argument* end = kernel.function->getArg(2);
  begin->setName("begin");
  end->setName("end");
  const std::vector<IrArray>& outputs = kernel.outputs;

  llvm_codegen::ElementalEmitter emitter(b, module);
  std::vector<ElementGenerator> generators =
      make_outputs(emitter, OperandLoads(b, kernel.operands));
  if (generators.size() != outputs.size())
    throw hlo::Error("cpu backend: kernel " + spec.name + " has " +
                     std::to_string(generators.size()) + " generators for " +
                     std::to_string(outputs.size()) + " outputs");

  const hlo::Shape& iteration = spec.iteration ? *spec.iteration : spec.outputs.at(0);
  // Physical dimensions, major first: the split level's loop takes [begin, end) (the size-1
  // dimensions above it are index 0), the others run fully.
  std::vector<int64_t> minor_to_major = iteration.EffectiveMinorToMajor();
  std::vector<int64_t> major_first(minor_to_major.rbegin(), minor_to_major.rend());
  const size_t split = LoopKernelSplitLevel(iteration);
  IrIndex index(static_cast<size_t>(iteration.rank()), nullptr);

  std::function<void(size_t)> nest = [&](size_t level) {
    if (level == major_first.size()) {
      std::vector<llvm::Value*> values;
      for (const ElementGenerator& generator : generators) values.push_back(generator(index));
      IrIndex at = index;
      if (spec.offset_dim >= 0) {
        auto d = static_cast<size_t>(spec.offset_dim);
        at[d] = b.CreateAdd(at[d], b.getInt64(spec.offset), "", /*HasNUW=*/true, /*HasNSW=*/true);
      }
      for (size_t i = 0; i < outputs.size(); ++i) outputs[i].EmitStore(b, at, values[i]);
      return;
    }
    const int64_t dim = major_first[level];
    if (level < split) {  // extent 1
      index[static_cast<size_t>(dim)] = b.getInt64(0);
      nest(level + 1);
      return;
    }
    llvm::Value* lo = level == split ? static_cast<llvm::Value*>(begin) : b.getInt64(0);
    llvm::Value* hi = level == split ? static_cast<llvm::Value*>(end)
                                     : b.getInt64(iteration.dims[static_cast<size_t>(dim)]);
    std::string loop_name = "d";
    loop_name += std::to_string(dim);
    EmitForLoop(b, lo, hi, loop_name, [&](llvm::Value* i) {
      index[static_cast<size_t>(dim)] = i;
      nest(level + 1);
    });
  };
  if (major_first.empty()) {
    // A scalar: one element, computed when the range covers row 0.
    EmitForLoop(b, begin, end, "scalar", [&](llvm::Value*) { nest(0); });
  } else {
    nest(0);
  }
  b.CreateRetVoid();
}

}  // namespace cpu

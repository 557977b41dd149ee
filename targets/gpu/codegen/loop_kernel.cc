// Grid-stride loop kernels for NVPTX (see loop_kernel.h).
#include "targets/gpu/codegen/loop_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/kernel_ir.h"
#include "targets/gpu/codegen/nvptx_target.h"

namespace gpu::codegen {

using llvm_codegen::ElementGenerator;
using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

llvm::Value* GpuElementalEmitter::EmitLibmCallF64(const std::string& name,
                                                  std::vector<llvm::Value*> arguments) {
  return ElementalEmitter::EmitLibmCallF64(std::string(kLibdevicePrefix) + name,
                                           std::move(arguments));
}

std::string KernelSymbol(const llvm::Module& module, const std::string& hlo_name) {
  std::string base = "k_";
  for (char c : hlo_name) base += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  std::string symbol = base;
  for (int n = 1; module.getFunction(symbol) != nullptr; ++n)
    symbol = base + "_" + std::to_string(n);
  return symbol;
}

llvm::Value* ReadSpecialRegister(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id) {
  llvm::Function* read = llvm::Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), id);
  return b.CreateZExt(b.CreateCall(read), b.getInt64Ty());
}

LaunchIds ReadLaunchIds(llvm::IRBuilder<>& b) {
  LaunchIds ids;
  ids.thread = ReadSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  ids.block = ReadSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  ids.block_size = ReadSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  ids.grid_size = ReadSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  return ids;
}

void MarkKernel(llvm::Module& module, llvm::Function* function) {
  function->setCallingConv(llvm::CallingConv::PTX_Kernel);
  llvm::LLVMContext& context = module.getContext();
  llvm::Metadata* fields[] = {
      llvm::ValueAsMetadata::get(function), llvm::MDString::get(context, "kernel"),
      llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))};
  module.getOrInsertNamedMetadata("nvvm.annotations")
      ->addOperand(llvm::MDNode::get(context, fields));
}

llvm::Function* BeginKernel(llvm::IRBuilder<>& b, llvm::Module& module, const std::string& entry,
                            size_t parameter_count, std::vector<llvm::Value*>& global_params) {
  auto* type = llvm::FunctionType::get(
      b.getVoidTy(), std::vector<llvm::Type*>(parameter_count, b.getPtrTy()), false);
  auto* function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, entry, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  MarkKernel(module, function);
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", function));
  global_params.clear();
  for (size_t slot = 0; slot < parameter_count; ++slot)
    global_params.push_back(b.CreateAddrSpaceCast(function->getArg(static_cast<unsigned>(slot)),
                                                  b.getPtrTy(1), "param" + std::to_string(slot)));
  return function;
}

std::vector<IrArray> ReadOnlyOperandArrays(const std::vector<llvm::Value*>& global_params,
                                           const std::vector<hlo::Shape>& operand_shapes) {
  std::vector<IrArray> operands;
  for (size_t i = 0; i < operand_shapes.size(); ++i) {
    operands.emplace_back(global_params[i], operand_shapes[i]);
    operands.back().set_read_only(true);
  }
  return operands;
}

LaunchDimensions ChooseLaunchDimensions(int64_t work_items, const DeviceLimits& device) {
  LaunchDimensions dims;
  dims.block = static_cast<uint32_t>(device.threads_per_block);
  const int64_t blocks_to_fill =
      int64_t{device.sm_count} * (device.max_threads_per_sm / device.threads_per_block);
  const int64_t blocks_needed =
      (work_items + device.threads_per_block - 1) / device.threads_per_block;
  dims.grid = static_cast<uint32_t>(std::clamp<int64_t>(blocks_needed, 1, blocks_to_fill));
  return dims;
}

namespace {

constexpr int kVectorWidth = 4;

bool SameDimsAndLayout(const hlo::Shape& a, const hlo::Shape& b) {
  return a.dims == b.dims && a.EffectiveMinorToMajor() == b.EffectiveMinorToMajor();
}

bool CanVectorize(const LoopKernelSpec& spec) {
  const hlo::Shape& first = spec.outputs.at(0);
  if (first.rank() == 0) return false;
  const int64_t minor = first.EffectiveMinorToMajor().front();
  if (first.dims[static_cast<size_t>(minor)] % kVectorWidth != 0) return false;
  for (const hlo::Shape& output : spec.outputs) {
    const int bytes = hlo::ByteSize(output.type);
    if (output.type == hlo::PrimitiveType::kPred || (bytes != 2 && bytes != 4 && bytes != 8))
      return false;
    if (!SameDimsAndLayout(output, first)) return false;
  }
  return true;
}

// The 4-wide loads of one iteration, filled at the top of the loop body; operand generators
// answer from them when asked for one of the iteration's 4 indices.
struct VectorIteration {
  std::array<IrIndex, kVectorWidth> indices;
  std::vector<llvm::Value*> operand_vectors;  // nullptr: the operand is read element by element
};

bool SameIndex(const IrIndex& a, const IrIndex& b) { return a == b; }

}  // namespace

LoopKernelPlan EmitLoopKernel(llvm::Module& module, const LoopKernelSpec& spec,
                              const GeneratorFactory& make_outputs) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  const size_t parameter_count = spec.operands.size() + spec.outputs.size();
  std::vector<llvm::Value*> params;
  llvm::Function* function = BeginKernel(b, module, spec.entry, parameter_count, params);
  auto global_base = [&](size_t slot) { return params[slot]; };
  std::vector<IrArray> operands, outputs;
  for (size_t i = 0; i < spec.operands.size(); ++i) {
    operands.emplace_back(global_base(i), spec.operands[i]);
    const bool may_alias =
        i < spec.operand_may_alias_output.size() && spec.operand_may_alias_output[i];
    operands.back().set_read_only(!may_alias);
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i)
    outputs.emplace_back(global_base(spec.operands.size() + i), spec.outputs[i]);

  const hlo::Shape& shape = spec.outputs.at(0);
  LoopKernelPlan plan;
  plan.elements_per_thread = CanVectorize(spec) ? kVectorWidth : 1;
  plan.work_items = shape.ElementCount() / plan.elements_per_thread;

  auto iteration = std::make_shared<VectorIteration>();
  iteration->operand_vectors.assign(spec.operands.size(), nullptr);
  GpuElementalEmitter emitter(b, module);
  std::vector<ElementGenerator> loads;
  for (size_t i = 0; i < operands.size(); ++i) {
    loads.push_back(
        [&b, operand = operands[i], iteration, i](const IrIndex& index) -> llvm::Value* {
          if (llvm::Value* vector = iteration->operand_vectors[i]) {
            for (int j = 0; j < kVectorWidth; ++j)
              if (SameIndex(index, iteration->indices[static_cast<size_t>(j)]))
                return b.CreateExtractElement(vector, static_cast<uint64_t>(j));
          }
          return operand.EmitLoad(b, index);
        });
  }
  std::vector<ElementGenerator> generators = make_outputs(emitter, std::move(loads));
  if (generators.size() != outputs.size())
    throw hlo::Error("gpu backend: kernel " + spec.entry + " has " +
                     std::to_string(generators.size()) + " generators for " +
                     std::to_string(outputs.size()) + " outputs");

  // Grid-stride loop: item = global thread id; item < work_items; item += total threads.
  const auto [thread, block, block_size, grid_size] = ReadLaunchIds(b);
  llvm::Value* first = b.CreateAdd(b.CreateMul(block, block_size), thread, "first");
  llvm::Value* stride = b.CreateMul(block_size, grid_size, "stride");
  llvm::Value* work = b.getInt64(plan.work_items);

  llvm::BasicBlock* preheader = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context, "loop.header", function);
  auto* body = llvm::BasicBlock::Create(context, "loop.body", function);
  auto* exit = llvm::BasicBlock::Create(context, "loop.exit", function);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* item = b.CreatePHI(b.getInt64Ty(), 2, "item");
  item->addIncoming(first, preheader);
  b.CreateCondBr(b.CreateICmpSLT(item, work), body, exit);
  b.SetInsertPoint(body);

  if (plan.elements_per_thread == 1) {
    IrIndex index = outputs[0].DelinearizeIndex(b, item);
    std::vector<llvm::Value*> values;
    for (const ElementGenerator& generator : generators) values.push_back(generator(index));
    for (size_t i = 0; i < outputs.size(); ++i) outputs[i].EmitStore(b, index, values[i]);
  } else {
    llvm::Value* linear = b.CreateMul(item, b.getInt64(kVectorWidth), "linear", true, true);
    IrIndex index0 = outputs[0].DelinearizeIndex(b, linear);
    const auto minor = static_cast<size_t>(shape.EffectiveMinorToMajor().front());
    for (int j = 0; j < kVectorWidth; ++j) {
      IrIndex index = index0;
      if (j > 0) index[minor] = b.CreateAdd(index0[minor], b.getInt64(j), "", true, true);
      iteration->indices[static_cast<size_t>(j)] = index;
    }
    // Operands read at the output's own index (same dims and layout) as one wide load.
    for (size_t i = 0; i < operands.size(); ++i) {
      const hlo::Shape& operand = spec.operands[i];
      const int bytes = hlo::ByteSize(operand.type);
      if (!SameDimsAndLayout(operand, shape) || operand.type == hlo::PrimitiveType::kPred ||
          (bytes != 2 && bytes != 4 && bytes != 8))
        continue;
      auto* vector_type =
          llvm::FixedVectorType::get(llvm_codegen::IrType(operand.type, context), kVectorWidth);
      llvm::Value* address = b.CreateInBoundsGEP(llvm_codegen::IrType(operand.type, context),
                                                 operands[i].base(), linear);
      iteration->operand_vectors[i] = b.CreateAlignedLoad(
          vector_type, address, llvm::Align(static_cast<uint64_t>(bytes) * kVectorWidth),
          "wide" + std::to_string(i));
    }
    std::vector<std::vector<llvm::Value*>> values(outputs.size());
    for (int j = 0; j < kVectorWidth; ++j)
      for (size_t o = 0; o < outputs.size(); ++o)
        values[o].push_back(generators[o](iteration->indices[static_cast<size_t>(j)]));
    for (size_t o = 0; o < outputs.size(); ++o) {
      llvm::Type* element = llvm_codegen::IrType(spec.outputs[o].type, context);
      llvm::Value* vector =
          llvm::PoisonValue::get(llvm::FixedVectorType::get(element, kVectorWidth));
      for (int j = 0; j < kVectorWidth; ++j)
        vector = b.CreateInsertElement(vector, values[o][static_cast<size_t>(j)],
                                       static_cast<uint64_t>(j));
      llvm::Value* address = b.CreateInBoundsGEP(element, outputs[o].base(), linear);
      const auto bytes = static_cast<uint64_t>(hlo::ByteSize(spec.outputs[o].type));
      b.CreateAlignedStore(vector, address, llvm::Align(bytes * kVectorWidth));
    }
  }
  llvm::Value* next = b.CreateAdd(item, stride, "item.next", true, true);
  item->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return plan;
}

}  // namespace gpu::codegen

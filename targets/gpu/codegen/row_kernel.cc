// Warp-per-row and block-per-row kernels for row reductions, softmax and layer-norm rows (see
// row_kernel.h).
#include "targets/gpu/codegen/row_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <map>
#include <set>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/kernel_ir.h"
#include "targets/llvm/loop_emitter.h"

namespace gpu::codegen {

using hlo::Instruction;
using hlo::Opcode;
using llvm_codegen::ElementGenerator;
using llvm_codegen::EmitCountedLoop;
using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

bool Shuffleable(hlo::PrimitiveType type) {
  const int bytes = hlo::ByteSize(type);
  return type != hlo::PrimitiveType::kPred && (bytes == 2 || bytes == 4 || bytes == 8);
}

namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= dims[i];
  return product;
}

// The rows and row length of a reduce over the trailing dims of a row-major operand.
std::optional<std::pair<int64_t, int64_t>> RowReduceExtent(const Instruction& reduce) {
  if (reduce.operand_count() != 2 || !reduce.shape().IsArray()) return std::nullopt;
  const hlo::Shape& operand = reduce.operand(0)->shape();
  if (!operand.HasDefaultLayout() || !reduce.shape().HasDefaultLayout() ||
      !Shuffleable(reduce.shape().type))
    return std::nullopt;
  std::vector<int64_t> dims = reduce.attr<hlo::DimensionsAttrs>().dimensions;
  std::sort(dims.begin(), dims.end());
  const auto rank = static_cast<int64_t>(operand.rank());
  if (dims.empty()) return std::nullopt;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != rank - static_cast<int64_t>(dims.size()) + static_cast<int64_t>(i))
      return std::nullopt;
  const size_t kept = static_cast<size_t>(rank) - dims.size();
  return std::make_pair(Product(operand.dims, 0, kept),
                        Product(operand.dims, kept, operand.dims.size()));
}

}  // namespace

std::optional<RowKernelPlan> PlanRowKernel(const hlo::Computation& fused) {
  RowKernelPlan plan;
  std::set<const Instruction*> downstream;  // depends on some reduce
  for (const auto& owned : fused.instructions()) {
    const Instruction& inst = *owned;
    if (inst.opcode() == Opcode::kReduce) {
      auto extent = RowReduceExtent(inst);
      if (!extent) return std::nullopt;
      if (plan.reduces.empty()) {
        plan.rows = extent->first;
        plan.row_length = extent->second;
      } else if (extent->first != plan.rows || extent->second != plan.row_length) {
        return std::nullopt;
      }
      plan.reduces.push_back(&inst);
      downstream.insert(&inst);
      continue;
    }
    const bool depends = std::any_of(inst.operands().begin(), inst.operands().end(),
                                     [&](const Instruction* o) { return downstream.count(o) > 0; });
    if (!depends) continue;
    downstream.insert(&inst);
    // Row-preserving ops only, on row-major shapes of ROWS or ROWS x ROWLEN elements.
    if (!inst.shape().IsArray() || !inst.shape().HasDefaultLayout()) return std::nullopt;
    if (hlo::IsElementwise(inst.opcode()) || inst.opcode() == Opcode::kReshape ||
        inst.opcode() == Opcode::kBitcast) {
      bool same_count = true;
      for (const Instruction* operand : inst.operands())
        same_count = same_count && operand->shape().IsArray() &&
                     (operand->shape().rank() == 0 ||
                      operand->shape().ElementCount() == inst.shape().ElementCount());
      if (!same_count ||
          (inst.opcode() != Opcode::kReshape && inst.opcode() != Opcode::kBitcast &&
           !std::all_of(inst.operands().begin(), inst.operands().end(), [&](const Instruction* o) {
             return o->shape().dims == inst.shape().dims;
           })))
        return std::nullopt;
      continue;
    }
    if (inst.opcode() == Opcode::kBroadcast) {
      // Appends trailing dims of product ROWLEN to a row-shaped operand: output row = L / ROWLEN.
      const hlo::Shape& operand = inst.operand(0)->shape();
      const std::vector<int64_t>& mapped = inst.attr<hlo::DimensionsAttrs>().dimensions;
      const size_t r = operand.dims.size();
      bool prefix = operand.HasDefaultLayout() && r <= inst.shape().dims.size();
      for (size_t i = 0; prefix && i < r; ++i)
        prefix = mapped[i] == static_cast<int64_t>(i) && operand.dims[i] == inst.shape().dims[i];
      if (!prefix || operand.ElementCount() != plan.rows ||
          Product(inst.shape().dims, r, inst.shape().dims.size()) != plan.row_length)
        return std::nullopt;
      continue;
    }
    return std::nullopt;
  }
  const Instruction* root = fused.root();
  if (plan.reduces.empty() || downstream.count(root) == 0 || !root->shape().IsArray() ||
      !root->shape().HasDefaultLayout())
    return std::nullopt;
  if (root->shape().ElementCount() == plan.rows) {
    plan.root_is_row_shaped = true;
  } else if (root->shape().ElementCount() != plan.rows * plan.row_length) {
    return std::nullopt;
  }
  return plan;
}

LaunchDimensions ChooseRowLaunchDimensions(int64_t rows, const DeviceLimits& device) {
  // One warp per row: rows * 32 threads of work, grid-strided like the loop kernels.
  return ChooseLaunchDimensions(rows * kWarpSize, device);
}

void ChooseRowSchedule(RowKernelPlan& plan, const DeviceLimits& device) {
  const bool long_row = plan.row_length > kLongRow;
  const bool few_rows = plan.rows < device.sm_count && plan.row_length > 4 * kWarpSize;
  plan.block_per_row = long_row || few_rows;
}

LaunchDimensions ChooseRowKernelLaunch(const RowKernelPlan& plan, const DeviceLimits& device) {
  if (!plan.block_per_row) return ChooseRowLaunchDimensions(plan.rows, device);
  constexpr int64_t kMinBlock = 128, kMaxBlock = 1024;
  const int64_t wanted = (plan.row_length + kBlockRowElementsPerThread - 1) /
                         kBlockRowElementsPerThread;
  const int64_t block =
      std::clamp((wanted + kWarpSize - 1) / kWarpSize * kWarpSize, kMinBlock, kMaxBlock);
  const int64_t blocks_to_fill =
      int64_t{device.sm_count} * std::max<int64_t>(1, device.max_threads_per_sm / block);
  LaunchDimensions dims;
  dims.block = static_cast<uint32_t>(block);
  dims.grid = static_cast<uint32_t>(std::clamp<int64_t>(plan.rows, 1, blocks_to_fill));
  return dims;
}

// value of every lane combined with `value` of lane ^ offset, for offsets 16, 8, 4, 2, 1: every
// lane ends with the reduction over the warp. 64-bit values travel as two 32-bit halves.
llvm::Value* WarpButterfly(llvm::IRBuilder<>& b, llvm_codegen::ElementalEmitter& emitter,
                           const hlo::Computation& reducer, llvm::Value* value) {
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::Function* shuffle =
      llvm::Intrinsic::getDeclaration(module, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32);
  llvm::Type* type = value->getType();
  const unsigned bits = type->getPrimitiveSizeInBits().getFixedValue();
  llvm::Type* as_int = b.getIntNTy(bits);
  auto shuffle32 = [&](llvm::Value* word, int offset) {
    return b.CreateCall(
        shuffle, {b.getInt32(0xffffffffu), word, b.getInt32(offset), b.getInt32(kWarpSize - 1)});
  };
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    llvm::Value* bitsv = b.CreateBitCast(value, as_int);
    llvm::Value* other;
    if (bits == 64) {
      llvm::Value* low = shuffle32(b.CreateTrunc(bitsv, b.getInt32Ty()), offset);
      llvm::Value* high = shuffle32(b.CreateTrunc(b.CreateLShr(bitsv, 32), b.getInt32Ty()), offset);
      other = b.CreateOr(b.CreateZExt(low, b.getInt64Ty()),
                         b.CreateShl(b.CreateZExt(high, b.getInt64Ty()), 32));
    } else {
      other = shuffle32(b.CreateZExtOrTrunc(bitsv, b.getInt32Ty()), offset);
      other = b.CreateZExtOrTrunc(other, as_int);
    }
    llvm::Value* arguments[] = {value, b.CreateBitCast(other, type)};
    value = emitter.EmitScalarComputation(reducer, arguments).at(0);
  }
  return value;
}

llvm::GlobalVariable* SharedArray(llvm::Module& module, const std::string& name,
                                  llvm::Type* type) {
  auto* global = new llvm::GlobalVariable(
      module, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
      llvm::UndefValue::get(type), name, nullptr, llvm::GlobalValue::NotThreadLocal,
      kSharedAddressSpace);
  global->setAlignment(llvm::Align(8));
  return global;
}

namespace {

constexpr int kRowValueSlot = kWarpSize;  // after the (at most 32) warp partials

// The block's reduction from each warp's butterflied `warp_value`: lane 0 of every warp writes
// its warp's value, warp 0 butterflies them (lanes past the block's warps contribute `init`, the
// reducer's identity), lane 0 writes the row's value, and every thread reads it back. The two
// bar.sync are reached by every thread of the block (the row loop is uniform across the block).
llvm::Value* CombineWarpsThroughShared(llvm::IRBuilder<>& b,
                                       llvm_codegen::ElementalEmitter& emitter,
                                       const hlo::Computation& reducer,
                                       llvm::GlobalVariable* shared, llvm::Value* warp_value,
                                       llvm::Value* init, llvm::Value* thread,
                                       llvm::Value* block_size) {
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = module->getContext();
  llvm::Function* barrier =
      llvm::Intrinsic::getDeclaration(module, llvm::Intrinsic::nvvm_barrier0);
  llvm::Type* type = warp_value->getType();
  llvm::Type* array_type = shared->getValueType();
  auto slot = [&](llvm::Value* i) {
    return b.CreateInBoundsGEP(array_type, shared, {b.getInt64(0), i});
  };
  llvm::Value* warp = b.CreateUDiv(thread, b.getInt64(kWarpSize), "warp");
  llvm::Value* lane = b.CreateURem(thread, b.getInt64(kWarpSize));
  llvm::Value* is_lane0 = b.CreateICmpEQ(lane, b.getInt64(0));

  auto* write_partial = llvm::BasicBlock::Create(context, "smem.partial", function);
  auto* partial_written = llvm::BasicBlock::Create(context, "smem.partial.done", function);
  b.CreateCondBr(is_lane0, write_partial, partial_written);
  b.SetInsertPoint(write_partial);
  b.CreateStore(warp_value, slot(warp));
  b.CreateBr(partial_written);
  b.SetInsertPoint(partial_written);
  b.CreateCall(barrier);

  auto* combine = llvm::BasicBlock::Create(context, "smem.combine", function);
  auto* combined = llvm::BasicBlock::Create(context, "smem.combine.done", function);
  b.CreateCondBr(b.CreateICmpEQ(warp, b.getInt64(0)), combine, combined);
  b.SetInsertPoint(combine);
  llvm::Value* warps = b.CreateUDiv(block_size, b.getInt64(kWarpSize));
  // Every lane loads (lane < 32 is always a valid slot); lanes past the warps keep `init`.
  llvm::Value* mine =
      b.CreateSelect(b.CreateICmpULT(lane, warps), b.CreateLoad(type, slot(lane)), init);
  llvm::Value* block_value = WarpButterfly(b, emitter, reducer, mine);
  auto* write_row = llvm::BasicBlock::Create(context, "smem.row", function);
  b.CreateCondBr(is_lane0, write_row, combined);
  b.SetInsertPoint(write_row);
  b.CreateStore(block_value, slot(b.getInt64(kRowValueSlot)));
  b.CreateBr(combined);
  b.SetInsertPoint(combined);
  b.CreateCall(barrier);
  return b.CreateLoad(type, slot(b.getInt64(kRowValueSlot)), "row_value");
}

}  // namespace

void EmitRowKernel(llvm::Module& module, const std::string& entry, const hlo::Computation& fused,
                   const RowKernelPlan& plan, const std::vector<hlo::Shape>& operand_shapes) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  std::vector<llvm::Value*> params;
  llvm::Function* function = BeginKernel(b, module, entry, operand_shapes.size() + 1, params);
  std::vector<IrArray> operands = ReadOnlyOperandArrays(params, operand_shapes);
  const hlo::Shape& root_shape = fused.root()->shape();
  IrArray output(params.back(), root_shape);

  GpuElementalEmitter emitter(b, module);
  // The current row's value of each reduce, set before anything that reads it is emitted.
  std::map<const Instruction*, llvm::Value*> reduced;
  std::map<const Instruction*, ElementGenerator> generators;
  for (const auto& owned : fused.instructions()) {
    const Instruction* inst = owned.get();
    if (inst->opcode() == Opcode::kParameter) {
      const IrArray& operand =
          operands.at(static_cast<size_t>(inst->attr<hlo::ParameterAttrs>().number));
      generators[inst] = [&b, operand](const IrIndex& index) { return operand.EmitLoad(b, index); };
    } else if (inst->opcode() == Opcode::kReduce) {
      generators[inst] = [&reduced, inst](const IrIndex&) {
        llvm::Value* value = reduced[inst];
        if (value == nullptr)
          throw hlo::Error(inst->location(), "gpu backend: reduce " + inst->name() +
                                                 " read before its row was reduced");
        return value;
      };
    } else {
      std::vector<ElementGenerator> inputs;
      for (const Instruction* operand : inst->operands()) inputs.push_back(generators.at(operand));
      generators[inst] = emitter.MakeGenerator(*inst, std::move(inputs));
    }
  }

  const auto [thread, block, block_size, grid_size] = ReadLaunchIds(b);
  llvm::Value* warp_size = b.getInt64(kWarpSize);
  llvm::Value* lane = b.CreateURem(thread, warp_size, "lane");
  // The team that owns a row (a warp or the block): its first row, the stride between its rows,
  // this thread's rank in it and its size.
  llvm::Value *first_row, *row_stride, *rank, *team_size;
  if (plan.block_per_row) {
    first_row = block;
    row_stride = grid_size;
    rank = thread;
    team_size = block_size;
  } else {
    first_row =
        b.CreateUDiv(b.CreateAdd(b.CreateMul(block, block_size), thread), warp_size, "first_row");
    row_stride = b.CreateUDiv(b.CreateMul(block_size, grid_size), warp_size, "row_stride");
    rank = lane;
    team_size = warp_size;
  }
  llvm::Value* row_length = b.getInt64(plan.row_length);
  std::vector<llvm::GlobalVariable*> shared;  // block per row: one [33 x T] per reduce
  if (plan.block_per_row)
    for (const Instruction* reduce : plan.reduces)
      shared.push_back(SharedArray(
          module, entry + "_smem" + std::to_string(shared.size()),
          llvm::ArrayType::get(llvm_codegen::IrType(reduce->shape().type, context),
                               kWarpSize + 1)));

  EmitCountedLoop(b, first_row, b.getInt64(plan.rows), row_stride, "row", [&](llvm::Value* row) {
    llvm::Value* row_start = b.CreateMul(row, row_length, "row_start", true, true);
    for (size_t r = 0; r < plan.reduces.size(); ++r) {
      const Instruction* reduce = plan.reduces[r];
      const hlo::Computation& reducer = *reduce->called_computations().at(0);
      llvm::Value* init = generators.at(reduce->operand(1))(IrIndex{});
      IrArray operand_view(nullptr, reduce->operand(0)->shape());
      // In the entry block, so that mem2reg turns it into a register (no .local memory).
      llvm::IRBuilder<> entry_builder(&function->getEntryBlock(),
                                      function->getEntryBlock().begin());
      llvm::AllocaInst* partial = entry_builder.CreateAlloca(init->getType(), nullptr, "partial");
      b.CreateStore(init, partial);
      EmitCountedLoop(b, rank, row_length, team_size, "fold", [&](llvm::Value* j) {
        IrIndex index = operand_view.DelinearizeIndex(b, b.CreateAdd(row_start, j, "", true, true));
        llvm::Value* element = generators.at(reduce->operand(0))(index);
        llvm::Value* arguments[] = {b.CreateLoad(init->getType(), partial), element};
        b.CreateStore(emitter.EmitScalarComputation(reducer, arguments).at(0), partial);
      });
      llvm::Value* warp_value =
          WarpButterfly(b, emitter, reducer, b.CreateLoad(init->getType(), partial));
      reduced[reduce] = plan.block_per_row
                            ? CombineWarpsThroughShared(b, emitter, reducer, shared[r], warp_value,
                                                        init, thread, block_size)
                            : warp_value;
    }
    const ElementGenerator& root = generators.at(fused.root());
    if (plan.root_is_row_shaped) {
      auto* store = llvm::BasicBlock::Create(context, "rank0.store", function);
      auto* after = llvm::BasicBlock::Create(context, "rank0.after", function);
      b.CreateCondBr(b.CreateICmpEQ(rank, b.getInt64(0)), store, after);
      b.SetInsertPoint(store);
      IrIndex index = output.DelinearizeIndex(b, row);
      output.EmitStore(b, index, root(index));
      b.CreateBr(after);
      b.SetInsertPoint(after);
    } else {
      EmitCountedLoop(b, rank, row_length, team_size, "store", [&](llvm::Value* j) {
        IrIndex index = output.DelinearizeIndex(b, b.CreateAdd(row_start, j, "", true, true));
        output.EmitStore(b, index, root(index));
      });
    }
  });
  b.CreateRetVoid();
}

}  // namespace gpu::codegen

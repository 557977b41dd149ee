// Tiled column-reduction kernels through shared memory (see column_kernel.h).
#include "targets/gpu/codegen/column_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <set>

#include "hlo/diagnostic.h"
#include "targets/gpu/codegen/kernel_ir.h"
#include "targets/gpu/codegen/row_kernel.h"
#include "targets/llvm/loop_emitter.h"

namespace gpu::codegen {

using hlo::Instruction;
using hlo::Opcode;
using llvm_codegen::ElementGenerator;
using llvm_codegen::EmitCountedLoop;
using llvm_codegen::IrArray;
using llvm_codegen::IrIndex;

namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= dims[i];
  return product;
}

// The [OUTER, R, C] view of a reduce over contiguous non-minor dims, or nullopt.
std::optional<ColumnKernelPlan> ColumnExtent(const Instruction& reduce) {
  if (reduce.operand_count() != 2 || !reduce.shape().IsArray()) return std::nullopt;
  const hlo::Shape& operand = reduce.operand(0)->shape();
  if (!operand.HasDefaultLayout() || !reduce.shape().HasDefaultLayout() ||
      !Shuffleable(reduce.shape().type))
    return std::nullopt;
  std::vector<int64_t> dims = reduce.attr<hlo::DimensionsAttrs>().dimensions;
  if (dims.empty()) return std::nullopt;
  std::sort(dims.begin(), dims.end());
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1) return std::nullopt;
  const auto first = static_cast<size_t>(dims.front());
  const auto after = static_cast<size_t>(dims.back()) + 1;
  if (after >= operand.dims.size()) return std::nullopt;  // reduces the minor dim: a row kernel
  ColumnKernelPlan plan;
  plan.outer = Product(operand.dims, 0, first);
  plan.reduced = Product(operand.dims, first, after);
  plan.columns = Product(operand.dims, after, operand.dims.size());
  plan.reduce = &reduce;
  if (plan.columns <= 1) return std::nullopt;
  return plan;
}

}  // namespace

std::optional<ColumnKernelPlan> PlanColumnKernel(const hlo::Computation& fused) {
  std::optional<ColumnKernelPlan> plan;
  std::set<const Instruction*> downstream;  // the reduce and what depends on it
  for (const auto& owned : fused.instructions()) {
    const Instruction& inst = *owned;
    if (inst.opcode() == Opcode::kReduce) {
      if (plan) return std::nullopt;  // one reduce per kernel
      plan = ColumnExtent(inst);
      if (!plan) return std::nullopt;
      downstream.insert(&inst);
      continue;
    }
    const bool depends = std::any_of(inst.operands().begin(), inst.operands().end(),
                                     [&](const Instruction* o) { return downstream.count(o) > 0; });
    if (!depends) continue;
    // The epilogue: elementwise on the reduce's shape, evaluated once per output element.
    if (!hlo::IsElementwise(inst.opcode()) || !inst.shape().IsArray() ||
        !inst.shape().HasDefaultLayout() || inst.shape().dims != plan->reduce->shape().dims)
      return std::nullopt;
    downstream.insert(&inst);
  }
  if (!plan || downstream.count(fused.root()) == 0) return std::nullopt;
  return plan;
}

LaunchDimensions ChooseColumnLaunchDimensions(const ColumnKernelPlan& plan,
                                              const DeviceLimits& device) {
  const int64_t tiles = plan.outer * ((plan.columns + kColumnTile - 1) / kColumnTile);
  // Fewer tiles than SMs: 32 warps a tile, so each thread folds fewer rows.
  const int64_t block = tiles < device.sm_count ? 1024 : 256;
  const int64_t blocks_to_fill =
      int64_t{device.sm_count} * std::max<int64_t>(1, device.max_threads_per_sm / block);
  LaunchDimensions dims;
  dims.block = static_cast<uint32_t>(block);
  dims.grid = static_cast<uint32_t>(std::clamp<int64_t>(tiles, 1, blocks_to_fill));
  return dims;
}

void EmitColumnKernel(llvm::Module& module, const std::string& entry, const hlo::Computation& fused,
                      const ColumnKernelPlan& plan, const std::vector<hlo::Shape>& operand_shapes) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  std::vector<llvm::Value*> params;
  llvm::Function* function = BeginKernel(b, module, entry, operand_shapes.size() + 1, params);
  std::vector<IrArray> operands = ReadOnlyOperandArrays(params, operand_shapes);
  IrArray output(params.back(), fused.root()->shape());

  GpuElementalEmitter emitter(b, module);
  const Instruction* reduce = plan.reduce;
  llvm::Value* reduced_value = nullptr;  // the current output element's, set before the root
  std::map<const Instruction*, ElementGenerator> generators;
  for (const auto& owned : fused.instructions()) {
    const Instruction* inst = owned.get();
    if (inst->opcode() == Opcode::kParameter) {
      const IrArray& operand =
          operands.at(static_cast<size_t>(inst->attr<hlo::ParameterAttrs>().number));
      generators[inst] = [&b, operand](const IrIndex& index) { return operand.EmitLoad(b, index); };
    } else if (inst == reduce) {
      generators[inst] = [&reduced_value](const IrIndex&) { return reduced_value; };
    } else {
      std::vector<ElementGenerator> inputs;
      for (const Instruction* operand : inst->operands()) inputs.push_back(generators.at(operand));
      generators[inst] = emitter.MakeGenerator(*inst, std::move(inputs));
    }
  }
  const hlo::Computation& reducer = *reduce->called_computations().at(0);
  llvm::Type* type = llvm_codegen::IrType(reduce->shape().type, context);
  // [32 rows (warps)][33]: the pad column makes the transposed reads tile[l][c] hit 32 banks.
  auto* tile_type = llvm::ArrayType::get(llvm::ArrayType::get(type, kColumnTile + 1), kWarpSize);
  llvm::GlobalVariable* tile = SharedArray(module, entry + "_tile", tile_type);
  llvm::Function* barrier =
      llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::nvvm_barrier0);
  auto tile_slot = [&](llvm::Value* row, llvm::Value* column) {
    return b.CreateInBoundsGEP(tile_type, tile, {b.getInt64(0), row, column});
  };

  const auto [thread, block, block_size, grid_size] = ReadLaunchIds(b);
  llvm::Value* lane = b.CreateURem(thread, b.getInt64(kWarpSize), "lane");
  llvm::Value* warp = b.CreateUDiv(thread, b.getInt64(kWarpSize), "warp");
  llvm::Value* warps = b.CreateUDiv(block_size, b.getInt64(kWarpSize), "warps");
  const int64_t tiles_per_outer = (plan.columns + kColumnTile - 1) / kColumnTile;
  llvm::Value* columns = b.getInt64(plan.columns);
  llvm::Value* init = generators.at(reduce->operand(1))(IrIndex{});
  llvm::IRBuilder<> entry_builder(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::AllocaInst* partial = entry_builder.CreateAlloca(type, nullptr, "partial");
  IrArray operand_view(nullptr, reduce->operand(0)->shape());

  EmitCountedLoop(
      b, block, b.getInt64(plan.outer * tiles_per_outer), grid_size, "tile", [&](llvm::Value* t) {
        llvm::Value* outer = b.CreateUDiv(t, b.getInt64(tiles_per_outer), "outer");
        llvm::Value* first_column = b.CreateMul(b.CreateURem(t, b.getInt64(tiles_per_outer)),
                                                b.getInt64(kColumnTile), "c0");
        llvm::Value* column = b.CreateAdd(first_column, lane, "column");
        b.CreateStore(init, partial);
        EmitIf(b, b.CreateICmpULT(column, columns), "fold", [&] {
          llvm::Value* base = b.CreateMul(outer, b.getInt64(plan.reduced));
          EmitCountedLoop(b, warp, b.getInt64(plan.reduced), warps, "rows", [&](llvm::Value* r) {
            llvm::Value* linear =
                b.CreateAdd(b.CreateMul(b.CreateAdd(base, r), columns, "", true, true), column);
            llvm::Value* element =
                generators.at(reduce->operand(0))(operand_view.DelinearizeIndex(b, linear));
            llvm::Value* arguments[] = {b.CreateLoad(type, partial), element};
            b.CreateStore(emitter.EmitScalarComputation(reducer, arguments).at(0), partial);
          });
        });
        b.CreateStore(b.CreateLoad(type, partial), tile_slot(warp, lane));
        b.CreateCall(barrier);
        // The transpose: warp w finishes columns w, w + warps, ... of the tile.
        EmitCountedLoop(b, warp, b.getInt64(kColumnTile), warps, "columns", [&](llvm::Value* c) {
          llvm::Value* mine = b.CreateSelect(b.CreateICmpULT(lane, warps),
                                             b.CreateLoad(type, tile_slot(lane, c)), init);
          llvm::Value* value = WarpButterfly(b, emitter, reducer, mine);
          llvm::Value* out_column = b.CreateAdd(first_column, c);
          EmitIf(b, b.CreateAnd(b.CreateICmpEQ(lane, b.getInt64(0)),
                              b.CreateICmpULT(out_column, columns)),
                  "store", [&] {
                    reduced_value = value;
                    IrIndex index = output.DelinearizeIndex(
                        b, b.CreateAdd(b.CreateMul(outer, columns), out_column));
                    output.EmitStore(b, index, generators.at(fused.root())(index));
                  });
        });
        b.CreateCall(barrier);  // the next tile rewrites `tile`
      });
  b.CreateRetVoid();
}

}  // namespace gpu::codegen

// Tiled transposes through shared memory (see transpose_kernel.h).
#include "targets/gpu/codegen/transpose_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <functional>
#include <map>

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
constexpr int64_t kMinTiledExtent = 16;
}  // namespace

std::optional<TransposeKernelPlan> PlanTransposeKernel(const hlo::Instruction& transpose) {
  const Instruction* root = &transpose;
  if (root->opcode() != Opcode::kTranspose || !root->shape().IsArray()) return std::nullopt;
  const hlo::Shape& operand = root->operand(0)->shape();
  const hlo::Shape& output = root->shape();
  const int bytes = hlo::ByteSize(output.type);
  if (!operand.HasDefaultLayout() || !output.HasDefaultLayout() ||
      output.type == hlo::PrimitiveType::kPred || bytes < 1 || bytes > 8 || operand.rank() < 2)
    return std::nullopt;
  const std::vector<int64_t>& permutation = root->attr<hlo::DimensionsAttrs>().dimensions;
  const auto rank = static_cast<int64_t>(operand.rank());
  TransposeKernelPlan plan;
  plan.k_dim = rank - 1;
  plan.m_dim = permutation.back();
  if (plan.m_dim == plan.k_dim) return std::nullopt;  // the minor dim stays minor: coalesced
  const int64_t m_extent = operand.dims[static_cast<size_t>(plan.m_dim)];
  const int64_t k_extent = operand.dims[static_cast<size_t>(plan.k_dim)];
  if (m_extent < kMinTiledExtent || k_extent < kMinTiledExtent) return std::nullopt;
  for (int64_t d = 0; d < rank; ++d)
    if (d != plan.m_dim && d != plan.k_dim) {
      plan.rest_dims.push_back(d);
      plan.rest_count *= operand.dims[static_cast<size_t>(d)];
    }
  plan.tiles_m = (m_extent + kTransposeTile - 1) / kTransposeTile;
  plan.tiles_k = (k_extent + kTransposeTile - 1) / kTransposeTile;
  return plan;
}

LaunchDimensions ChooseTransposeLaunchDimensions(const TransposeKernelPlan& plan,
                                                 const DeviceLimits& device) {
  constexpr int64_t kBlock = 256;
  const int64_t blocks_to_fill = int64_t{device.sm_count} * (device.max_threads_per_sm / kBlock);
  LaunchDimensions dims;
  dims.block = static_cast<uint32_t>(kBlock);
  dims.grid = static_cast<uint32_t>(std::clamp<int64_t>(plan.Tiles(), 1, blocks_to_fill));
  return dims;
}

void EmitTransposeKernel(llvm::Module& module, const std::string& entry,
                         const hlo::Instruction& transpose, const hlo::Computation* fused,
                         const TransposeKernelPlan& plan,
                         const std::vector<hlo::Shape>& operand_shapes) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  std::vector<llvm::Value*> params;
  BeginKernel(b, module, entry, operand_shapes.size() + 1, params);
  std::vector<IrArray> operands = ReadOnlyOperandArrays(params, operand_shapes);
  const Instruction* root = &transpose;
  // A row-major reshape of the transpose (the fusion's root) has the same bytes: write the
  // output buffer in the transpose's shape.
  IrArray output(params.back(), root->shape());
  GpuElementalEmitter emitter(b, module);
  std::map<const Instruction*, ElementGenerator> generators;
  if (fused == nullptr) {
    const IrArray& operand = operands.at(0);
    generators[root->operand(0)] = [&b, operand](const IrIndex& index) {
      return operand.EmitLoad(b, index);
    };
  } else {
    for (const auto& owned : fused->instructions()) {
      const Instruction* inst = owned.get();
      // The tile does the transpose's work (and a row-major reshape after it is free).
      if (inst == root || inst == fused->root()) continue;
      if (inst->opcode() == Opcode::kParameter) {
        const IrArray& operand =
            operands.at(static_cast<size_t>(inst->attr<hlo::ParameterAttrs>().number));
        generators[inst] = [&b, operand](const IrIndex& index) {
          return operand.EmitLoad(b, index);
        };
        continue;
      }
      std::vector<ElementGenerator> inputs;
      for (const Instruction* operand : inst->operands()) inputs.push_back(generators.at(operand));
      generators[inst] = emitter.MakeGenerator(*inst, std::move(inputs));
    }
  }
  const ElementGenerator& source = generators.at(root->operand(0));
  const hlo::Shape& operand_shape = root->operand(0)->shape();
  const std::vector<int64_t>& permutation = root->attr<hlo::DimensionsAttrs>().dimensions;

  llvm::Type* type = llvm_codegen::IrType(root->shape().type, context);
  auto* tile_type =
      llvm::ArrayType::get(llvm::ArrayType::get(type, kTransposeTile + 1), kTransposeTile);
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
  llvm::Value* m_extent = b.getInt64(operand_shape.dims[static_cast<size_t>(plan.m_dim)]);
  llvm::Value* k_extent = b.getInt64(operand_shape.dims[static_cast<size_t>(plan.k_dim)]);

  EmitCountedLoop(b, block, b.getInt64(plan.Tiles()), grid_size, "tile", [&](llvm::Value* t) {
    // t = (rest * tiles_m + m_tile) * tiles_k + k_tile; rest is row-major over rest_dims.
    llvm::Value* k0 =
        b.CreateMul(b.CreateURem(t, b.getInt64(plan.tiles_k)), b.getInt64(kTransposeTile), "k0");
    llvm::Value* rest_and_m = b.CreateUDiv(t, b.getInt64(plan.tiles_k));
    llvm::Value* m0 = b.CreateMul(b.CreateURem(rest_and_m, b.getInt64(plan.tiles_m)),
                                  b.getInt64(kTransposeTile), "m0");
    llvm::Value* rest = b.CreateUDiv(rest_and_m, b.getInt64(plan.tiles_m));
    IrIndex base(operand_shape.dims.size(), nullptr);
    for (auto d = plan.rest_dims.rbegin(); d != plan.rest_dims.rend(); ++d) {
      llvm::Value* extent = b.getInt64(operand_shape.dims[static_cast<size_t>(*d)]);
      base[static_cast<size_t>(*d)] = b.CreateURem(rest, extent);
      rest = b.CreateUDiv(rest, extent);
    }
    auto operand_index = [&](llvm::Value* m, llvm::Value* k) {
      IrIndex index = base;
      index[static_cast<size_t>(plan.m_dim)] = m;
      index[static_cast<size_t>(plan.k_dim)] = k;
      return index;
    };
    auto in_bounds = [&](llvm::Value* m, llvm::Value* k) {
      return b.CreateAnd(b.CreateICmpULT(m, m_extent), b.CreateICmpULT(k, k_extent));
    };
    EmitCountedLoop(b, warp, b.getInt64(kTransposeTile), warps, "read", [&](llvm::Value* i) {
      llvm::Value* m = b.CreateAdd(m0, i);
      llvm::Value* k = b.CreateAdd(k0, lane);
      EmitIf(b, in_bounds(m, k), "load",
              [&] { b.CreateStore(source(operand_index(m, k)), tile_slot(i, lane)); });
    });
    b.CreateCall(barrier);
    EmitCountedLoop(b, warp, b.getInt64(kTransposeTile), warps, "write", [&](llvm::Value* i) {
      llvm::Value* m = b.CreateAdd(m0, lane);
      llvm::Value* k = b.CreateAdd(k0, i);
      EmitIf(b, in_bounds(m, k), "store", [&] {
        IrIndex in = operand_index(m, k);
        IrIndex out(permutation.size());
        for (size_t o = 0; o < permutation.size(); ++o)
          out[o] = in[static_cast<size_t>(permutation[o])];
        output.EmitStore(b, out, b.CreateLoad(type, tile_slot(lane, i)));
      });
    });
    b.CreateCall(barrier);  // the next tile rewrites `tile`
  });
  b.CreateRetVoid();
}

}  // namespace gpu::codegen

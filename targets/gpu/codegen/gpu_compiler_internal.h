// Internal to the GPU code generator: the artifact builder shared by gpu_compiler.cc (arena
// layout, instruction walk, PTX), gpu_compiler_kernels.cc (loop and row kernels),
// gpu_compiler_ops.cc (kernels of single ops) and gpu_compiler_library.cc (cuBLASLt, cuDNN).
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/memory/buffer_assignment.h"
#include "hlo/diagnostic.h"
#include "hlo/minifloat.h"
#include "hlo/multi_device.h"
#include "targets/gpu/codegen/gpu_compiler.h"

namespace gpu::codegen::internal {

using hlo::Instruction;
using hlo::Opcode;

inline constexpr uint64_t kSliceAlignment = 256;  // cudaMalloc's alignment; >= 4 elements
inline constexpr uint64_t kCublasLtWorkspace = 32ull << 20;  // what cuBLASLt suggests for Hopper
inline constexpr const char* kPtxModule = "kernels";

inline uint64_t AlignUp(uint64_t value) {
  return (value + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
}

inline std::string Describe(const Instruction& inst) {
  return inst.name() + " (" + std::string(hlo::OpcodeName(inst.opcode())) + ")";
}

[[noreturn]] inline void Unsupported(const Instruction& inst, const std::string& why = "") {
  throw hlo::Error(inst.location(), "not supported by the GPU backend yet: instruction " +
                                        Describe(inst) + (why.empty() ? "" : ": " + why));
}

inline gpu::DType ToDType(const Instruction& inst, hlo::PrimitiveType type) {
  switch (type) {
    case hlo::PrimitiveType::kPred:
      return gpu::DType::kPred;
    case hlo::PrimitiveType::kS8:
      return gpu::DType::kS8;
    case hlo::PrimitiveType::kS16:
      return gpu::DType::kS16;
    case hlo::PrimitiveType::kS32:
      return gpu::DType::kS32;
    case hlo::PrimitiveType::kS64:
      return gpu::DType::kS64;
    case hlo::PrimitiveType::kU8:
      return gpu::DType::kU8;
    case hlo::PrimitiveType::kU16:
      return gpu::DType::kU16;
    case hlo::PrimitiveType::kU32:
      return gpu::DType::kU32;
    case hlo::PrimitiveType::kU64:
      return gpu::DType::kU64;
    case hlo::PrimitiveType::kF16:
      return gpu::DType::kF16;
    case hlo::PrimitiveType::kF32:
      return gpu::DType::kF32;
    case hlo::PrimitiveType::kF64:
      return gpu::DType::kF64;
    case hlo::PrimitiveType::kBF16:
      return gpu::DType::kBF16;
    case hlo::PrimitiveType::kC64:
    case hlo::PrimitiveType::kC128:
    case hlo::PrimitiveType::kS4:
    case hlo::PrimitiveType::kU4:
    RETARGET_MINIFLOAT_CASES:
      Unsupported(inst, "element type " + std::string(hlo::PrimitiveTypeName(type)) +
                            " has no GPU code generator form");
    case hlo::PrimitiveType::kTuple:
    case hlo::PrimitiveType::kToken:
      break;
  }
  Unsupported(inst, "a tuple or token leaf has no device storage");
}

// Array leaves of a shape, depth first (the order of buffers and of .npz flattening).
inline void CollectLeafShapes(const hlo::Shape& shape, std::vector<hlo::Shape>& leaves) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes) CollectLeafShapes(element, leaves);
  } else {
    leaves.push_back(shape);
  }
}
inline size_t LeafCount(const hlo::Shape& shape) {
  std::vector<hlo::Shape> leaves;
  CollectLeafShapes(shape, leaves);
  return leaves.size();
}

// Rows of a dimension's slabs in a physical layout: `outer` rows (the product of the dimensions
// more major than the dimension), each `row` elements long (the dimension and everything more
// minor). One row (outer == 1) is one contiguous block already: nothing to gather or spread.
struct Slabs {
  uint64_t outer = 1;
  uint64_t row = 1;
  uint64_t row_bytes = 0;
  uint64_t elements() const { return outer * row; }
};

class ArtifactBuilder {
 public:
  ArtifactBuilder(const hlo::Module& module, const GpuCompileOptions& options)
      : module_(module),
        options_(options),
        llvm_module_("retarget_gpu", context_),
        grid_(options.device_grid ? *options.device_grid : hlo::ModuleDeviceGrid(module)) {}

  GpuCompileResult Build();

 private:
  // Lays out the buffers of `computation` past arena_top_ and returns its schedule. Parameters
  // in `bound` use the caller's slices (a loop body's state, a branch's operand) instead of
  // arena space of their own. `assignment`: the computation's, when the caller has it already.
  std::vector<const Instruction*> LayOut(
      const hlo::Computation& computation,
      const std::map<const Instruction*, std::vector<gpu::Slice>>& bound = {},
      const compiler::BufferAssignment* assignment = nullptr);
  // Control flow (gpu_compiler_control.cc): each called computation becomes a program of the
  // manifest, its parameters bound to the caller's slices.
  void LowerWhile(const Instruction& loop);
  void LowerConditional(const Instruction& conditional);
  void LowerCall(const Instruction& call);
  // Collectives, replica-id and partition-id (gpu_compiler_collectives.cc): NCCL steps over
  // grid_, with strided copies where the exchanged dimension is not the outermost.
  void LowerCollective(const Instruction& inst);
  void LowerAllGather(const Instruction& inst, const Instruction& operand, gpu::Slice result,
                      const std::string& name, int64_t dimension);
  void LowerAllToAll(const Instruction& inst);
  // The distinct groups of `inst` over grid_, each in rank order.
  std::vector<std::vector<int64_t>> GroupsOf(const Instruction& inst);
  // A collective step on elements of `element`'s type; the reduction from `inst`'s to_apply.
  void AddCollective(const Instruction& inst, const std::string& name, gpu::CollectiveCall call,
                     const hlo::Shape& element);
  // `blocks` strided copies between rows of `blocks` slabs and contiguous blocks of
  // `slabs.outer` rows: slabs to blocks when `gather`, blocks to slabs otherwise.
  void StridedCopies(const std::string& name, uint64_t source, uint64_t destination,
                     const Slabs& slabs, int64_t blocks, bool gather);
  // `buffer` (rows of `blocks` slabs) as `blocks` contiguous blocks NCCL can send: itself when
  // it has one row, else a scratch the slabs are gathered into.
  gpu::Slice AsBlocks(const std::string& name, gpu::Slice buffer, const Slabs& slabs,
                      int64_t blocks);
  // Where a collective's `result` receives its blocks (itself, or a scratch), and the copies
  // spreading them out to the result's slabs afterwards (none when it was itself).
  gpu::Slice BlocksFor(gpu::Slice result, const Slabs& slabs);
  void SpreadBlocks(const std::string& name, gpu::Slice blocks, gpu::Slice result,
                    const Slabs& slabs, int64_t count);
  // Lowers `computation` into `steps` (its parameter leaves bound to `parameter_slices`, in
  // parameter order; the instructions of `in_place` to those slices) and returns its root's
  // leaf slices.
  std::vector<gpu::Slice> LowerComputationInto(
      const hlo::Computation& computation,
      const std::vector<std::vector<gpu::Slice>>& parameter_slices, std::vector<gpu::Step>& steps,
      const std::map<const Instruction*, std::vector<gpu::Slice>>& in_place = {},
      const compiler::BufferAssignment* assignment = nullptr);
  // The loop body's root producers that may compute straight into the loop state's slices.
  // `schedule` is the body's, the order LayOut lays it out in.
  std::map<const Instruction*, std::vector<gpu::Slice>> CarriedInPlace(
      const hlo::Computation& body, const std::vector<gpu::Slice>& state,
      const std::vector<const Instruction*>& schedule);
  // Copies `from[i]` into `to[i]` for every leaf where they differ, safe when a source is
  // another leaf's destination (a loop body that swaps its state's leaves).
  void CopyLeaves(const std::string& name, const std::vector<gpu::Slice>& from,
                  const std::vector<gpu::Slice>& to, std::vector<gpu::Step>& steps);
  const std::vector<gpu::Slice>& Slices(const Instruction& inst);
  gpu::Slice ArraySlice(const Instruction& inst);
  void Lower(const Instruction& inst);
  // A loop kernel step named `step_name` for `inst` (errors name `inst`); no owner recorded.
  void AddLoopKernel(const Instruction& inst, const std::string& step_name,
                     std::vector<hlo::Shape> operand_shapes, std::vector<gpu::Slice> operand_slices,
                     std::vector<hlo::Shape> output_shapes, std::vector<gpu::Slice> output_slices,
                     const GeneratorFactory& factory);
  // A row-major slot for entry parameter or result leaf `buffer` (in layout `physical`) and the
  // kernel converting between them (into the module's buffer when `into_module`); the slot.
  gpu::Slice RelayOut(const Instruction& inst, const std::string& name,
                      const hlo::Shape& physical, gpu::Slice buffer, bool into_module);
  void LowerConvolution(const Instruction& conv);
  // The cuDNN step for `conv` (which may sit inside the fusion `owner`) reading `input` and
  // `filter`, writing `result` in the convolution's own layout; permuting kernels as needed.
  void LowerConvolutionInto(const Instruction& conv, const Instruction& owner,
                            const std::string& step_name, gpu::Slice input, gpu::Slice filter,
                            gpu::Slice result);
  // A fresh 256-byte aligned arena slice past the buffer assignment's (scratch for one step).
  gpu::Slice ScratchSlice(uint64_t bytes) {
    gpu::Slice slice{arena_top_, bytes};
    arena_top_ = AlignUp(arena_top_ + bytes);
    return slice;
  }
  void AddKernel(const Instruction& inst, std::vector<const Instruction*> operands,
                 std::vector<gpu::Slice> operand_slices, const GeneratorFactory& factory,
                 bool record_owner = true);
  bool TryRowKernel(const Instruction& fusion);
  // Column reductions (column_kernel.h): a tiled kernel through shared memory.
  bool TryColumnKernel(const Instruction& fusion);
  // Transposes, unfused or a loop fusion's root (transpose_kernel.h): a 32 x 33 tile in shared
  // memory.
  bool TryTransposeKernel(const Instruction& inst);
  // The launch step and kernel record of an instruction (usually a fusion) emitted as one
  // kernel `entry` whose arguments are its operands then its output.
  void AddFusionLaunch(const Instruction& fusion, const std::string& entry,
                       const LaunchDimensions& dims, const std::string& kind);
  // Unfused gather / reduce-window / dynamic-update-slice: one loop kernel over the elemental
  // emitter's generators (a dynamic-update-slice in place: update_slice_kernel.h instead).
  void LowerIndexedOp(const Instruction& inst);
  // scatter: a copy of the operand (unless in place), then scatter_kernel.h.
  void LowerScatter(const Instruction& scatter);
  // sort: copies of the operands into the results (unless in place), then sort_kernel.h.
  void LowerSort(const Instruction& sort);
  // A kernel of its own for `inst` (gpu_compiler_ops.cc): `emit` writes it under the given
  // entry name; launched over `args` with `dims`, or not at all when dims is nullopt.
  void AddOpKernel(const Instruction& inst, const std::string& kind,
                   const std::function<void(const std::string& entry)>& emit,
                   const std::vector<gpu::Slice>& args, std::optional<LaunchDimensions> dims);
  // A copy step giving an in-place kernel's result the operand's bytes (none when shared).
  void SeedResult(const std::string& step_name, gpu::Slice operand, gpu::Slice result);
  // topk: one warp per row selecting the k best elements (topk_kernel.h).
  void LowerTopK(const Instruction& topk);
  void LowerOutputFusion(const Instruction& fusion);
  void AddOwner(const Instruction& inst, const std::string& owner) {
    result_.owners.push_back({inst.name(), std::string(hlo::OpcodeName(inst.opcode())), owner});
  }

  const hlo::Module& module_;
  GpuCompileOptions options_;
  llvm::LLVMContext context_;
  llvm::Module llvm_module_;
  hlo::DeviceGrid grid_;  // the devices the artifact is compiled for
  uint64_t arena_top_ = 0;
  std::vector<gpu::Step>* steps_ = nullptr;  // where Lower appends: the entry's or a program's
  std::map<const Instruction*, std::vector<gpu::Slice>> slices_;
  GpuCompileResult result_;
};

}  // namespace gpu::codegen::internal

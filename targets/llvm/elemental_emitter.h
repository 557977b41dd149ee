// The elemental IR emitter shared by the CPU and GPU backends: for an HLO instruction (or a whole
// fused computation), LLVM IR that computes ONE element of its result from that element's index.
// A backend wraps it in loops (CPU) or a grid of threads (GPU); this file knows neither.
//
// Guarantees (each checked by tests/llvm/ against the interpreter, element by element):
//   - Every fusible opcode (FusibleInEmitter() below) follows the semantics at the top of
//     hlo/ir.h exactly: NaN-propagating max/min, IEEE compares incl. TOTALORDER, integer
//     divide/remainder/shift edge cases, saturating float->int convert, bf16/f16 computed in f32
//     and rounded to nearest even when stored (bf16 rounding is emitted as integer ops, f16 with
//     LLVM's fptrunc), no denormal flushing.
//   - Transcendentals (exp, log, log1p, expm1, tanh, logistic, sin, cos, atan2, power, rsqrt,
//     sqrt, cbrt, erf) are emitted as straight-line IR (llvm_math.h): no calls into libm, so
//     LLVM's loop vectorizer can vectorize a loop over them; accuracy is stated per function in
//     llvm_math.h (f32 within a few ulp; f64 through the C library, see EmitLibmCallF64).
//   - Index arithmetic is in i64; generated code never reads outside an operand (dynamic-slice
//     start indices are clamped as hlo/ir.h says; pad/concatenate/slice select the source).
//   - Target-independent: the only target facts are those LLVM's DataLayout gives.
//   - An opcode the emitter cannot handle throws hlo::Error naming the instruction and opcode.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Value.h>

#include "hlo/ir.h"
#include "targets/llvm/elemental_ops.h"

namespace llvm_codegen {

// A logical index into an array: one i64 value per dimension, in the order of Shape::dims()
// (logical, not physical; layouts only matter to IrArray).
using IrIndex = std::vector<llvm::Value*>;

// Whether MakeDotGenerator covers `dot`: float results from bf16/f16/f32/f64 operands, integer
// results from integer operands, any dimension numbers.
bool CanGenerateDot(const hlo::Instruction& dot);

// Produces the value (an LLVM scalar of IrType(element type)) of one element at an index.
// Called while the builder's insertion point is where the value is needed; a generator may emit
// control flow (e.g. the loop of a reduce) and leaves the builder after it.
using ElementGenerator = std::function<llvm::Value*(const IrIndex& index)>;

// LLVM type used for an element of `type` in registers: i1 for pred, iN for sN/uN, half /
// bfloat / float / double for floats. (In memory pred is i8; see IrArray.)
llvm::Type* IrType(hlo::PrimitiveType type, llvm::LLVMContext& context);

// An array in memory: a base pointer and a shape with its layout (minor_to_major).
// Loads and stores at a logical index compute the physical offset from the layout.
class IrArray {
 public:
  IrArray(llvm::Value* base, hlo::Shape shape) : base_(base), shape_(std::move(shape)) {}
  llvm::Value* base() const { return base_; }
  const hlo::Shape& shape() const { return shape_; }
  // Linear element offset (i64) of a logical index, following the layout.
  llvm::Value* LinearIndex(llvm::IRBuilder<>& b, const IrIndex& index) const;
  // Logical index of a physical linear offset (inverse of LinearIndex).
  IrIndex DelinearizeIndex(llvm::IRBuilder<>& b, llvm::Value* linear) const;
  llvm::Value* EmitLoad(llvm::IRBuilder<>& b, const IrIndex& index) const;  // register type
  void EmitStore(llvm::IRBuilder<>& b, const IrIndex& index, llvm::Value* value) const;
  // Marks loads/stores of this array as not aliasing other kernel arguments (noalias scopes
  // are the caller's business; this only sets alignment and invariant.load for read-only).
  void set_read_only(bool read_only) { read_only_ = read_only; }

 private:
  llvm::Value* base_;
  hlo::Shape shape_;
  bool read_only_ = false;
};

// Emits elementwise IR for one HLO instruction given generators for its operands.
class ElementalEmitter {
 public:
  ElementalEmitter(llvm::IRBuilder<>& builder, llvm::Module& module);
  virtual ~ElementalEmitter() = default;

  // The generator for `inst`, whose operands' elements come from `operands` (one per operand,
  // in order). Covers every opcode for which FusibleInEmitter() is true. Throws hlo::Error.
  // The generator is memoized: called again at the same index Values where its earlier value
  // dominates, it returns that value instead of emitting the element again. `inst` (and its
  // called computations) must outlive the generator, and IR it emitted must not be erased while
  // the emitter is in use (use one emitter per kernel function).
  ElementGenerator MakeGenerator(const hlo::Instruction& inst,
                                 std::vector<ElementGenerator> operands);
  // Every result of `inst`: one generator per result of a variadic reduce (sharing one loop per
  // index, each memoized), else the one of MakeGenerator.
  std::vector<ElementGenerator> MakeGenerators(const hlo::Instruction& inst,
                                               std::vector<ElementGenerator> operands);

  // The generator for the root of a fused (or any parameter-fed, side-effect-free) computation:
  // parameter i of `computation` reads its element from `parameters[i]`. Shared subexpressions
  // are emitted once per index (generators are memoized per index within one call).
  ElementGenerator MakeComputationGenerator(const hlo::Computation& computation,
                                            std::span<const ElementGenerator> parameters);
  // For a tuple root (a multi-output fusion): one generator per tuple element, sharing the
  // memoized subexpressions; for an array root, a vector of one.
  std::vector<ElementGenerator> MakeComputationGenerators(
      const hlo::Computation& computation, std::span<const ElementGenerator> parameters);

  // Ops FusibleInEmitter() leaves to the backends, for a backend that runs them as loop kernels
  // of their own (elemental_indexed.cc states the semantics): a gather without batching
  // dims from generators of its operand and start indices, and a one-input reduce-window from
  // generators of its input and (scalar) init value. Throw hlo::Error on what they cannot emit.
  ElementGenerator MakeGatherGenerator(const hlo::Instruction& gather, ElementGenerator operand,
                                       ElementGenerator indices);
  ElementGenerator MakeReduceWindowGenerator(const hlo::Instruction& reduce_window,
                                             ElementGenerator input, ElementGenerator init);
  // dot from generators of its operands: a loop nest over the contracting dims per output
  // element (elemental_dot.cc), for the types CanGenerateDot covers — what a backend's library
  // does not take (f64, integers) or a dot too small for one.
  ElementGenerator MakeDotGenerator(const hlo::Instruction& dot, ElementGenerator lhs,
                                    ElementGenerator rhs);
  // dynamic-update-slice over the operand, the update and the start indices (one scalar
  // generator per dimension, or one rank-1 generator).
  ElementGenerator MakeDynamicUpdateSliceGenerator(const hlo::Instruction& dus,
                                                   ElementGenerator operand,
                                                   ElementGenerator update,
                                                   std::vector<ElementGenerator> starts);

  // Applies a scalar computation (a reduce's or a map's to_apply) to scalar values: used by
  // backends for their own reduction loops (e.g. GPU warp shuffles).
  std::vector<llvm::Value*> EmitScalarComputation(const hlo::Computation& computation,
                                                  std::span<llvm::Value* const> arguments);

  llvm::IRBuilder<>& builder() { return b_; }
  llvm::Module& module() { return module_; }


 protected:
  // Hooks a backend may override (the GPU backend maps some math to libdevice-free NVVM
  // intrinsics, for instance). The defaults emit llvm_math.h's portable implementations.
  virtual llvm::Value* EmitExp(llvm::Value* x);
  virtual llvm::Value* EmitLog(llvm::Value* x);
  virtual llvm::Value* EmitTanh(llvm::Value* x);
  // Every f64 transcendental (exp, log, expm1, log1p, tanh, sin, cos, tan, pow, atan2, cbrt,
  // erf): the default calls the C library function of that name (readnone, no errno); a GPU
  // backend maps the names to its own (NVPTX cannot select llvm.exp.f64 and friends).
  virtual llvm::Value* EmitLibmCallF64(const std::string& name,
                                       std::vector<llvm::Value*> arguments);

 private:
  // One op family per file (docs/codegen.md): elemental_math.cc (elementwise arithmetic),
  // elemental_convert.cc (convert, bitcast-convert, reduce-precision, compare),
  // elemental_data_movement.cc, elemental_reduce.cc. Each returns a generator or throws.
  ElementGenerator MakeUnmemoizedGenerator(const hlo::Instruction& inst,
                                           std::vector<ElementGenerator> operands);
  ElementGenerator MakeElementwiseGenerator(const hlo::Instruction& inst,
                                            std::vector<ElementGenerator> operands);
  llvm::Value* EmitElementwise(const hlo::Instruction& inst, std::span<llvm::Value* const> values);
  llvm::Value* EmitFloatUnary(const hlo::Instruction& inst, llvm::Value* x);
  llvm::Value* EmitFloatBinary(const hlo::Instruction& inst, llvm::Value* x, llvm::Value* y);
  ElementGenerator MakeDataMovementGenerator(const hlo::Instruction& inst,
                                             std::vector<ElementGenerator> operands);
  ElementGenerator MakeConstantGenerator(const hlo::Instruction& inst);
  // Every result of a (possibly variadic) reduce, sharing one loop per index.
  std::vector<ElementGenerator> MakeReduceGenerators(const hlo::Instruction& inst,
                                                     std::vector<ElementGenerator> operands);

  llvm::IRBuilder<>& b_;
  llvm::Module& module_;
  // Array constants already placed in module_ (one private global per instruction).
  std::map<const hlo::Instruction*, llvm::GlobalVariable*> constant_globals_;
  // For each block the emitter created, a block that dominates it (from the structure of the
  // if/loop it built). Memoized values are reused in every block their block dominates, so a
  // reduce loop sees values computed before it. Blocks are assumed to outlive the emitter.
  std::map<llvm::BasicBlock*, llvm::BasicBlock*> dominating_block_;
};


}  // namespace llvm_codegen

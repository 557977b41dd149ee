// Lowers computations of an optimized module to ThunkSequences (thunk.h), emitting one LLVM
// function per generated kernel into a shared llvm::Module.
//
// What becomes what (every instruction of a computation, in schedule order):
//   parameter, constant, tuple, get-tuple-element, bitcast, opt-barrier,
//   reshape between default layouts           -> buffers / aliases only (no thunk)
//   fusion kLoop / kInput, and any standalone op the elemental emitter handles
//                                             -> generated kernel (KernelThunk); reductions
//                                                along the output's rows feeding the rest of
//                                                the fusion: one row kernel (row_kernel.h);
//                                                other reductions that feed other elements get
//                                                their own kernel into a scratch buffer first
//   dot, convolution (f32/bf16/f16, the forms contraction_thunks.h covers)
//                                             -> GEMM / Conv2D call
//   any other dot (f64, integers)             -> generated loop nest per element
//                                                (elemental_dot.cc)
//   fusion kOutput around such a contraction  -> GEMM / Conv2D into a scratch buffer with a
//                                                generated epilogue: per block while it is in
//                                                cache when the tail is elementwise over the
//                                                (f32, unbatched) result, else a kernel over
//                                                the whole output after the call
//   reduce-window (one input), gather         -> generated kernel (window_emitter.h,
//                                                gather_emitter.h)
//   while, conditional, call, and fusions of other kinds (kCustom, or a kOutput fusion
//   the library does not cover)               -> nested ThunkSequences, compiled the same way
//   dynamic-update-slice (default layouts)    -> runtime routine, in place when the target
//                                                dies there (Scope::TakeOver)
//   custom-call "TopK" (f32/bf16 rows)        -> runtime routine (topk_thunk.h)
//   sort                                      -> runtime merge sort + generated comparator
//                                                (sort_thunk.h)
//   scatter                                   -> generated kernel, in place when the operand
//                                                dies there (thunk_builder_scatter.cc)
//   select-and-scatter (no dilation)         -> generated kernel (thunk_builder_select_scatter.cc)
//   everything else the evaluator implements (rng, variadic
//   reduce-window, ...)                       -> counted EvaluatorThunk fallback
//   custom-call with a target nobody implements -> hlo::Error
//     "custom-call 'X' has no CPU implementation" at compile time.
// A kernel the emitter rejects is removed from the LLVM module and its instruction falls back
// (counted, with the emitter's message kept in `fallback_reasons`).
// Buffers: an instruction's result (and scratch) reuses the buffer of a value whose last
// reader ran earlier in the schedule (liveness through aliases; never for constants,
// parameters or values reaching the root), so memory follows the live set, not the module.
#pragma once

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "targets/cpu/contraction_thunks.h"
#include "targets/cpu/runtime_thunks.h"
#include "targets/cpu/thunk.h"

namespace cpu {

struct ThunkBuildResult {
  std::vector<KernelThunk*> kernels;                 // to resolve after JIT
  std::vector<WhileThunk*> compiled_loops;           // likewise (compiled_loop.h)
  std::vector<std::shared_ptr<TileEpilogue>> tile_epilogues;  // likewise
  std::vector<std::shared_ptr<JitFunction>> functions;        // likewise (sort comparators)
  std::map<std::string, double> counters;            // "thunks.kernel", "thunks.fallback", ...
  std::vector<std::string> fallback_reasons;         // "name (opcode): why"
};

class ThunkBuilder {
 public:
  ThunkBuilder(llvm::Module& module, const hlo::CustomCallRegistry* custom_calls);
  // `schedule` lists every instruction of `computation` in a valid order. `writable_carry`: the
  // parameter is a while loop's carry, owned by the loop (not the caller's memory), so a leaf
  // whose value dies at an instruction may become that instruction's result in place (a
  // dynamic-update-slice writing one row of a scan's output).
  std::unique_ptr<ThunkSequence> Build(const hlo::Computation& computation,
                                       const std::vector<const hlo::Instruction*>& schedule,
                                       bool writable_carry = false);
  ThunkBuildResult& result() { return result_; }

 private:
  struct Scope;
  ValueLayout Allocate(ThunkSequence& sequence, const hlo::Shape& shape, bool bound);
  // An instruction's result buffers, reusing dead values' buffers (Scope's pool).
  ValueLayout AllocateOutput(Scope& scope, const hlo::Shape& shape);
  void Lower(const hlo::Instruction& inst, Scope& scope);
  bool TryKernel(const hlo::Instruction& inst, Scope& scope, const ValueLayout& output);
  // Marks the carry leaves a while's body never writes (WhileThunk::set_borrowed_leaves).
  void BorrowReadOnlyLeaves(const hlo::Instruction& loop, WhileThunk& thunk);
  bool TryOutputFusion(const hlo::Instruction& inst, Scope& scope, const ValueLayout& output);
  // An input fusion whose reductions run along the output's rows as one row kernel
  // (thunk_builder_rows.cc); false when the fusion does not have that form.
  bool TryRowKernel(const hlo::Instruction& inst, Scope& scope, const ValueLayout& output);
  // A fusion (or reduce) ending in a reduction over leading dimensions, as a kernel that folds
  // the input row by row into the output (thunk_builder_columns.cc); false for other forms.
  bool TryColumnReduction(const hlo::Instruction& inst, Scope& scope, const ValueLayout& output);
  // scatter as one generated single-threaded kernel, in place when an operand dies here
  // (thunk_builder_scatter.cc); false for forms it does not cover. May rebind `output`.
  bool TryScatter(const hlo::Instruction& inst, Scope& scope, ValueLayout& output);
  // dynamic-update-slice as one generated single-threaded kernel, in place when the target
  // dies here (thunk_builder_dus.cc); false when the result's layout is not the target's. May
  // rebind `output`.
  bool TryDynamicUpdateSlice(const hlo::Instruction& inst, Scope& scope, ValueLayout& output);
  // select-and-scatter as one generated single-threaded kernel
  // (thunk_builder_select_scatter.cc); false for forms it does not cover (dilation).
  bool TrySelectAndScatter(const hlo::Instruction& inst, Scope& scope, const ValueLayout& output);
  void Fallback(const hlo::Instruction& inst, Scope& scope, const ValueLayout& output,
                const std::string& reason);
  // `loop_kernel`: the kernel came from EmitLoopKernel, whose rows skip leading size-1
  // dimensions (LoopKernelRows); other kernels split at the outer dimension (OuterRows).
  void AddKernelThunk(const std::string& hlo_name, Scope& scope, const std::string& symbol,
                      std::vector<int64_t> buffers, const hlo::Shape& iteration,
                      int64_t work_per_element = 1, bool loop_kernel = false);
  std::unique_ptr<ThunkSequence> BuildCallee(const hlo::Computation& callee,
                                             bool writable_carry = false);

  llvm::Module& module_;
  const hlo::CustomCallRegistry* custom_calls_;
  hlo::CustomCallRegistry builtin_calls_;
  ThunkBuildResult result_;
  std::set<std::string> kernel_names_;
  // Transposes whose value is their operand's bytes, read as a transposed B by their dots.
  std::set<const hlo::Instruction*> read_transposed_;
};

}  // namespace cpu

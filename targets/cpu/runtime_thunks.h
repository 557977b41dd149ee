// The CPU backend's thunks other than GEMM/convolution (contraction_thunks.h):
//   KernelThunk       launches a generated kernel (kernel_emitter.h) over the thread pool,
//                     split by outer physical rows;
//   WhileThunk        runs condition and body ThunkSequences until the condition is false;
//   ConditionalThunk  picks a branch (pred: true -> 0, false -> 1; s32 out of range -> last);
//   CallThunk         runs a callee sequence;
//   EvaluatorThunk    the counted fallback: evaluates one instruction (or a fused computation)
//                     with hlo/'s reference evaluator on literals.
// Each writes only its own output buffers, leaf by leaf (see thunk.h).
#pragma once

#include <memory>
#include <vector>

#include "hlo/evaluator.h"
#include "hlo/ir.h"
#include "targets/cpu/thunk.h"

namespace cpu {

using KernelFunction = void (*)(void** buffers, int64_t begin, int64_t end);
// compiled_loop.h
using LoopCallback = int32_t (*)(void* runtime, int32_t sequence, int64_t thunk);
using CompiledLoopFunction = int64_t (*)(uint8_t* const* condition_buffers,
                                         uint8_t* const* body_buffers, int64_t limit,
                                         void* runtime, LoopCallback callback);

class KernelThunk final : public Thunk {
 public:
  // buffers: operand ids, then output ids, in the kernel's buffers[] order.
  KernelThunk(std::string name, std::string symbol, std::vector<int64_t> buffers, int64_t rows,
              int64_t elements_per_row);
  const char* kind() const override { return "kernel"; }
  const std::string& symbol() const { return symbol_; }
  void set_symbol(std::string symbol) { symbol_ = std::move(symbol); }
  const std::vector<int64_t>& buffer_ids() const { return buffers_; }
  int64_t rows() const { return rows_; }
  int64_t elements_per_row() const { return elements_per_row_; }
  void set_function(KernelFunction function) { function_ = function; }
  void Run(ThunkSequence& sequence, RunContext& context) override;
  // Whether Run calls the kernel once on this thread (too little work for the pool, or no
  // pool); WorkIsSmall: whatever the pool.
  bool RunsInline(const RunContext& context) const;
  bool WorkIsSmall() const;
  KernelFunction function() const { return function_; }

 private:
  std::string symbol_;
  std::vector<int64_t> buffers_;
  int64_t rows_;
  int64_t elements_per_row_;
  KernelFunction function_ = nullptr;
};

class WhileThunk final : public Thunk {
 public:
  WhileThunk(std::string name, ValueLayout init, ValueLayout state,
             std::unique_ptr<ThunkSequence> condition, std::unique_ptr<ThunkSequence> body);
  const char* kind() const override { return "while"; }
  void Run(ThunkSequence& sequence, RunContext& context) override;

  // The loop compiled into one function (compiled_loop.h), when EmitCompiledLoop made one.
  const std::string& compiled_symbol() const { return compiled_symbol_; }
  void set_compiled_symbol(std::string symbol) { compiled_symbol_ = std::move(symbol); }
  void set_compiled_function(CompiledLoopFunction function) { compiled_ = function; }
  // Carry leaves the body passes through unchanged (its root returns the parameter's leaf) are
  // read where the init value is, not copied into the loop's state; `read_after` says which of
  // them the while's users read, copied out once the loop ends. (A loop-invariant input of a
  // scan — its whole sequence — was copied on every run.)
  void set_borrowed_leaves(std::vector<bool> borrowed, std::vector<bool> read_after) {
    borrowed_ = std::move(borrowed);
    read_after_ = std::move(read_after);
  }

 private:
  ValueLayout init_, state_;
  std::vector<bool> borrowed_, read_after_;  // per carry leaf; empty: none
  std::unique_ptr<ThunkSequence> condition_, body_;
  std::string compiled_symbol_;
  CompiledLoopFunction compiled_ = nullptr;
};

class ConditionalThunk final : public Thunk {
 public:
  ConditionalThunk(std::string name, int64_t selector, hlo::PrimitiveType selector_type,
                   std::vector<ValueLayout> branch_operands, ValueLayout output,
                   std::vector<std::unique_ptr<ThunkSequence>> branches);
  const char* kind() const override { return "conditional"; }
  void Run(ThunkSequence& sequence, RunContext& context) override;

 private:
  int64_t selector_;
  hlo::PrimitiveType selector_type_;
  std::vector<ValueLayout> branch_operands_;
  ValueLayout output_;
  std::vector<std::unique_ptr<ThunkSequence>> branches_;
};

class CallThunk final : public Thunk {
 public:
  CallThunk(std::string name, std::vector<ValueLayout> operands, ValueLayout output,
            std::unique_ptr<ThunkSequence> callee);
  const char* kind() const override { return "call"; }
  void Run(ThunkSequence& sequence, RunContext& context) override;

 private:
  std::vector<ValueLayout> operands_;
  ValueLayout output_;
  std::unique_ptr<ThunkSequence> callee_;
};

class EvaluatorThunk final : public Thunk {
 public:
  // Evaluates `computation` (owned: an island around one instruction; or borrowed: a fused
  // computation of the module) with the operand values as its parameters.
  EvaluatorThunk(std::string name, std::unique_ptr<hlo::Computation> owned,
                 const hlo::Computation* computation, std::vector<ValueLayout> operands,
                 ValueLayout output, const hlo::CustomCallRegistry* custom_calls);
  const char* kind() const override { return "fallback"; }
  void Run(ThunkSequence& sequence, RunContext& context) override;

 private:
  std::unique_ptr<hlo::Computation> owned_;
  const hlo::Computation* computation_;
  std::vector<ValueLayout> operands_;
  ValueLayout output_;
  const hlo::CustomCallRegistry* custom_calls_;
};

// A computation holding parameters for `instruction`'s operands and a copy of it as the root
// (same opcode, shape, attributes, called computations): what EvaluatorThunk runs.
std::unique_ptr<hlo::Computation> MakeIsland(const hlo::Instruction& instruction);

// Reads a value's leaves out of `sequence` as a literal, and writes a literal into them.
hlo::Literal ReadValue(const ThunkSequence& sequence, const ValueLayout& value);
void WriteValue(ThunkSequence& sequence, const ValueLayout& value, const hlo::Literal& literal);
std::vector<uint8_t*> LeafPointers(const ThunkSequence& sequence, const ValueLayout& value);
std::vector<int64_t> LeafBytes(const ValueLayout& value);

}  // namespace cpu

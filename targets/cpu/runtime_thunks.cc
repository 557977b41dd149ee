// Runtime thunks: kernel launch, control flow, dynamic-update-slice and the evaluator fallback
// (see runtime_thunks.h).
#include "targets/cpu/runtime_thunks.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <utility>

#include "hlo/progress.h"

namespace cpu {

// ---- value helpers -------------------------------------------------------------------------

std::vector<uint8_t*> LeafPointers(const ThunkSequence& sequence, const ValueLayout& value) {
  std::vector<const ValueLayout*> leaves;
  CollectLeaves(value, leaves);
  std::vector<uint8_t*> pointers;
  for (const ValueLayout* leaf : leaves) pointers.push_back(sequence.buffer(leaf->buffer));
  return pointers;
}

std::vector<int64_t> LeafBytes(const ValueLayout& value) {
  std::vector<const ValueLayout*> leaves;
  CollectLeaves(value, leaves);
  std::vector<int64_t> bytes;
  for (const ValueLayout* leaf : leaves) bytes.push_back(ArrayByteSize(leaf->shape));
  return bytes;
}

hlo::Literal ReadValue(const ThunkSequence& sequence, const ValueLayout& value) {
  if (!value.shape.IsTuple()) return PhysicalToLiteral(value.shape, sequence.buffer(value.buffer));
  std::vector<hlo::Literal> elements;
  for (const ValueLayout& element : value.elements) elements.push_back(ReadValue(sequence, element));
  return hlo::Literal::Tuple(std::move(elements));
}

void WriteValue(ThunkSequence& sequence, const ValueLayout& value, const hlo::Literal& literal) {
  if (!value.shape.IsTuple()) {
    LiteralToPhysical(literal, value.shape, sequence.buffer(value.buffer));
    return;
  }
  if (literal.elements().size() != value.elements.size())
    throw hlo::Error("cpu backend: tuple result arity mismatch");
  for (size_t i = 0; i < value.elements.size(); ++i)
    WriteValue(sequence, value.elements[i], literal.elements()[i]);
}

// ---- KernelThunk ---------------------------------------------------------------------------

KernelThunk::KernelThunk(std::string name, std::string symbol, std::vector<int64_t> buffers,
                         int64_t rows, int64_t elements_per_row)
    : Thunk(std::move(name)), symbol_(std::move(symbol)), buffers_(std::move(buffers)),
      rows_(rows), elements_per_row_(elements_per_row) {}

// Below ~32K elements a thread hand-off costs more than it saves.
constexpr int64_t kElementsPerChunk = 1 << 15;

bool KernelThunk::WorkIsSmall() const {
  const int64_t total = rows_ * std::max<int64_t>(elements_per_row_, 1);
  return total < 2 * kElementsPerChunk || rows_ < 2;
}

bool KernelThunk::RunsInline(const RunContext& context) const {
  return context.pool == nullptr || WorkIsSmall();
}

void KernelThunk::Run(ThunkSequence& sequence, RunContext& context) {
  if (function_ == nullptr) throw hlo::Error("cpu backend: kernel " + symbol_ + " was not compiled");
  // The argument array on the stack for the usual few buffers: a kernel in a loop body runs
  // once per trip, and an allocation would cost more than a scalar kernel.
  constexpr size_t kInlineArgs = 16;
  void* inline_args[kInlineArgs];
  std::vector<void*> heap_args;
  void** args = inline_args;
  if (buffers_.size() > kInlineArgs) {
    heap_args.resize(buffers_.size());
    args = heap_args.data();
  }
  for (size_t i = 0; i < buffers_.size(); ++i) args[i] = sequence.buffer(buffers_[i]);
  if (RunsInline(context)) {
    function_(args, 0, rows_);
    return;
  }
  const int64_t min_rows =
      std::max<int64_t>(1, kElementsPerChunk / std::max<int64_t>(elements_per_row_, 1));
  KernelFunction function = function_;
  context.pool->ParallelFor(rows_, min_rows,
                            [function, args](int64_t b, int64_t e) { function(args, b, e); });
}

// ---- WhileThunk ----------------------------------------------------------------------------

WhileThunk::WhileThunk(std::string name, ValueLayout init, ValueLayout state,
                       std::unique_ptr<ThunkSequence> condition,
                       std::unique_ptr<ThunkSequence> body)
    : Thunk(std::move(name)), init_(std::move(init)), state_(std::move(state)),
      condition_(std::move(condition)), body_(std::move(body)) {}

namespace {

// What a compiled loop's callback needs to run a thunk it does not call itself.
struct LoopRuntime {
  ThunkSequence* condition;
  ThunkSequence* body;
  RunContext* context;
  std::exception_ptr error;  // a thunk's exception, rethrown once the loop has returned
};

// The callback of compiled loops (compiled_loop.h): no exception crosses the generated code.
int32_t RunLoopThunk(void* opaque, int32_t sequence, int64_t thunk) {
  auto* runtime = static_cast<LoopRuntime*>(opaque);
  ThunkSequence& steps = sequence == 0 ? *runtime->condition : *runtime->body;
  ++runtime->context->loop_callback_thunks;
  try {
    steps.thunks()[static_cast<size_t>(thunk)]->Run(steps, *runtime->context);
    return 0;
  } catch (...) {
    runtime->error = std::current_exception();
    return 1;
  }
}

}  // namespace

// A loop runs as one compiled function (compiled_loop.h) unless its carry needs staging.
// Otherwise, per trip: bind, run, copy the carry back; nothing is allocated and nothing looked
// up by name (the loop's thunks are timed together, as the while, not one by one: timing each
// trip's kernels would cost more than a scalar body).
void WhileThunk::Run(ThunkSequence& sequence, RunContext& context) {
  const std::vector<uint8_t*> out = LeafPointers(sequence, state_);
  const std::vector<uint8_t*> init = LeafPointers(sequence, init_);
  std::vector<int64_t> bytes = LeafBytes(state_);
  // Read-only leaves are read where the init value is (CopyLeaves skips a leaf whose source is
  // its destination); the rest start as copies in the while's own buffers.
  std::vector<uint8_t*> state = out;
  for (size_t i = 0; i < borrowed_.size() && i < state.size(); ++i)
    if (borrowed_[i]) state[i] = init[i];
  CopyLeaves(init, state, bytes);
  // ... and are copied out once the loop ends, where the while's result is read.
  auto copy_out = [&] {
    for (size_t i = 0; i < borrowed_.size() && i < out.size(); ++i)
      if (borrowed_[i] && read_after_[i])
        std::memcpy(out[i], init[i], static_cast<size_t>(bytes[i]));
  };
  // The loop's thunks are not timed one by one; the per-thunk map is back however it ends.
  struct Untimed {
    RunContext& context;
    std::map<std::string, double>* kernel_ms;
    ~Untimed() { context.kernel_ms = kernel_ms; }
  } untimed{context, std::exchange(context.kernel_ms, nullptr)};
  const int64_t limit = hlo::GlobalLimits().max_while_iterations;
  hlo::LoopProgressScope progress(name());  // a compiled loop reports no trips
  if (compiled_ != nullptr) {
    ++context.compiled_loops;
    condition_->BindParameters(state);
    body_->BindParameters(state);
    LoopRuntime runtime{condition_.get(), body_.get(), &context, nullptr};
    const int64_t trips = compiled_(condition_->buffer_table(), body_->buffer_table(), limit,
                                    &runtime, &RunLoopThunk);
    if (trips == -2) std::rethrow_exception(runtime.error);
    if (trips < 0)
      throw hlo::Error("cpu backend: while loop " + name() + " exceeded " +
                       std::to_string(limit) + " iterations");
    copy_out();
    return;
  }
  ++context.thunk_loops;
  std::vector<uint8_t*> predicate, results;
  for (int64_t iteration = 0;; ++iteration) {
    progress.Trip(iteration);
    condition_->BindParameters(state);
    condition_->Run(context);
    condition_->RootLeavesInto(predicate);
    if (*predicate.at(0) == 0) {
      copy_out();
      return;
    }
    if (iteration >= limit)
      throw hlo::Error("cpu backend: while loop " + name() + " exceeded " +
                       std::to_string(limit) + " iterations");
    body_->BindParameters(state);
    body_->Run(context);
    body_->RootLeavesInto(results);
    CopyLeaves(results, state, bytes);
  }
}

// ---- ConditionalThunk ----------------------------------------------------------------------

ConditionalThunk::ConditionalThunk(std::string name, int64_t selector,
                                   hlo::PrimitiveType selector_type,
                                   std::vector<ValueLayout> branch_operands, ValueLayout output,
                                   std::vector<std::unique_ptr<ThunkSequence>> branches)
    : Thunk(std::move(name)), selector_(selector), selector_type_(selector_type),
      branch_operands_(std::move(branch_operands)), output_(std::move(output)),
      branches_(std::move(branches)) {}

void ConditionalThunk::Run(ThunkSequence& sequence, RunContext& context) {
  const uint8_t* selector = sequence.buffer(selector_);
  const int64_t count = static_cast<int64_t>(branches_.size());
  int64_t branch = 0;
  if (selector_type_ == hlo::PrimitiveType::kPred) {
    branch = *selector != 0 ? 0 : 1;
  } else {
    int32_t index = 0;
    std::memcpy(&index, selector, sizeof(index));
    branch = (index < 0 || index >= count) ? count - 1 : index;
  }
  ThunkSequence& callee = *branches_[static_cast<size_t>(branch)];
  callee.BindParameters(LeafPointers(sequence, branch_operands_[static_cast<size_t>(branch)]));
  callee.Run(context);
  CopyLeaves(callee.RootLeaves(), LeafPointers(sequence, output_), LeafBytes(output_));
}

// ---- CallThunk -----------------------------------------------------------------------------

CallThunk::CallThunk(std::string name, std::vector<ValueLayout> operands, ValueLayout output,
                     std::unique_ptr<ThunkSequence> callee)
    : Thunk(std::move(name)), operands_(std::move(operands)), output_(std::move(output)),
      callee_(std::move(callee)) {}

void CallThunk::Run(ThunkSequence& sequence, RunContext& context) {
  std::vector<uint8_t*> leaves;
  for (const ValueLayout& operand : operands_) {
    std::vector<uint8_t*> more = LeafPointers(sequence, operand);
    leaves.insert(leaves.end(), more.begin(), more.end());
  }
  callee_->BindParameters(leaves);
  callee_->Run(context);
  CopyLeaves(callee_->RootLeaves(), LeafPointers(sequence, output_), LeafBytes(output_));
}

// ---- EvaluatorThunk ------------------------------------------------------------------------

std::unique_ptr<hlo::Computation> MakeIsland(const hlo::Instruction& instruction) {
  auto island = std::make_unique<hlo::Computation>("island." + instruction.name());
  std::vector<hlo::Instruction*> parameters;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    std::string name = "p";  // (appending avoids GCC 12's -Wrestrict false positive on "p" + s)
    name += std::to_string(i);
    auto parameter = std::make_unique<hlo::Instruction>(std::move(name), hlo::Opcode::kParameter,
                                                        instruction.operand(i)->shape());
    parameter->set_attrs(hlo::ParameterAttrs{i});
    parameters.push_back(island->AddInstruction(std::move(parameter)));
  }
  auto copy = std::make_unique<hlo::Instruction>(instruction.name(), instruction.opcode(),
                                                 instruction.shape());
  copy->set_attrs(instruction.attrs());
  copy->mutable_opaque_attributes() = instruction.opaque_attributes();
  copy->mutable_called_computations() = instruction.called_computations();
  copy->set_location(instruction.location());
  for (hlo::Instruction* parameter : parameters) copy->AppendOperand(parameter);
  island->set_root(island->AddInstruction(std::move(copy)));
  return island;
}

EvaluatorThunk::EvaluatorThunk(std::string name, std::unique_ptr<hlo::Computation> owned,
                               const hlo::Computation* computation,
                               std::vector<ValueLayout> operands, ValueLayout output,
                               const hlo::CustomCallRegistry* custom_calls)
    : Thunk(std::move(name)), owned_(std::move(owned)),
      computation_(owned_ ? owned_.get() : computation), operands_(std::move(operands)),
      output_(std::move(output)), custom_calls_(custom_calls) {}

void EvaluatorThunk::Run(ThunkSequence& sequence, RunContext& context) {
  std::vector<hlo::Literal> arguments;
  arguments.reserve(operands_.size());
  for (const ValueLayout& operand : operands_) arguments.push_back(ReadValue(sequence, operand));
  std::vector<const hlo::Literal*> pointers;
  for (const hlo::Literal& argument : arguments) pointers.push_back(&argument);
  hlo::EvaluatorOptions options;
  options.custom_calls = custom_calls_;
  options.device = context.device;  // a collective meets the other devices' runs
  WriteValue(sequence, output_, hlo::EvaluateComputation(*computation_, pointers, options));
}

}  // namespace cpu

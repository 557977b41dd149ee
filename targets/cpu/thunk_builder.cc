// Instruction -> thunk lowering for the CPU backend (see thunk_builder.h).
#include "targets/cpu/thunk_builder.h"

#include "targets/cpu/compiled_loop.h"

#include <algorithm>
#include <cstdint>
#include <functional>

#include "compiler/memory/schedule.h"
#include "compiler/memory/value_sizes.h"
#include "compiler/passes/dot_canonicalizer.h"
#include "targets/cpu/contraction_thunks.h"
#include "targets/cpu/description.h"
#include "targets/cpu/gather_emitter.h"
#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/sort_thunk.h"
#include "targets/cpu/thunk_builder_internal.h"
#include "targets/cpu/topk_thunk.h"
#include "targets/cpu/window_emitter.h"

namespace cpu {

using hlo::Instruction;
using hlo::Opcode;

namespace {

using builder_internal::Describe;

// Collectives and partition-id / replica-id: what depends on the device a run is.
bool IsCollective(Opcode opcode) {
  return hlo::OpcodeClass(opcode) == hlo::OpClass::kCollective;
}

// Whether `inst` is its operand 0's bytes with the last two dimensions swapped: such a
// transpose, or a loop fusion of one (after reshapes / bitcasts between row-major layouts,
// which move no bytes) — what the dot canonicalizer leaves for a weight stored [n, k].
bool IsTransposedView(const Instruction& inst) {
  if (compiler::SwapsLastTwoDims(inst)) return true;
  if (inst.opcode() != Opcode::kFusion || inst.operand_count() != 1 ||
      inst.attr<hlo::FusionAttrs>().kind != hlo::FusionKind::kLoop)
    return false;
  const Instruction* root = inst.called_computations().at(0)->root();
  if (!compiler::SwapsLastTwoDims(*root)) return false;
  const Instruction* value = root->operand(0);
  while (value->opcode() == Opcode::kReshape || value->opcode() == Opcode::kBitcast) {
    if (!value->shape().HasDefaultLayout() || value->shape().type != root->shape().type)
      return false;
    value = value->operand(0);
  }
  return value->opcode() == Opcode::kParameter && value->shape().HasDefaultLayout() &&
         value->shape().type == root->shape().type;
}

// A transposed view read only as an operand of dots the GEMM runs: those dots read its operand
// as a transposed A or B (contraction_thunks.h), so it moves no bytes (XLA's layout assignment
// turns the same transpose into a bitcast). gemma3's 262,144 x 1,152 embedding and its MLP
// weights were copied on every run only to be read once by their dots, a training step's
// activations to be read once by a weight gradient's dot.
bool FoldsIntoDots(const Instruction& inst) {
  if (inst.users().empty() || !IsTransposedView(inst)) return false;
  if (inst.parent() != nullptr && inst.parent()->root() == &inst) return false;
  for (const Instruction* user : inst.users())
    if (user->opcode() != Opcode::kDot || !GemmCoversDot(*user)) return false;
  return true;
}

}  // namespace

ThunkBuilder::ThunkBuilder(llvm::Module& module, const hlo::CustomCallRegistry* custom_calls)
    : module_(module), custom_calls_(custom_calls) {
  hlo::RegisterBuiltinCustomCalls(builtin_calls_);
}

ValueLayout ThunkBuilder::Allocate(ThunkSequence& sequence, const hlo::Shape& shape, bool bound) {
  ValueLayout value;
  value.shape = shape;
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes)
      value.elements.push_back(Allocate(sequence, element, bound));
    return value;
  }
  value.buffer = bound ? sequence.AddBoundBuffer()
                       : sequence.AddOwnedBuffer(shape.IsArray() ? ArrayByteSize(shape) : 0);
  return value;
}

ValueLayout ThunkBuilder::AllocateOutput(Scope& scope, const hlo::Shape& shape) {
  ValueLayout value;
  value.shape = shape;
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes)
      value.elements.push_back(AllocateOutput(scope, element));
    return value;
  }
  value.buffer = scope.Acquire(shape.IsArray() ? ArrayByteSize(shape) : 0, scope.outputs_acquired);
  return value;
}

std::unique_ptr<ThunkSequence> ThunkBuilder::Build(
    const hlo::Computation& computation, const std::vector<const Instruction*>& schedule,
    bool writable_carry) {
  auto sequence = std::make_unique<ThunkSequence>(computation.name());
  Scope scope{*sequence, {}, {}, {}, {}};
  for (const Instruction* parameter : computation.parameters()) {
    if (parameter == nullptr)
      throw hlo::Error(computation.location(), "cpu backend: computation '" +
                                                   computation.name() + "' has a parameter gap");
    sequence->mutable_parameters().push_back(Allocate(*sequence, parameter->shape(), true));
    scope.values[parameter] = sequence->mutable_parameters().back();
  }
  // Buffer reuse: an instruction's own buffers become free after the last instruction that
  // reads its value directly or through aliases (compiler::memory::IsAliasing's, reshape:
  // conservatively all of them; transposes the dots read through);
  // values reaching the root never do.
  std::map<const Instruction*, size_t> position;
  for (size_t t = 0; t < schedule.size(); ++t) position[schedule[t]] = t;
  constexpr size_t kNever = SIZE_MAX;
  std::map<const Instruction*, size_t> release;
  std::function<size_t(const Instruction*)> release_after = [&](const Instruction* inst) {
    if (auto it = release.find(inst); it != release.end()) return it->second;
    size_t last = inst == computation.root() ? kNever : position.at(inst);
    for (const Instruction* user : inst->users()) {
      if (last == kNever) break;
      const bool alias = compiler::memory::IsAliasing(*user) ||
                         user->opcode() == Opcode::kReshape || FoldsIntoDots(*user);
      last = std::max(last, alias ? release_after(user) : position.at(user));
    }
    release[inst] = last;
    return last;
  };
  std::vector<std::vector<int64_t>> free_after(schedule.size());
  // A loop carry's leaf dies after the last reader of every get-tuple-element of it; a carry
  // the body reads otherwise than through get-tuple-element (passed whole to a call, say) is
  // left alone, as are leaves that reach the root unchanged.
  std::vector<std::vector<int64_t>> carry_free_after(schedule.size());
  if (writable_carry && computation.parameter_count() == 1) {
    const Instruction* carry = computation.parameter(0);
    const ValueLayout& layout = sequence->parameters().at(0);
    bool only_elements = carry->shape().IsTuple();
    std::map<int64_t, size_t> last_reader;  // tuple index -> position
    for (const Instruction* user : carry->users()) {
      if (user->opcode() != Opcode::kGetTupleElement || !user->shape().IsArray()) {
        only_elements = false;
        break;
      }
      const int64_t index = user->attr<hlo::TupleIndexAttrs>().index;
      const size_t last = release_after(user);
      auto [it, inserted] = last_reader.emplace(index, last);
      if (!inserted) it->second = std::max(it->second, last);
    }
    for (const auto& [index, last] : only_elements ? last_reader : std::map<int64_t, size_t>{}) {
      if (last == kNever || index < 0 || index >= static_cast<int64_t>(layout.elements.size()))
        continue;
      carry_free_after[last].push_back(layout.elements[static_cast<size_t>(index)].buffer);
    }
  }
  for (size_t t = 0; t < schedule.size(); ++t) {
    const Instruction* inst = schedule[t];
    if (inst->opcode() == Opcode::kParameter) continue;
    scope.dying = &free_after[t];
    scope.carry_dying = &carry_free_after[t];
    Lower(*inst, scope);
    const size_t last = release_after(inst);
    if (last != kNever)
      free_after[last].insert(free_after[last].end(), scope.outputs_acquired.begin(),
                              scope.outputs_acquired.end());
    scope.outputs_acquired.clear();
    // Scratch is free once this instruction's thunks ran; dead values after their last reader.
    for (int64_t id : scope.scratch_acquired) scope.Release(id);
    scope.scratch_acquired.clear();
    for (int64_t id : free_after[t]) scope.Release(id);
  }
  sequence->set_root(scope[computation.root()]);
  return sequence;
}

std::unique_ptr<ThunkSequence> ThunkBuilder::BuildCallee(const hlo::Computation& callee,
                                                         bool writable_carry) {
  return Build(callee, compiler::ScheduleComputation(callee), writable_carry);
}

// A flat carry's leaf i is read-only when the body's root returns get-tuple-element(parameter,
// i) unchanged: nothing in the body can write it then (an in-place update takes over only a
// buffer whose value dies at it, and this one lives to the root). It is read after the loop
// when a user of the while is anything but a get-tuple-element of another index.
void ThunkBuilder::BorrowReadOnlyLeaves(const Instruction& loop, WhileThunk& thunk) {
  const hlo::Shape& carry = loop.shape();
  if (!carry.IsTuple()) return;
  for (const hlo::Shape& element : carry.tuple_shapes)
    if (!element.IsArray()) return;
  const hlo::Computation& body = *loop.called_computations().at(1);
  const Instruction* root = body.root();
  if (root->opcode() != Opcode::kTuple ||
      static_cast<size_t>(root->operand_count()) != carry.tuple_shapes.size())
    return;
  const size_t leaves = carry.tuple_shapes.size();
  std::vector<bool> borrowed(leaves, false), read_after(leaves, false);
  for (size_t i = 0; i < leaves; ++i) {
    const Instruction* element = root->operand(static_cast<int64_t>(i));
    borrowed[i] = element->opcode() == Opcode::kGetTupleElement &&
                  element->operand(0)->opcode() == Opcode::kParameter &&
                  element->attr<hlo::TupleIndexAttrs>().index == static_cast<int64_t>(i);
  }
  const bool is_root = loop.parent() != nullptr && loop.parent()->root() == &loop;
  for (const Instruction* user : loop.users()) {
    if (user->opcode() == Opcode::kGetTupleElement) {
      read_after[static_cast<size_t>(user->attr<hlo::TupleIndexAttrs>().index)] = true;
    } else {
      read_after.assign(leaves, true);
    }
  }
  if (is_root) read_after.assign(leaves, true);
  result_.counters["while.read_only_leaves"] +=
      static_cast<double>(std::count(borrowed.begin(), borrowed.end(), true));
  thunk.set_borrowed_leaves(std::move(borrowed), std::move(read_after));
}

void ThunkBuilder::Lower(const Instruction& inst, Scope& scope) {
  ThunkSequence& sequence = scope.sequence;
  switch (inst.opcode()) {
    case Opcode::kConstant: {
      ValueLayout value = Allocate(sequence, inst.shape(), false);
      WriteValue(sequence, value, inst.attr<hlo::ConstantAttrs>().literal);
      std::vector<const ValueLayout*> leaves;
      CollectLeaves(value, leaves);
      for (const ValueLayout* leaf : leaves) sequence.MarkPreset(leaf->buffer);
      scope.values[&inst] = std::move(value);
      return;
    }
    case Opcode::kTuple: {
      ValueLayout value;
      value.shape = inst.shape();
      for (const Instruction* operand : inst.operands()) value.elements.push_back(scope[operand]);
      scope.values[&inst] = std::move(value);
      return;
    }
    case Opcode::kGetTupleElement: {
      const ValueLayout& tuple = scope[inst.operand(0)];
      const int64_t index = inst.attr<hlo::TupleIndexAttrs>().index;
      if (index < 0 || index >= static_cast<int64_t>(tuple.elements.size()))
        throw hlo::Error(inst.location(), "cpu backend: tuple index out of range in " + Describe(inst));
      scope.values[&inst] = tuple.elements[static_cast<size_t>(index)];
      return;
    }
    case Opcode::kOptimizationBarrier:
    case Opcode::kCustomCall:
      // Opt-barrier, or an annotation custom-call: the operand's value, no code, no copy.
      if (compiler::memory::IsAliasing(inst)) {
        scope.values[&inst] = scope[inst.operand(0)];
        if (inst.opcode() == Opcode::kCustomCall) result_.counters["annotations.aliased"] += 1;
        return;
      }
      break;
    case Opcode::kBitcast: {
      // A bitcast reinterprets the operand's physical bytes (hlo/ir.h): same buffer.
      const ValueLayout& operand = scope[inst.operand(0)];
      if (operand.shape.IsArray() && inst.shape().IsArray() &&
          ArrayByteSize(operand.shape) == ArrayByteSize(inst.shape())) {
        scope.values[&inst] = ValueLayout{inst.shape(), operand.buffer, {}};
        return;
      }
      break;
    }
    case Opcode::kTranspose:
    case Opcode::kFusion: {
      if (!FoldsIntoDots(inst)) break;
      const ValueLayout& operand = scope[inst.operand(0)];
      if (operand.shape.IsArray() && operand.shape.HasDefaultLayout()) {
        // The value's bytes stay the operand's ([..., n, k]); only the dots read them.
        scope.values[&inst] = ValueLayout{inst.shape(), operand.buffer, {}};
        read_transposed_.insert(&inst);
        result_.counters["transposes.read-by-gemm"] += 1;
        return;
      }
      break;
    }
    case Opcode::kReshape: {
      // Between row-major layouts a reshape moves no bytes.
      const ValueLayout& operand = scope[inst.operand(0)];
      if (operand.shape.IsArray() && operand.shape.HasDefaultLayout() &&
          inst.shape().HasDefaultLayout() && operand.shape.type == inst.shape().type) {
        scope.values[&inst] = ValueLayout{inst.shape(), operand.buffer, {}};
        return;
      }
      break;
    }
    default:
      break;
  }
  ValueLayout output = AllocateOutput(scope, inst.shape());
  scope.values[&inst] = output;
  if (IsCollective(inst.opcode())) {
    // Run by the evaluator's collectives, which meet the other devices' runs in this process
    // (RunContext::device) and exchange operands through shared memory.
    Fallback(inst, scope, output, "collective: exchanged with the other devices in process");
    return;
  }
  auto operand_buffer = [&](int64_t i) { return scope[inst.operand(i)].buffer; };
  if (std::optional<hlo::PrimitiveType> type =
          compiler::HostElementType(inst, targets::CpuDescription())) {
    std::string reason = "element type ";
    reason += hlo::PrimitiveTypeName(*type);
    reason += " has no generated form";
    Fallback(inst, scope, output, reason);
    return;
  }

  switch (inst.opcode()) {
    case Opcode::kFusion: {
      const hlo::FusionKind kind = inst.attr<hlo::FusionAttrs>().kind;
      if ((kind == hlo::FusionKind::kLoop || kind == hlo::FusionKind::kInput) &&
          TryKernel(inst, scope, output))
        return;
      if (kind == hlo::FusionKind::kOutput && TryOutputFusion(inst, scope, output)) return;
      // Anything else (kCustom fusions from other compilers, e.g. XNNPACK's) runs its fused
      // computation as a nested thunk sequence, op by op: dots still reach the GEMM.
      std::vector<ValueLayout> operands;
      for (const Instruction* operand : inst.operands()) operands.push_back(scope[operand]);
      result_.counters["thunks.fusion-as-call"] += 1;
      sequence.AddThunk(std::make_unique<CallThunk>(
          inst.name(), std::move(operands), output, BuildCallee(*inst.called_computations().at(0))));
      return;
    }
    case Opcode::kDot:
    case Opcode::kConvolution: {
      const bool lhs_transposed = read_transposed_.count(inst.operand(0)) != 0;
      const bool rhs_transposed = read_transposed_.count(inst.operand(1)) != 0;
      if (auto thunk = MakeContractionThunk(inst, inst.name(), operand_buffer(0),
                                            operand_buffer(1), output.buffer, nullptr,
                                            lhs_transposed, rhs_transposed)) {
        result_.counters[inst.opcode() == Opcode::kDot ? "thunks.gemm" : "thunks.conv"] += 1;
        sequence.AddThunk(std::move(thunk));
        return;
      }
      if (lhs_transposed || rhs_transposed)  // FoldsIntoDots promised the GEMM would take it
        throw hlo::Error(inst.location(), "cpu backend: internal: " + Describe(inst) +
                                              " reads a transposed operand but has no GEMM thunk");
      // Types the GEMM does not take (f64, integers): a generated loop nest per element.
      if (llvm_codegen::CanGenerateDot(inst)) {
        const double fallbacks = result_.counters["thunks.fallback"];
        if (TryKernel(inst, scope, output)) {  // true also when it fell back after all
          if (result_.counters["thunks.fallback"] == fallbacks)
            result_.counters["thunks.dot-loop"] += 1;
          return;
        }
      }
      Fallback(inst, scope, output, "contraction form not covered by gemm.h");
      return;
    }
    case Opcode::kWhile: {
      auto condition = BuildCallee(*inst.called_computations().at(0));
      auto body = BuildCallee(*inst.called_computations().at(1), /*writable_carry=*/true);
      result_.counters["thunks.while"] += 1;
      std::optional<std::string> compiled = EmitCompiledLoop(module_, inst.name(), *condition, *body);
      auto loop = std::make_unique<WhileThunk>(inst.name(), scope[inst.operand(0)], output,
                                               std::move(condition), std::move(body));
      BorrowReadOnlyLeaves(inst, *loop);
      if (compiled) {
        result_.counters["thunks.while.compiled"] += 1;
        loop->set_compiled_symbol(*compiled);
        result_.compiled_loops.push_back(loop.get());
      }
      sequence.AddThunk(std::move(loop));
      return;
    }
    case Opcode::kConditional: {
      std::vector<ValueLayout> operands;
      std::vector<std::unique_ptr<ThunkSequence>> branches;
      for (size_t i = 0; i < inst.called_computations().size(); ++i) {
        operands.push_back(scope[inst.operand(static_cast<int64_t>(i) + 1)]);
        branches.push_back(BuildCallee(*inst.called_computations()[i]));
      }
      result_.counters["thunks.conditional"] += 1;
      sequence.AddThunk(std::make_unique<ConditionalThunk>(
          inst.name(), operand_buffer(0), inst.operand(0)->shape().type, std::move(operands),
          output, std::move(branches)));
      return;
    }
    case Opcode::kCall: {
      std::vector<ValueLayout> operands;
      for (const Instruction* operand : inst.operands()) operands.push_back(scope[operand]);
      result_.counters["thunks.call"] += 1;
      sequence.AddThunk(std::make_unique<CallThunk>(inst.name(), std::move(operands), output,
                                                    BuildCallee(*inst.called_computations().at(0))));
      return;
    }
    case Opcode::kDynamicUpdateSlice:
      if (TryDynamicUpdateSlice(inst, scope, output)) return;
      Fallback(inst, scope, output, "target and result in different layouts");
      return;
    case Opcode::kCustomCall: {
      const std::string& target = inst.attr<hlo::CustomCallAttrs>().target;
      const bool known = (custom_calls_ != nullptr && custom_calls_->Find(target) != nullptr) ||
                         builtin_calls_.Find(target) != nullptr;
      if (!known)
        throw hlo::Error(inst.location(),
                         "custom-call '" + target + "' has no CPU implementation (instruction '" +
                             inst.name() + "')");
      if (target == "TopK" && output.elements.size() == 2) {
        if (auto thunk = MakeTopKThunk(inst, scope[inst.operand(0)].buffer,
                                       output.elements[0].buffer, output.elements[1].buffer)) {
          result_.counters["thunks.topk"] += 1;
          sequence.AddThunk(std::move(thunk));
          return;
        }
      }
      Fallback(inst, scope, output, "custom-call form without a runtime routine");
      return;
    }
    case Opcode::kSort: {
      std::vector<int64_t> operands, outputs;
      for (int64_t i = 0; i < inst.operand_count(); ++i) operands.push_back(operand_buffer(i));
      std::vector<const ValueLayout*> leaves;
      CollectLeaves(output, leaves);
      for (const ValueLayout* leaf : leaves) outputs.push_back(leaf->buffer);
      if (auto lowering = MakeSortThunk(inst, module_, KernelSymbol(module_, inst.name() + ".less"),
                                        std::move(operands), std::move(outputs))) {
        result_.counters["thunks.sort"] += 1;
        result_.functions.push_back(lowering->comparator);
        sequence.AddThunk(std::move(lowering->thunk));
        return;
      }
      Fallback(inst, scope, output, "comparator not generated");
      return;
    }
    case Opcode::kScatter:
      if (TryScatter(inst, scope, output)) return;
      Fallback(inst, scope, output, "scatter form without a generated kernel");
      return;
    case Opcode::kSelectAndScatter:
      if (TrySelectAndScatter(inst, scope, output)) return;
      Fallback(inst, scope, output, "select-and-scatter form without a generated kernel");
      return;
    case Opcode::kTopK: {
      if (output.elements.size() == 2) {
        if (auto thunk = MakeTopKThunk(inst, scope[inst.operand(0)].buffer,
                                       output.elements[0].buffer, output.elements[1].buffer)) {
          result_.counters["thunks.topk"] += 1;
          sequence.AddThunk(std::move(thunk));
          return;
        }
      }
      break;
    }
    default:
      break;
  }
  if (inst.shape().IsArray() &&
      (llvm_codegen::FusibleInEmitter(inst.opcode()) || CanGenerateReduceWindow(inst) ||
       CanGenerateGather(inst)) &&
      TryKernel(inst, scope, output))
    return;
  Fallback(inst, scope, output, "no generated form");
}

void ThunkBuilder::Fallback(const Instruction& inst, Scope& scope, const ValueLayout& output,
                            const std::string& reason) {
  std::vector<ValueLayout> operands;
  for (const Instruction* operand : inst.operands()) operands.push_back(scope[operand]);
  std::unique_ptr<hlo::Computation> island;
  const hlo::Computation* computation = nullptr;
  if (inst.opcode() == Opcode::kFusion) {
    computation = inst.called_computations().at(0);
  } else {
    island = MakeIsland(inst);
  }
  result_.counters["thunks.fallback"] += 1;
  result_.fallback_reasons.push_back(inst.name() + " (" +
                                     std::string(hlo::OpcodeName(inst.opcode())) + "): " + reason);
  scope.sequence.AddThunk(std::make_unique<EvaluatorThunk>(inst.name(), std::move(island),
                                                           computation, std::move(operands),
                                                           output, custom_calls_));
}

}  // namespace cpu

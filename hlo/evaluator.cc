// The evaluator core: runs a computation instruction by instruction and dispatches each one to
// its op family (evaluator_*.cc).
//
// Guarantees:
//  - Instructions run in definition order (topological once verified). Values live in a vector
//    indexed by position (no per-operand hash lookups) and are freed right after their last
//    user ran, so peak memory follows the live set, not the module size.
//  - Parameters and constants are borrowed, never copied; tuple / get-tuple-element /
//    opt-barrier / reshape / copy and dynamic-update-slice take over an operand's buffer when
//    this instruction is its last user.
//  - Every failure is an hlo::Error located at the failing instruction and naming it; std::
//    exceptions (bad_alloc, ...) are converted at the same boundary.
#include <algorithm>
#include <cstdint>
#include <new>
#include <string>

#include "hlo/evaluator_family.h"
#include "hlo/evaluator_internal.h"

namespace hlo::eval {

struct ComputationPlan {
  std::vector<const Instruction*> instructions;
  std::vector<std::vector<int32_t>> operand_slots;  // per instruction: positions of operands
  // Per instruction and operand: this instruction is the operand's last user and uses it once,
  // so its buffer may be taken over.
  std::vector<std::vector<uint8_t>> operand_dies;
  std::vector<std::vector<int32_t>> release_after;  // slots to free after the instruction ran
  int32_t root_slot = -1;
};

namespace {

std::shared_ptr<const ComputationPlan> BuildPlan(const Computation& computation) {
  auto plan = std::make_shared<ComputationPlan>();
  const auto& instructions = computation.instructions();
  const size_t n = instructions.size();
  std::unordered_map<const Instruction*, int32_t> slot_of;
  slot_of.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    plan->instructions.push_back(instructions[i].get());
    slot_of[instructions[i].get()] = static_cast<int32_t>(i);
  }
  if (computation.root() == nullptr) {
    throw Error(computation.location(), "computation '" + computation.name() + "' has no root");
  }
  auto root = slot_of.find(computation.root());
  if (root == slot_of.end()) {
    throw Error(computation.location(),
                "the root of '" + computation.name() + "' is not one of its instructions");
  }
  plan->root_slot = root->second;
  std::vector<int32_t> last_user(n, -1);
  plan->operand_slots.resize(n);
  for (size_t i = 0; i < n; ++i) {
    for (const Instruction* operand : instructions[i]->operands()) {
      auto it = slot_of.find(operand);
      if (it == slot_of.end() || it->second >= static_cast<int32_t>(i)) {
        throw Error(instructions[i]->location(),
                    "instruction '" + instructions[i]->name() +
                        "' uses an operand that is not defined before it in '" +
                        computation.name() + "' (verify the module first)");
      }
      plan->operand_slots[i].push_back(it->second);
      last_user[it->second] = static_cast<int32_t>(i);
    }
  }
  plan->release_after.resize(n);
  plan->operand_dies.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& slots = plan->operand_slots[i];
    for (int32_t slot : slots) {
      bool last = last_user[slot] == static_cast<int32_t>(i) && slot != plan->root_slot;
      bool once = std::count(slots.begin(), slots.end(), slot) == 1;
      plan->operand_dies[i].push_back(last && once);
    }
  }
  for (size_t j = 0; j < n; ++j) {
    if (static_cast<int32_t>(j) == plan->root_slot) continue;
    // A value nobody uses (dead code) is freed right after it is computed.
    const int32_t release_at = last_user[j] >= 0 ? last_user[j] : static_cast<int32_t>(j);
    plan->release_after[release_at].push_back(static_cast<int32_t>(j));
  }
  return plan;
}

// The values of one running computation: owned results, or borrowed arguments / constants.
struct Frame {
  std::vector<Literal> owned;
  std::vector<const Literal*> value;
  std::vector<uint8_t> is_owned;
};

// Operand access for one instruction: borrowed views plus "take over" when the operand dies.
struct OperandAccess {
  Operands operands;
  std::span<Literal* const> takeable;  // non-null where the buffer may be moved from
  Literal Take(size_t k) const {
    return takeable[k] != nullptr ? std::move(*takeable[k]) : *operands[k];
  }
};

bool SameDataOrder(const Shape& a, const Shape& b) {
  return a.HasDefaultLayout() && b.HasDefaultLayout();
}

// Ops whose result holds the operand's elements unchanged in row-major order: the buffer can
// be reused under the result's shape.
bool ForwardsOperandData(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kReshape:
    case Opcode::kCopy:
      return inst.operand(0)->shape().type == inst.shape().type;
    case Opcode::kBitcast:
      return inst.operand(0)->shape().type == inst.shape().type &&
             SameDataOrder(inst.operand(0)->shape(), inst.shape());
    default:
      return false;
  }
}

Literal EvaluateOther(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kIota:
      return EvaluateDataMovement(inst, operands);
    case Opcode::kAfterAll:
      return Literal(Shape::Token());
    case Opcode::kFft:
      return EvaluateFft(inst, operands);
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
      return EvaluateRandom(inst, operands);
    default:
      throw Error("opcode '" + std::string(OpcodeName(inst.opcode())) +
                  "' has no evaluator");
  }
}

// Computes one instruction that is not a parameter or constant (those are borrowed).
Literal EvaluateInstruction(const Instruction& inst, const OperandAccess& access,
                            EvalContext& context) {
  Operands operands = access.operands;
  // Family code indexes operands by position; an unverified module must not make it read past
  // the end.
  const int arity = OpcodeArity(inst.opcode());
  if (arity != kVariadic && static_cast<int>(operands.size()) != arity) {
    throw Error("expects " + std::to_string(arity) + " operand(s), got " +
                std::to_string(operands.size()));
  }
  switch (inst.opcode()) {
    case Opcode::kTuple: {
      std::vector<Literal> elements;
      elements.reserve(operands.size());
      for (size_t k = 0; k < operands.size(); ++k) elements.push_back(access.Take(k));
      return Literal::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement: {
      int64_t index = inst.attr<TupleIndexAttrs>().index;
      const Literal& tuple = *operands[0];
      if (!tuple.IsTuple() || index < 0 ||
          index >= static_cast<int64_t>(tuple.elements().size())) {
        throw Error("tuple index " + std::to_string(index) + " out of range for " +
                    tuple.shape().ToString());
      }
      if (access.takeable[0] != nullptr) {
        return std::move(access.takeable[0]->mutable_elements()[index]);
      }
      return tuple.elements()[index];
    }
    case Opcode::kOptimizationBarrier:
      return access.Take(0);
    case Opcode::kCopy:
      if (inst.shape().IsTuple()) return access.Take(0);  // copy of a tuple copies its elements
      break;
    case Opcode::kDynamicUpdateSlice:
      if (access.takeable[0] != nullptr && operands.size() >= 2) {
        Literal target = access.Take(0);
        DynamicUpdateSliceInPlace(target, *operands[1], operands.subspan(2));
        return target;
      }
      break;
    default:
      break;
  }
  if (access.takeable.size() == 1 && access.takeable[0] != nullptr && ForwardsOperandData(inst) &&
      operands[0]->shape().IsArray() &&
      operands[0]->element_count() == inst.shape().ElementCount()) {
    Literal result = access.Take(0);
    result.mutable_shape() = inst.shape();
    return result;
  }
  switch (OpcodeClass(inst.opcode())) {
    case OpClass::kElementwiseUnary:
    case OpClass::kElementwiseBinary:
    case OpClass::kElementwiseTernary:
      return EvaluateElementwise(inst, operands);
    case OpClass::kDataMovement:
      return EvaluateDataMovement(inst, operands);
    case OpClass::kReduction:
      return EvaluateReduction(inst, operands, context);
    case OpClass::kContraction:
      return EvaluateContraction(inst, operands);
    case OpClass::kControl:
      return EvaluateControl(inst, operands, context);
    case OpClass::kCollective:
      return EvaluateCollective(inst, operands, context);
    case OpClass::kOther:
      return EvaluateOther(inst, operands);
  }
  throw Error("unknown op class");
}

const Literal& BindParameter(const Instruction& inst, std::span<const Literal* const> arguments) {
  int64_t number = inst.attr<ParameterAttrs>().number;
  if (number < 0 || number >= static_cast<int64_t>(arguments.size())) {
    throw Error(inst.location(), "parameter " + std::to_string(number) + " ('" + inst.name() +
                                     "') has no argument: " + std::to_string(arguments.size()) +
                                     " given");
  }
  const Literal& argument = *arguments[number];
  if (!argument.shape().Compatible(inst.shape())) {
    throw Error(inst.location(), "argument for parameter " + std::to_string(number) + " ('" +
                                     inst.name() + "') has shape " +
                                     argument.shape().ToString(false) + ", expected " +
                                     inst.shape().ToString(false));
  }
  return argument;
}

// get-tuple-element of a borrowed value (an argument, a constant, or an element of one) is
// borrowed too: no copy. Returns nullptr when the tuple is owned by the frame or malformed
// (EvaluateInstruction then copies or moves, and reports errors).
const Literal* BorrowedTupleElement(const Instruction& inst, const std::vector<int32_t>& slots,
                                    const Frame& frame) {
  if (inst.opcode() != Opcode::kGetTupleElement || slots.size() != 1 ||
      frame.is_owned[slots[0]]) {
    return nullptr;
  }
  const Literal& tuple = *frame.value[slots[0]];
  const int64_t index = inst.attr<TupleIndexAttrs>().index;
  if (!tuple.IsTuple() || index < 0 || index >= static_cast<int64_t>(tuple.elements().size())) {
    return nullptr;
  }
  return &tuple.elements()[index];
}

// Re-throws an error raised while computing `inst` located at it and naming it.
[[noreturn]] void RethrowAt(const Instruction& inst, const std::string& message,
                            const SourceLocation* inner) {
  const std::string quoted_name = "'" + inst.name() + "'";
  const bool located = inner != nullptr && (inner->line != 0 || inner->file);
  const bool at_this_instruction = located && inner->line == inst.location().line &&
                                   inner->column == inst.location().column;
  // An error already located at a nested instruction (inside a called computation) keeps that
  // location; the caller's name is added for context.
  if (located && !at_this_instruction) {
    throw Error(*inner, message + " (called from " + quoted_name + ")");
  }
  if (message.find(quoted_name) != std::string::npos) throw Error(inst.location(), message);
  throw Error(inst.location(), "in " + quoted_name + " (" +
                                   std::string(OpcodeName(inst.opcode())) + "): " + message);
}

}  // namespace

Literal MakeResult(const Instruction& inst) {
  CheckAllocationLimit(inst.shape(), inst.location());
  return Literal(inst.shape());
}

Literal EvalContext::Call(const Computation& computation,
                          std::span<const Literal* const> arguments) {
  std::shared_ptr<const ComputationPlan>& cached = plans_[&computation];
  if (!cached) cached = BuildPlan(computation);
  std::shared_ptr<const ComputationPlan> plan = cached;  // keeps it alive across rehashing
  if (static_cast<int64_t>(arguments.size()) != computation.parameter_count()) {
    throw Error(computation.location(),
                "computation '" + computation.name() + "' has " +
                    std::to_string(computation.parameter_count()) + " parameter(s) but " +
                    std::to_string(arguments.size()) + " argument(s) were given");
  }
  const size_t n = plan->instructions.size();
  const bool report_progress = computation.is_entry() && options_.progress;
  Frame frame;
  frame.owned.resize(n);
  frame.value.assign(n, nullptr);
  frame.is_owned.assign(n, 0);
  std::vector<const Literal*> operand_values;
  std::vector<Literal*> takeable;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& inst = *plan->instructions[i];
    try {
      if (inst.opcode() == Opcode::kParameter) {
        frame.value[i] = &BindParameter(inst, arguments);
      } else if (inst.opcode() == Opcode::kConstant) {
        frame.value[i] = &inst.attr<ConstantAttrs>().literal;
      } else if (const Literal* element =
                     BorrowedTupleElement(inst, plan->operand_slots[i], frame)) {
        frame.value[i] = element;  // an element of a borrowed tuple outlives this call too
      } else {
        const auto& slots = plan->operand_slots[i];
        operand_values.clear();
        takeable.clear();
        for (size_t k = 0; k < slots.size(); ++k) {
          operand_values.push_back(frame.value[slots[k]]);
          bool take = plan->operand_dies[i][k] && frame.is_owned[slots[k]];
          takeable.push_back(take ? &frame.owned[slots[k]] : nullptr);
        }
        frame.owned[i] = EvaluateInstruction(inst, {operand_values, takeable}, *this);
        CountResult(inst.shape());
        frame.value[i] = &frame.owned[i];
        frame.is_owned[i] = 1;
      }
    } catch (const Error& e) {
      RethrowAt(inst, e.message(), &e.location());
    } catch (const std::bad_alloc&) {
      RethrowAt(inst, "out of memory", nullptr);
    } catch (const std::exception& e) {  // e.g. bad_variant_access: attributes of another op
      RethrowAt(inst, e.what(), nullptr);
    }
    for (int32_t dead : plan->release_after[i]) {
      frame.owned[dead] = Literal();
      frame.value[dead] = nullptr;
      frame.is_owned[dead] = 0;
    }
    if (report_progress) options_.progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(n));
  }
  int32_t root = plan->root_slot;
  if (frame.is_owned[root]) return std::move(frame.owned[root]);
  return *frame.value[root];
}

namespace {
int64_t LeafElements(const Shape& shape) {
  if (!shape.IsTuple()) return shape.ElementCount();
  int64_t total = 0;
  for (const Shape& element : shape.tuple_shapes) total += LeafElements(element);
  return total;
}
}  // namespace

void EvalContext::CountResult(const Shape& shape) {
  if (options_.max_result_elements <= 0) return;
  result_elements_ += LeafElements(shape);
  if (result_elements_ > options_.max_result_elements) {
    throw Error("evaluation stopped after " + std::to_string(result_elements_) +
                " result elements, beyond the budget of " +
                std::to_string(options_.max_result_elements) +
                " (EvaluatorOptions::max_result_elements)");
  }
}

int64_t ScalarAsInt64(const Literal& scalar) {
  if (!scalar.shape().IsArray() || scalar.element_count() != 1 ||
      !(IsInteger(scalar.shape().type) || scalar.shape().type == PrimitiveType::kPred)) {
    throw Error("expected an integer scalar, got " + scalar.shape().ToString(false));
  }
  return IndexAsInt64(scalar, 0);
}

int64_t IndexAsInt64(const Literal& indices, int64_t i) {
  const int64_t value = indices.GetAsInt64(i);
  if (indices.shape().type == PrimitiveType::kU64 && value < 0) return INT64_MAX;
  return value;
}

}  // namespace hlo::eval

namespace hlo {

Literal EvaluateComputation(const Computation& computation,
                            std::span<const Literal* const> arguments,
                            const EvaluatorOptions& options) {
  eval::EvalContext context(options);
  return context.Call(computation, arguments);
}

Literal Evaluate(const Module& module, std::span<const Literal> arguments,
                 const EvaluatorOptions& options) {
  if (module.entry() == nullptr) throw Error("module '" + module.name() + "' has no entry");
  std::vector<const Literal*> pointers;
  pointers.reserve(arguments.size());
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  return EvaluateComputation(*module.entry(), pointers, options);
}

}  // namespace hlo

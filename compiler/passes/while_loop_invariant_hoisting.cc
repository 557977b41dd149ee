// while-loop-invariant-hoisting: see while_loop_invariant_hoisting.h.
//
// Per loop: (1) check the loop has the plain shape we can rewrite, (2) classify body
// instructions in definition order (invariant / hoisted / frontier = hoisted values used by
// non-hoisted instructions), (3) clone the frontier's invariant closure before the loop, (4)
// widen the loop tuple and rewire the body. Every step is linear in the body size.
#include "compiler/passes/while_loop_invariant_hoisting.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/passes/basic_pass_util.h"

namespace compiler {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

int64_t ByteCount(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes) total += ByteCount(element);
    return total;
  }
  if (!shape.IsArray()) return 0;
  return shape.ElementCount() * hlo::ByteSize(shape.type);
}

// Not worth a loop-tuple slot on their own: they compute nothing (reshape and bitcast only
// relabel a buffer). They are still cloned before the loop when a hoisted value needs them.
bool IsTrivial(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kConstant:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kParameter:
    case Opcode::kReshape:
    case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

bool InflatesData(const Instruction& inst) {
  int64_t operand_bytes = 0;
  for (const Instruction* operand : inst.operands()) operand_bytes += ByteCount(operand->shape());
  return ByteCount(inst.shape()) > operand_bytes;
}

bool OnlyReadThroughGte(const Computation& computation) {
  if (computation.parameter_count() != 1 || computation.parameter(0) == nullptr) return false;
  const Instruction* parameter = computation.parameter(0);
  if (computation.root() == parameter) return false;
  for (const Instruction* user : parameter->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return false;
  }
  return true;
}

struct LoopParts {
  Instruction* loop;
  Computation* condition;
  Computation* body;
  Instruction* body_parameter;
  Instruction* body_root;
  int64_t arity;  // tuple elements before hoisting
};

// The loop's parts when it has the plain form the rewrite needs (see the header).
std::optional<LoopParts> MatchLoop(Instruction& loop,
                                   const std::unordered_map<const Computation*, int64_t>& calls) {
  if (loop.called_computations().size() != 2 || !loop.shape().IsTuple()) return std::nullopt;
  Computation* condition = loop.called_computations()[0];
  Computation* body = loop.called_computations()[1];
  auto call_count = [&](const Computation* c) {
    auto it = calls.find(c);
    return it == calls.end() ? int64_t{0} : it->second;
  };
  if (condition == body || call_count(condition) != 1 || call_count(body) != 1) {
    return std::nullopt;
  }
  if (!OnlyReadThroughGte(*body) || !OnlyReadThroughGte(*condition)) return std::nullopt;
  Instruction* root = body->root();
  const int64_t arity = static_cast<int64_t>(loop.shape().tuple_shapes.size());
  if (root == nullptr || root->opcode() != Opcode::kTuple || !root->users().empty() ||
      root->operand_count() != arity) {
    return std::nullopt;
  }
  return LoopParts{&loop, condition, body, body->parameter(0), root, arity};
}

// Index i of the loop tuple if `inst` is gte(body parameter, i) and the body passes element i
// through unchanged; -1 otherwise.
int64_t InvariantElementIndex(const Instruction& inst, const LoopParts& parts) {
  if (inst.opcode() != Opcode::kGetTupleElement || inst.operand(0) != parts.body_parameter) {
    return -1;
  }
  const int64_t index = inst.attr<hlo::TupleIndexAttrs>().index;
  if (index < 0 || index >= parts.arity) return -1;
  const Instruction* passed = parts.body_root->operand(index);
  const bool passes_through = passed->opcode() == Opcode::kGetTupleElement &&
                              passed->operand(0) == parts.body_parameter &&
                              passed->attr<hlo::TupleIndexAttrs>().index == index;
  return passes_through ? index : -1;
}

struct Classification {
  std::unordered_set<const Instruction*> invariant;
  std::unordered_set<const Instruction*> hoisted;
  std::vector<Instruction*> frontier;  // hoisted values the body still needs, in body order
};

Classification Classify(const LoopParts& parts, const basic::SideEffects& side_effects) {
  Classification result;
  for (const auto& owned : parts.body->instructions()) {
    const Instruction& inst = *owned;
    if (&inst == parts.body_root || inst.opcode() == Opcode::kParameter) continue;
    bool invariant;
    if (inst.opcode() == Opcode::kGetTupleElement && inst.operand(0) == parts.body_parameter) {
      invariant = InvariantElementIndex(inst, parts) >= 0;
    } else if (side_effects.Has(inst) || inst.opcode() == Opcode::kWhile) {
      // An inner loop stays where it is (its own invariants still move out): cloning it would
      // share its body with the original, and this pass rewrites only unshared loop bodies.
      invariant = false;
    } else {
      invariant = true;  // constants (no operands) included
      for (const Instruction* operand : inst.operands()) {
        invariant = invariant && result.invariant.contains(operand);
      }
    }
    if (!invariant) continue;
    result.invariant.insert(&inst);
    if (!IsTrivial(inst) && !InflatesData(inst)) result.hoisted.insert(&inst);
  }
  for (const auto& owned : parts.body->instructions()) {
    if (!result.hoisted.contains(owned.get())) continue;
    for (const Instruction* user : owned->users()) {
      if (!result.hoisted.contains(user)) {
        result.frontier.push_back(owned.get());
        break;
      }
    }
  }
  return result;
}

// Clones the invariant closure of the frontier into the loop's computation. Returns the
// outside value of every body instruction it needed.
std::unordered_map<const Instruction*, Instruction*> CloneBeforeLoop(
    const LoopParts& parts, const Classification& classes, basic::NameUniquer& names,
    std::vector<Instruction*>& init_elements) {
  const auto& body = parts.body->instructions();
  std::unordered_set<const Instruction*> needed(classes.frontier.begin(), classes.frontier.end());
  for (auto it = body.rbegin(); it != body.rend(); ++it) {
    // A pass-through element is read from the init tuple, not cloned: its operand (the body
    // parameter) is not needed outside.
    if (!needed.contains(it->get()) || InvariantElementIndex(**it, parts) >= 0) continue;
    for (const Instruction* operand : (*it)->operands()) needed.insert(operand);
  }
  Computation& outside = *parts.loop->parent();
  std::unordered_map<const Instruction*, Instruction*> outside_value;
  std::vector<Instruction*> operands;
  for (const auto& owned : body) {
    const Instruction& inst = *owned;
    if (!needed.contains(&inst)) continue;
    const int64_t element = InvariantElementIndex(inst, parts);
    if (element >= 0) {
      outside_value[&inst] = init_elements[static_cast<size_t>(element)];
      continue;
    }
    operands.clear();
    for (const Instruction* operand : inst.operands())
      operands.push_back(outside_value.at(operand));
    outside_value[&inst] =
        outside.AddInstruction(basic::CloneInstruction(inst, names.Unique(inst.name()), operands));
  }
  return outside_value;
}

void HoistOutOf(const LoopParts& parts, const Classification& classes,
                basic::NameUniquer& outside_names) {
  Computation& outside = *parts.loop->parent();
  Instruction* init = parts.loop->operand(0);
  // The loop's current init values, element by element.
  std::vector<Instruction*> init_elements;
  for (int64_t i = 0; i < parts.arity; ++i) {
    init_elements.push_back(init->opcode() == Opcode::kTuple
                                ? init->operand(i)
                                : outside.AddInstruction(basic::MakeGetTupleElement(
                                      init, i, outside_names.Unique(init->name() + ".element"))));
  }
  std::unordered_map<const Instruction*, Instruction*> outside_value =
      CloneBeforeLoop(parts, classes, outside_names, init_elements);
  std::vector<Instruction*> new_init_elements = init_elements;
  for (Instruction* value : classes.frontier) new_init_elements.push_back(outside_value.at(value));
  Instruction* new_init = outside.AddInstruction(
      basic::MakeTuple(new_init_elements, outside_names.Unique(parts.loop->name() + ".init")));

  // Users of the loop that read the whole tuple keep seeing the original arity.
  std::vector<Instruction*> whole_tuple_users;
  for (Instruction* user : parts.loop->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) whole_tuple_users.push_back(user);
  }
  const bool loop_is_root = outside.root() == parts.loop;

  // Widen every signature by the hoisted values' shapes.
  for (const Instruction* value : classes.frontier) {
    parts.loop->mutable_shape().tuple_shapes.push_back(value->shape());
    parts.body_parameter->mutable_shape().tuple_shapes.push_back(value->shape());
    parts.condition->parameter(0)->mutable_shape().tuple_shapes.push_back(value->shape());
  }
  parts.loop->SetOperand(0, new_init);
  if (init->users().empty() && outside.root() != init && init->opcode() == Opcode::kTuple) {
    outside.RemoveInstruction(init);  // the old init tuple is now unused (our own doing)
  }

  // Inside the body: read hoisted values from the new elements and pass them through.
  basic::NameUniquer body_names(*parts.body);
  for (size_t k = 0; k < classes.frontier.size(); ++k) {
    Instruction* value = classes.frontier[k];
    Instruction* read = parts.body->AddInstruction(
        basic::MakeGetTupleElement(parts.body_parameter, parts.arity + static_cast<int64_t>(k),
                                   body_names.Unique(value->name() + ".hoisted")));
    value->ReplaceAllUsesWith(read);
    parts.body_root->AppendOperand(read);
    parts.body_root->mutable_shape().tuple_shapes.push_back(value->shape());
  }
  // Remove the body instructions that the hoisting left unused.
  std::unordered_set<Instruction*> dead;
  const auto& body = parts.body->instructions();
  for (auto it = body.rbegin(); it != body.rend(); ++it) {
    Instruction* inst = it->get();
    if (!classes.invariant.contains(inst) || inst == parts.body->root()) continue;
    bool unused = true;
    for (Instruction* user : inst->users()) unused = unused && dead.contains(user);
    if (unused) dead.insert(inst);
  }
  basic::RemoveInstructions(*parts.body, dead);
  parts.body->SortTopologically();

  if (!whole_tuple_users.empty() || loop_is_root) {
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < parts.arity; ++i) {
      elements.push_back(outside.AddInstruction(basic::MakeGetTupleElement(
          parts.loop, i, outside_names.Unique(parts.loop->name() + ".element"))));
    }
    Instruction* original_shape = outside.AddInstruction(
        basic::MakeTuple(elements, outside_names.Unique(parts.loop->name() + ".result")));
    for (Instruction* user : whole_tuple_users) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == parts.loop) user->SetOperand(i, original_shape);
      }
    }
    if (loop_is_root) outside.set_root(original_shape);
  }
}

bool HoistInComputation(Computation& computation,
                        const std::unordered_map<const Computation*, int64_t>& calls,
                        const basic::SideEffects& side_effects) {
  std::vector<Instruction*> loops;
  for (const auto& inst : computation.instructions()) {
    if (inst->opcode() == Opcode::kWhile) loops.push_back(inst.get());
  }
  bool changed = false;
  std::optional<basic::NameUniquer> names;
  for (Instruction* loop : loops) {
    std::optional<LoopParts> parts = MatchLoop(*loop, calls);
    if (!parts) continue;
    Classification classes = Classify(*parts, side_effects);
    if (classes.frontier.empty() || static_cast<int64_t>(classes.frontier.size()) >
                                        WhileLoopInvariantHoisting::kMaxHoistedPerLoop) {
      continue;
    }
    if (!names) names.emplace(computation);
    HoistOutOf(*parts, classes, *names);
    changed = true;
  }
  if (changed) computation.SortTopologically();
  return changed;
}

}  // namespace

bool WhileLoopInvariantHoisting::Run(hlo::Module& module) {
  const std::unordered_map<const Computation*, int64_t> calls = basic::CallSiteCounts(module);
  const basic::SideEffects side_effects(module);
  bool changed = false;
  // Callees first: a value hoisted out of an inner loop lands in the outer body before the
  // outer loop is considered.
  for (Computation* computation : basic::ReachableComputationsCalleesFirst(module)) {
    changed |= HoistInComputation(*computation, calls, side_effects);
  }
  return changed;
}

}  // namespace compiler

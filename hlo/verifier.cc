// The verifier: structural checks over the module, then shape inference for every instruction.
//
// Order matters for the quality of the first error reported, and for safety: the structure
// (operands defined before use, arity, parameters, callees present and acyclic) is established
// first, so that shape inference may follow operands and callees without guarding against
// dangling pointers or infinite recursion. Everything is linear in the module size.
//
// Instruction names are unique within their computation and computation names within the
// module: XLA's text format scopes instruction names per computation (the corpus reuses `%a`
// across fused computations), so that is the scope a name must resolve in.
#include "hlo/verifier.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "hlo/literal.h"
#include "hlo/shape_inference.h"
#include "hlo/shape_inference_internal.h"

namespace hlo {
namespace {

using shape_inference::Fail;

[[noreturn]] void FailComputation(const Computation& computation, const std::string& message) {
  throw Error(computation.location(), "computation '" + computation.name() + "': " + message);
}

// Whether the opcode takes called computations at all. The callers are listed; every other
// opcode (the default) must have none.
bool CallsComputations(Opcode op) {
  switch (op) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kFusion:
    case Opcode::kWhile:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

// Layout is a permutation of 0..rank-1; dims are non-negative; rank and size within limits.
void VerifyShapeWellFormed(const Instruction& inst, const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) VerifyShapeWellFormed(inst, element);
    return;
  }
  if (!shape.IsArray()) return;
  if (shape.rank() > GlobalLimits().max_rank) {
    Fail(inst, "shape " + shape.ToString(false) + " has rank " + std::to_string(shape.rank()) +
                   " (limit " + std::to_string(GlobalLimits().max_rank) + ")");
  }
  for (int64_t d : shape.dims) {
    if (d < 0) Fail(inst, "shape " + shape.ToString(false) + " has a negative dimension");
  }
  if (shape.has_layout) {
    std::vector<bool> seen(shape.dims.size(), false);
    bool ok = shape.minor_to_major.size() == shape.dims.size();
    for (size_t i = 0; ok && i < shape.minor_to_major.size(); ++i) {
      const int64_t d = shape.minor_to_major[i];
      ok = d >= 0 && d < shape.rank() && !seen[static_cast<size_t>(d)];
      if (ok) seen[static_cast<size_t>(d)] = true;
    }
    if (!ok) {
      Fail(inst, "layout " + shape_inference::DimsToString(shape.minor_to_major) + " of " +
                     shape.ToString(false) + " is not a permutation of its dimensions");
    }
  }
  try {
    CheckAllocationLimit(shape, inst.location());
  } catch (const Error& e) {
    Fail(inst, e.message());
  }
}

// An instruction on a cycle of operand edges, or nullptr if there is none. Kahn's algorithm:
// whatever cannot be scheduled lies on or behind a cycle; following unscheduled operands from
// such a node must eventually repeat a node, and that node is on a cycle.
const Instruction* FindCycleMember(
    const Computation& computation,
    const std::unordered_map<const Instruction*, size_t>& position) {
  const auto& insts = computation.instructions();
  const size_t n = insts.size();
  std::vector<size_t> pending(n, 0);
  std::vector<std::vector<size_t>> users(n);
  for (size_t i = 0; i < n; ++i) {
    for (const Instruction* op : insts[i]->operands()) {
      ++pending[i];
      users[position.at(op)].push_back(i);
    }
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  size_t node = n;
  for (size_t i = 0; i < n && node == n; ++i) {
    if (pending[i] != 0) node = i;
  }
  if (node == n) return nullptr;
  std::vector<bool> visited(n, false);
  while (!visited[node]) {
    visited[node] = true;
    for (const Instruction* op : insts[node]->operands()) {
      if (pending[position.at(op)] != 0) {
        node = position.at(op);
        break;
      }
    }
  }
  return insts[node].get();
}

void VerifyParameters(const Computation& computation) {
  int64_t parameter_instructions = 0;
  for (const auto& owned : computation.instructions()) {
    const Instruction& inst = *owned;
    if (inst.opcode() != Opcode::kParameter) continue;
    ++parameter_instructions;
    if (!inst.has_attr<ParameterAttrs>()) Fail(inst, "parameter has no parameter number");
    const int64_t number = inst.attr<ParameterAttrs>().number;
    if (number < 0 || number >= computation.parameter_count() ||
        computation.parameter(number) != &inst) {
      Fail(inst, "parameter number " + std::to_string(number) +
                     " is out of range or used twice in computation '" + computation.name() +
                     "'");
    }
  }
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    if (computation.parameter(i) == nullptr) {
      FailComputation(computation, "parameter numbers are not dense: parameter " +
                                       std::to_string(i) + " is missing");
    }
  }
  if (parameter_instructions != computation.parameter_count()) {
    FailComputation(computation, "has " + std::to_string(parameter_instructions) +
                                     " parameter instructions but " +
                                     std::to_string(computation.parameter_count()) +
                                     " parameter slots");
  }
}

// Operands defined earlier in the same computation, unique names, arity, a root, parameters.
void VerifyComputationStructure(const Computation& computation) {
  if (computation.root() == nullptr) FailComputation(computation, "has no root instruction");
  if (computation.root()->parent() != &computation) {
    FailComputation(computation, "root '" + computation.root()->name() +
                                     "' is not an instruction of this computation");
  }
  std::unordered_map<const Instruction*, size_t> position;
  std::unordered_set<std::string_view> names;
  position.reserve(computation.instructions().size());
  names.reserve(computation.instructions().size());
  for (const auto& owned : computation.instructions()) {
    const Instruction& inst = *owned;
    position.emplace(&inst, position.size());
    if (!names.insert(inst.name()).second) {
      Fail(inst, "name is used twice in computation '" + computation.name() + "'");
    }
    if (inst.parent() != &computation) Fail(inst, "has a wrong parent computation");
  }
  const Instruction* first_early_use = nullptr;
  for (const auto& owned : computation.instructions()) {
    const Instruction& inst = *owned;
    const int arity = OpcodeArity(inst.opcode());
    if (arity != kVariadic) shape_inference::ExpectOperandCount(inst, arity);
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const Instruction* op = inst.operand(i);
      if (op == nullptr) Fail(inst, "operand " + std::to_string(i) + " is missing");
      auto it = position.find(op);
      if (it == position.end()) {
        Fail(inst, "operand " + std::to_string(i) + " '" + op->name() +
                       "' is not defined in computation '" + computation.name() + "'");
      }
      if (it->second >= position.at(&inst) && first_early_use == nullptr) {
        first_early_use = &inst;
      }
    }
    if (!CallsComputations(inst.opcode()) && !inst.called_computations().empty()) {
      Fail(inst, std::string(OpcodeName(inst.opcode())) + " does not call computations");
    }
  }
  if (first_early_use != nullptr) {
    // Either a cycle, or an order that SortTopologically would fix; say which.
    if (const Instruction* member = FindCycleMember(computation, position)) {
      Fail(*member, "is part of a cycle of operands in computation '" + computation.name() + "'");
    }
    Fail(*first_early_use, "uses an operand before it is defined");
  }
  VerifyParameters(computation);
}

// Callees exist in this module and are not the entry; the call graph has no cycle.
void VerifyCallGraph(const Module& module) {
  std::unordered_map<const Computation*, size_t> index;
  for (const auto& c : module.computations()) index.emplace(c.get(), index.size());
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        if (callee == nullptr || index.find(callee) == index.end()) {
          Fail(*inst, "calls a computation that is not in the module");
        }
        if (callee == module.entry()) {
          Fail(*inst, "calls the entry computation '" + callee->name() + "'");
        }
      }
    }
  }
  // Iterative DFS over computations; a back edge to a computation on the stack is a cycle.
  enum class Mark : uint8_t { kNew, kOnStack, kDone };
  const auto& comps = module.computations();
  std::vector<Mark> mark(comps.size(), Mark::kNew);
  struct Frame {
    size_t computation, instruction = 0, callee = 0;
  };
  for (size_t start = 0; start < comps.size(); ++start) {
    if (mark[start] != Mark::kNew) continue;
    std::vector<Frame> stack{{start}};
    mark[start] = Mark::kOnStack;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const auto& insts = comps[frame.computation]->instructions();
      if (frame.instruction == insts.size()) {
        mark[frame.computation] = Mark::kDone;
        stack.pop_back();
        continue;
      }
      const Instruction& inst = *insts[frame.instruction];
      if (frame.callee == inst.called_computations().size()) {
        ++frame.instruction;
        frame.callee = 0;
        continue;
      }
      const Computation* callee = inst.called_computations()[frame.callee++];
      const size_t target = index.at(callee);
      if (mark[target] == Mark::kOnStack) {
        Fail(inst, "calls computation '" + callee->name() +
                       "', which forms a cycle in the call graph");
      }
      if (mark[target] == Mark::kNew) {
        mark[target] = Mark::kOnStack;
        stack.push_back({target});
      }
    }
  }
}

}  // namespace

void Verify(const Module& module) {
  if (module.entry() == nullptr) {
    throw Error("module '" + module.name() + "' has no entry computation");
  }
  std::unordered_set<std::string_view> names;
  bool entry_found = false;
  for (const auto& c : module.computations()) {
    if (!names.insert(c->name()).second) {
      FailComputation(*c, "name is used twice in module '" + module.name() + "'");
    }
    entry_found = entry_found || c.get() == module.entry();
  }
  if (!entry_found) throw Error("module '" + module.name() + "': entry is not in the module");
  for (const auto& c : module.computations()) VerifyComputationStructure(*c);
  VerifyCallGraph(module);
  for (const auto& c : module.computations()) {
    for (const auto& owned : c->instructions()) {
      const Instruction& inst = *owned;
      VerifyShapeWellFormed(inst, inst.shape());
      const Shape inferred = InferShape(inst);
      if (!inferred.Compatible(inst.shape())) {
        Fail(inst, "shape " + inst.shape().ToString(false) +
                       " does not match the inferred shape " + inferred.ToString(false));
      }
    }
  }
}

}  // namespace hlo

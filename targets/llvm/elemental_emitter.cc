// The emitter's entry points: which opcodes it handles, the dispatch of MakeGenerator to the
// op-family files, whole computations with memoized shared subexpressions, and scalar
// computations (reducers). See elemental_emitter.h for the guarantees.
//
// Memoization: every generator made here remembers the value it emitted for (basic block,
// index Values). A value is reused in the block it
// was left in and in the blocks that block dominates (recorded by the if/loop helpers), so it
// always dominates the reuse; a generator that emitted control flow records its value under the
// block it ended in. (A softmax's row maximum is then computed once per output element, not
// once more inside the loop of the row sum.)
#include "targets/llvm/elemental_emitter.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <llvm/IR/Intrinsics.h>

#include "targets/llvm/elemental_util.h"
#include "targets/llvm/llvm_math.h"
#include "targets/llvm/llvm_math_fast.h"

namespace llvm_codegen {

using hlo::Instruction;
using hlo::Opcode;

ElementalEmitter::ElementalEmitter(llvm::IRBuilder<>& builder, llvm::Module& module)
    : b_(builder), module_(module) {}

namespace {

// Wraps a generator so that calls at the same index Values reuse the value emitted in the
// current block or in a block recorded as dominating it.
ElementGenerator Memoized(llvm::IRBuilder<>& b, const detail::DominatorMap* dominators,
                          ElementGenerator generator) {
  using Cache = std::map<std::pair<llvm::BasicBlock*, IrIndex>, llvm::Value*>;
  auto cache = std::make_shared<Cache>();
  // Shared, not copied: a generator captures its operands' generators, so a copy by value
  // would copy the whole tree below it — exponential in a chain of diamonds (a_i = add(a_{i-1},
  // a_{i-1}) captures a_{i-1} twice). Every generator passes through here, so copies are O(1).
  auto shared = std::make_shared<const ElementGenerator>(std::move(generator));
  return [&b, dominators, cache, shared](const IrIndex& index) {
    for (llvm::BasicBlock* block : detail::DominatingBlocks(b, *dominators)) {
      auto found = cache->find({block, index});
      if (found != cache->end()) return found->second;
    }
    llvm::Value* value = (*shared)(index);
    (*cache)[{b.GetInsertBlock(), index}] = value;
    return value;
  };
}

}  // namespace

ElementGenerator ElementalEmitter::MakeGenerator(const Instruction& inst,
                                                 std::vector<ElementGenerator> operands) {
  // Every generator is memoized, so a backend that builds one generator per instruction and
  // hands it to several users gets each element emitted once per index.
  return Memoized(b_, &dominating_block_, MakeUnmemoizedGenerator(inst, std::move(operands)));
}

std::vector<ElementGenerator> ElementalEmitter::MakeGenerators(
    const Instruction& inst, std::vector<ElementGenerator> operands) {
  if (inst.opcode() != Opcode::kReduce || inst.shape().IsArray())
    return {MakeGenerator(inst, std::move(operands))};
  std::vector<ElementGenerator> results = MakeReduceGenerators(inst, std::move(operands));
  for (ElementGenerator& result : results)
    result = Memoized(b_, &dominating_block_, std::move(result));
  return results;
}

ElementGenerator ElementalEmitter::MakeUnmemoizedGenerator(const Instruction& inst,
                                                           std::vector<ElementGenerator> operands) {
  if (!FusibleInEmitter(inst.opcode())) detail::Fail(inst, "not an elemental opcode");
  if (static_cast<int64_t>(operands.size()) != inst.operand_count()) {
    detail::Fail(inst, "given " + std::to_string(operands.size()) + " operand generators for " +
                           std::to_string(inst.operand_count()) + " operands");
  }
  if (!inst.shape().IsArray() && inst.opcode() != Opcode::kTuple) {
    detail::Fail(inst, "result " + inst.shape().ToString() + " is not an array");
  }
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) {
      detail::Fail(inst, "operand '" + operand->name() + "' is not an array");
    }
  }
  switch (hlo::OpcodeClass(inst.opcode())) {
    case hlo::OpClass::kElementwiseUnary:
    case hlo::OpClass::kElementwiseBinary:
    case hlo::OpClass::kElementwiseTernary:
      return MakeElementwiseGenerator(inst, std::move(operands));
    case hlo::OpClass::kDataMovement:
    case hlo::OpClass::kReduction:
    case hlo::OpClass::kContraction:
    case hlo::OpClass::kControl:
    case hlo::OpClass::kCollective:
    case hlo::OpClass::kOther:
      break;
  }
  switch (inst.opcode()) {
    case Opcode::kConstant:
      return MakeConstantGenerator(inst);
    case Opcode::kReduce:
      return MakeReduceGenerators(inst, std::move(operands)).at(0);
    case Opcode::kParameter:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      detail::Fail(inst, "only meaningful inside MakeComputationGenerators");
    default:
      return MakeDataMovementGenerator(inst, std::move(operands));
  }
}

std::vector<ElementGenerator> ElementalEmitter::MakeComputationGenerators(
    const hlo::Computation& computation, std::span<const ElementGenerator> parameters) {
  llvm::IRBuilder<>& b = b_;
  const detail::DominatorMap* dominators = &dominating_block_;
  // The generators of each instruction's value: one for an array, one per element of a tuple.
  std::map<const Instruction*, std::vector<ElementGenerator>> values;
  auto array_value = [&](const Instruction& user, const Instruction* operand) {
    const std::vector<ElementGenerator>& generators = values.at(operand);
    if (!operand->shape().IsArray() || generators.size() != 1) {
      detail::Fail(user, "operand '" + operand->name() + "' is not an array");
    }
    return generators[0];
  };
  for (const auto& owned : computation.instructions()) {
    const Instruction& inst = *owned;
    switch (inst.opcode()) {
      case Opcode::kParameter: {
        const int64_t number = inst.attr<hlo::ParameterAttrs>().number;
        if (number < 0 || number >= static_cast<int64_t>(parameters.size())) {
          detail::Fail(inst, "no generator for parameter " + std::to_string(number) + " (given " +
                                 std::to_string(parameters.size()) + ")");
        }
        if (!inst.shape().IsArray())
          detail::Fail(inst, "tuple-shaped parameters are not supported");
        values[&inst] = {parameters[static_cast<size_t>(number)]};
        break;
      }
      case Opcode::kTuple: {
        std::vector<ElementGenerator> elements;
        for (const Instruction* operand : inst.operands())
          elements.push_back(array_value(inst, operand));
        values[&inst] = std::move(elements);
        break;
      }
      case Opcode::kGetTupleElement: {
        const std::vector<ElementGenerator>& tuple = values.at(inst.operand(0));
        const int64_t index = inst.attr<hlo::TupleIndexAttrs>().index;
        if (index < 0 || index >= static_cast<int64_t>(tuple.size())) {
          detail::Fail(inst, "tuple index " + std::to_string(index) + " out of range");
        }
        values[&inst] = {tuple[static_cast<size_t>(index)]};
        break;
      }
      case Opcode::kReduce: {
        std::vector<ElementGenerator> operands;
        for (const Instruction* operand : inst.operands())
          operands.push_back(array_value(inst, operand));
        std::vector<ElementGenerator> results = MakeReduceGenerators(inst, std::move(operands));
        for (ElementGenerator& result : results)
          result = Memoized(b, dominators, std::move(result));
        values[&inst] = std::move(results);
        break;
      }
      default: {
        std::vector<ElementGenerator> operands;
        for (const Instruction* operand : inst.operands())
          operands.push_back(array_value(inst, operand));
        values[&inst] = {MakeGenerator(inst, std::move(operands))};  // memoized
        break;
      }
    }
  }
  if (computation.root() == nullptr) {
    throw hlo::Error(computation.location(),
                     "computation '" + computation.name() + "' has no root");
  }
  return values.at(computation.root());
}

ElementGenerator ElementalEmitter::MakeComputationGenerator(
    const hlo::Computation& computation, std::span<const ElementGenerator> parameters) {
  std::vector<ElementGenerator> generators = MakeComputationGenerators(computation, parameters);
  if (!computation.root()->shape().IsArray()) {
    throw hlo::Error(
        computation.location(),
        "computation '" + computation.name() + "' returns a tuple: use MakeComputationGenerators");
  }
  return generators.at(0);
}

std::vector<llvm::Value*> ElementalEmitter::EmitScalarComputation(
    const hlo::Computation& computation, std::span<llvm::Value* const> arguments) {
  std::vector<ElementGenerator> parameters;
  for (llvm::Value* argument : arguments) {
    parameters.push_back([argument](const IrIndex&) { return argument; });
  }
  std::vector<llvm::Value*> results;
  for (const ElementGenerator& generator : MakeComputationGenerators(computation, parameters)) {
    results.push_back(generator(IrIndex{}));
  }
  return results;
}

// ---- Math hooks: f32 from llvm_math.h, f64 through one hook naming the C library function
// (NVPTX cannot select llvm.exp.f64 and friends; a GPU backend maps the names instead). ----

llvm::Value* ElementalEmitter::EmitExp(llvm::Value* x) {
  if (x->getType()->isFloatTy()) return math::EmitExpF32Fast(b_, x);
  return EmitLibmCallF64("exp", {x});
}

llvm::Value* ElementalEmitter::EmitLog(llvm::Value* x) {
  if (x->getType()->isFloatTy()) return math::EmitLogF32Fast(b_, x);
  return EmitLibmCallF64("log", {x});
}

llvm::Value* ElementalEmitter::EmitTanh(llvm::Value* x) {
  if (x->getType()->isFloatTy()) return math::EmitTanhF32Fast(b_, x);
  return EmitLibmCallF64("tanh", {x});
}

llvm::Value* ElementalEmitter::EmitLibmCallF64(const std::string& name,
                                               std::vector<llvm::Value*> arguments) {
  std::vector<llvm::Type*> parameter_types(arguments.size(), b_.getDoubleTy());
  llvm::FunctionCallee callee = module_.getOrInsertFunction(
      name, llvm::FunctionType::get(b_.getDoubleTy(), parameter_types, false));
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    function->setDoesNotThrow();
    function->setDoesNotAccessMemory();
  }
  return b_.CreateCall(callee, arguments);
}

}  // namespace llvm_codegen

// cse: see cse.h. Instructions are keyed by a hash of (opcode, element type, dims, operands,
// the attributes that most often tell siblings apart, constant bytes); equality is then checked
// in full, so the hash only has to be cheap and well spread, never exact.
#include "compiler/passes/cse.h"

#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/passes/basic_pass_util.h"

namespace compiler {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

void Mix(size_t& seed, size_t value) {
  // boost::hash_combine's constant; any odd 64-bit mixing constant would do.
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

void MixInts(size_t& seed, const std::vector<int64_t>& values) {
  for (int64_t v : values) Mix(seed, std::hash<int64_t>{}(v));
}

// The attributes that distinguish the many siblings real modules have (slices and gtes of one
// operand, broadcasts/iotas along different dims, constants of different values).
size_t HashAttrs(const Instruction& inst) {
  size_t seed = 0;
  if (inst.has_attr<hlo::TupleIndexAttrs>()) {
    Mix(seed, std::hash<int64_t>{}(inst.attr<hlo::TupleIndexAttrs>().index));
  } else if (inst.has_attr<hlo::DimensionsAttrs>()) {
    MixInts(seed, inst.attr<hlo::DimensionsAttrs>().dimensions);
  } else if (inst.has_attr<hlo::IotaAttrs>()) {
    Mix(seed, std::hash<int64_t>{}(inst.attr<hlo::IotaAttrs>().dimension));
  } else if (inst.has_attr<hlo::SliceAttrs>()) {
    for (const hlo::SliceDim& d : inst.attr<hlo::SliceAttrs>().dims) {
      Mix(seed, std::hash<int64_t>{}(d.start));
      Mix(seed, std::hash<int64_t>{}(d.limit));
    }
  } else if (inst.has_attr<hlo::CompareAttrs>()) {
    Mix(seed, static_cast<size_t>(inst.attr<hlo::CompareAttrs>().direction));
  } else if (inst.has_attr<hlo::ConstantAttrs>()) {
    std::span<const uint8_t> bytes = inst.attr<hlo::ConstantAttrs>().literal.bytes();
    Mix(seed, std::hash<std::string_view>{}(
                  std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  }
  return seed;
}

size_t HashInstruction(const Instruction* inst) {
  size_t seed = static_cast<size_t>(inst->opcode());
  Mix(seed, static_cast<size_t>(inst->shape().type));
  MixInts(seed, inst->shape().dims);
  for (const Instruction* operand : inst->operands()) Mix(seed, std::hash<const void*>{}(operand));
  for (const Computation* callee : inst->called_computations()) {
    Mix(seed, std::hash<const void*>{}(callee));
  }
  Mix(seed, HashAttrs(*inst));
  return seed;
}

// Opaque attributes that take part in identity: all but metadata (source locations and op
// names, which describe provenance, not meaning).
bool SameMeaningfulOpaqueAttributes(const Instruction& a, const Instruction& b) {
  auto meaningful = [](const Instruction& inst) {
    std::vector<const hlo::OpaqueAttribute*> out;
    for (const hlo::OpaqueAttribute& attr : inst.opaque_attributes()) {
      if (attr.name != "metadata") out.push_back(&attr);
    }
    return out;
  };
  std::vector<const hlo::OpaqueAttribute*> x = meaningful(a), y = meaningful(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(*x[i] == *y[i])) return false;
  }
  return true;
}

bool Identical(const Instruction* a, const Instruction* b) {
  return a->opcode() == b->opcode() && a->shape().Equal(b->shape()) &&
         a->operands() == b->operands() && a->called_computations() == b->called_computations() &&
         a->attrs() == b->attrs() && SameMeaningfulOpaqueAttributes(*a, *b);
}

struct HashByContent {
  size_t operator()(const Instruction* inst) const { return HashInstruction(inst); }
};
struct EqualByContent {
  bool operator()(const Instruction* a, const Instruction* b) const { return Identical(a, b); }
};

bool Mergeable(const Instruction& inst, const basic::SideEffects& side_effects) {
  if (inst.opcode() == Opcode::kParameter) return false;
  if (inst.opcode() == Opcode::kConstant &&
      (!inst.has_attr<hlo::ConstantAttrs>() || inst.attr<hlo::ConstantAttrs>().elided)) {
    return false;
  }
  return !side_effects.Has(inst);
}

bool RunOnComputation(Computation& computation, const basic::SideEffects& side_effects) {
  std::unordered_set<Instruction*, HashByContent, EqualByContent> representatives;
  representatives.reserve(computation.instructions().size());
  std::unordered_set<Instruction*> merged;
  // Definition order is topological: by the time an instruction is looked up, its operands
  // have already been replaced by their representatives, so chains merge in one sweep.
  for (const auto& owned : computation.instructions()) {
    Instruction* inst = owned.get();
    if (!Mergeable(*inst, side_effects)) continue;
    auto [it, inserted] = representatives.insert(inst);
    if (inserted) continue;
    inst->ReplaceAllUsesWith(*it);
    merged.insert(inst);
  }
  basic::RemoveInstructions(computation, merged);
  return !merged.empty();
}

}  // namespace

bool CommonSubexpressionElimination::Run(hlo::Module& module) {
  const basic::SideEffects side_effects(module);
  bool changed = false;
  for (Computation* computation : basic::ReachableComputationsCalleesFirst(module)) {
    changed |= RunOnComputation(*computation, side_effects);
  }
  return changed;
}

}  // namespace compiler

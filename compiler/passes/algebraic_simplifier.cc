// The simplifier's driver: a worklist over each computation, first matching rule wins, the
// users of a replacement are revisited, and everything a rewrite orphaned is deleted at the end.
// Work is O(instructions + rewrites) per computation: rules look at an instruction and its
// direct operands only (constant predicates scan the constant once).
#include "compiler/passes/algebraic_simplifier.h"

#include <deque>
#include <unordered_set>

#include "compiler/passes/rewrite_builder.h"

namespace compiler {

using hlo::Instruction;

std::vector<const simplify::Rule*> AlgebraicSimplifier::AllRules() {
  std::vector<const simplify::Rule*> all;
  for (auto family : {simplify::ArithmeticRules(), simplify::ShapeRules(),
                      simplify::ConvertRules(), simplify::CompareSelectRules(),
                      simplify::DotRules()}) {
    for (const simplify::Rule& rule : family) all.push_back(&rule);
  }
  return all;
}

AlgebraicSimplifier::AlgebraicSimplifier()
    : rules_by_opcode_(static_cast<size_t>(hlo::OpcodeCount())) {
  for (const simplify::Rule* rule : AllRules()) {
    rules_by_opcode_[static_cast<size_t>(rule->opcode)].push_back(rule);
  }
}

bool AlgebraicSimplifier::Run(hlo::Module& module) {
  rule_counts_.clear();
  bool changed = false;
  for (const auto& computation : module.computations()) {
    changed |= SimplifyComputation(*computation);
  }
  return changed;
}

bool AlgebraicSimplifier::SimplifyComputation(hlo::Computation& computation) {
  RewriteBuilder builder(computation);
  std::deque<Instruction*> worklist;
  std::unordered_set<Instruction*> queued;
  auto enqueue = [&](Instruction* inst) {
    if (queued.insert(inst).second) worklist.push_back(inst);
  };
  // Definition order: operands are simplified before their users see them.
  for (const auto& inst : computation.instructions()) enqueue(inst.get());

  // Replaced instructions stay in the IR (unused) until the end, so no pointer in the worklist
  // ever dangles; RemoveDeadChain deletes them and whatever only they used.
  std::vector<Instruction*> replaced;
  int64_t budget = 4 * static_cast<int64_t>(computation.instructions().size()) + 64;
  while (!worklist.empty() && budget > 0) {
    Instruction* inst = worklist.front();
    worklist.pop_front();
    queued.erase(inst);
    const bool is_root = inst == computation.root();
    if (inst->users().empty() && !is_root) continue;  // dead: nothing to gain
    for (const simplify::Rule* rule : rules_by_opcode_[static_cast<size_t>(inst->opcode())]) {
      builder.set_origin(inst);
      simplify::Match match(*inst, builder);
      Instruction* replacement = rule->rewrite(match);
      if (replacement == nullptr || replacement == inst) continue;
      if (is_root && !replacement->shape().Equal(inst->shape())) {
        RemoveDeadChain(computation, {replacement});  // only what the rule just built
        continue;
      }
      --budget;
      ++rule_counts_[std::string(rule->name)];
      inst->ReplaceAllUsesWith(replacement);
      replaced.push_back(inst);
      enqueue(replacement);
      for (Instruction* user : replacement->users()) enqueue(user);
      break;
    }
  }
  if (replaced.empty()) return false;
  RemoveDeadChain(computation, std::move(replaced));
  if (builder.added_any()) computation.SortTopologically();
  return true;
}

}  // namespace compiler

// GELU subgraph recognition for output fusion (fusion_activation.h).
#include "compiler/fusion/fusion_activation.h"

#include <map>
#include <unordered_set>

#include "compiler/fusion/fusion_cost.h"

namespace compiler::fusion {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// A constant small enough to fuse, or a broadcast of one: an input that costs no memory traffic.
bool IsConstantLike(const Instruction& inst) {
  if (inst.opcode() == Opcode::kConstant) return !IsNeverFusible(inst);
  return inst.opcode() == Opcode::kBroadcast && inst.operand(0)->opcode() == Opcode::kConstant &&
         !IsNeverFusible(*inst.operand(0));
}

}  // namespace

std::optional<ActivationMatch> MatchGelu(
    const Instruction& value, const std::function<int64_t(const Instruction*)>& position) {
  const Instruction* root = value.parent() ? value.parent()->root() : nullptr;
  if (&value == root || value.users().size() < 2) return std::nullopt;
  std::unordered_set<const Instruction*> inside{&value};
  std::vector<Instruction*> members;
  std::unordered_set<Instruction*> side;
  bool transcendental = false;
  // Pending users, lowest position first, so every operand inside is added before its users.
  std::map<int64_t, Instruction*> pending;
  for (Instruction* user : value.users()) pending[position(user)] = user;
  // Members (and the value) whose users are not all inside yet.
  auto open_count = [&]() {
    int64_t open = 0;
    for (const Instruction* n : inside) {
      for (const Instruction* u : n->users()) {
        if (!inside.count(u)) {
          ++open;
          break;
        }
      }
    }
    return open;
  };
  while (!pending.empty()) {
    if (static_cast<int64_t>(members.size()) >= kMaxActivationInstructions) return std::nullopt;
    Instruction* next = pending.begin()->second;
    pending.erase(pending.begin());
    if (inside.count(next)) continue;
    if (!hlo::IsElementwise(next->opcode()) || IsNeverFusible(*next) ||
        (next->users().empty() && next != root)) {
      return std::nullopt;
    }
    for (Instruction* op : next->operands()) {
      if (inside.count(op)) continue;
      if (!IsConstantLike(*op)) return std::nullopt;
      side.insert(op);
      if (op->opcode() == Opcode::kBroadcast) side.insert(op->operand(0));
    }
    inside.insert(next);
    members.push_back(next);
    transcendental = transcendental || next->opcode() == Opcode::kTanh ||
                     next->opcode() == Opcode::kErf;
    const int64_t open = open_count();
    if (pending.empty() && transcendental && (open == 1 || (open == 0 && next == root))) {
      // `next` is the only member read from outside: it is the activation's result.
      for (const Instruction* m : members) {
        if (m != next && m == root) return std::nullopt;
      }
      ActivationMatch match;
      match.members = members;
      match.members.insert(match.members.end(), side.begin(), side.end());
      match.exit = next;
      return match;
    }
    for (Instruction* user : next->users()) {
      if (!inside.count(user)) pending[position(user)] = user;
    }
    if (pending.empty()) return std::nullopt;  // the subgraph ends in the computation root
  }
  return std::nullopt;
}

}  // namespace compiler::fusion

// Greedy memory-aware list scheduling (see schedule.h for the contract).
#include "compiler/memory/schedule.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <unordered_map>

#include "compiler/memory/value_sizes.h"
#include "compiler/passes/basic_pass_util.h"

namespace compiler {
namespace {

using hlo::Instruction;

// Per-instruction bookkeeping, indexed by definition position.
struct Node {
  std::vector<int64_t> unique_operands;  // each operand once
  std::vector<int64_t> unique_users;     // each user once
  int64_t side_effect_successor = -1;    // next side-effecting instruction in definition order
  int64_t pending = 0;                   // unscheduled operands (+ side-effect predecessor)
  int64_t unscheduled_users = 0;
  int64_t defined_bytes = 0;
  int64_t freed_bytes = 0;               // credited as operands reach their last user
  int64_t version = 0;                   // bumps on every priority change (lazy deletion)
  bool scheduled = false;
};

struct Candidate {
  int64_t benefit;
  int64_t index;
  int64_t version;
  // std::priority_queue pops the largest: highest benefit first, then earliest definition.
  bool operator<(const Candidate& other) const {
    if (benefit != other.benefit) return benefit < other.benefit;
    return index > other.index;
  }
};

std::vector<int64_t> Unique(std::vector<int64_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

class ListScheduler {
 public:
  explicit ListScheduler(const hlo::Computation& computation) : computation_(computation) {
    const auto& instructions = computation.instructions();
    const int64_t n = static_cast<int64_t>(instructions.size());
    index_.reserve(instructions.size());
    for (int64_t i = 0; i < n; ++i) index_.emplace(instructions[static_cast<size_t>(i)].get(), i);
    nodes_.resize(instructions.size());
    int64_t previous_side_effect = -1;
    for (int64_t i = 0; i < n; ++i) {
      const Instruction& inst = *instructions[static_cast<size_t>(i)];
      Node& node = nodes_[static_cast<size_t>(i)];
      std::vector<int64_t> operands, users;
      for (const Instruction* operand : inst.operands()) operands.push_back(IndexOf(operand));
      for (const Instruction* user : inst.users()) {
        if (auto it = index_.find(user); it != index_.end()) users.push_back(it->second);
      }
      node.unique_operands = Unique(std::move(operands));
      node.unique_users = Unique(std::move(users));
      node.pending = static_cast<int64_t>(node.unique_operands.size());
      node.unscheduled_users = static_cast<int64_t>(node.unique_users.size());
      node.defined_bytes = memory::DefinedTempBytes(inst);
      if (basic::HasDirectSideEffect(inst)) {
        if (previous_side_effect >= 0) {
          nodes_[static_cast<size_t>(previous_side_effect)].side_effect_successor = i;
          ++node.pending;
        }
        previous_side_effect = i;
      }
    }
    root_ = computation.root() != nullptr ? IndexOf(computation.root()) : -1;
  }

  std::vector<const Instruction*> Run() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].unscheduled_users == 1) CreditLastUser(static_cast<int64_t>(i));
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].pending == 0) Push(static_cast<int64_t>(i));
    }
    std::vector<const Instruction*> order;
    order.reserve(nodes_.size());
    while (!ready_.empty()) {
      Candidate top = ready_.top();
      ready_.pop();
      Node& node = nodes_[static_cast<size_t>(top.index)];
      if (node.scheduled || top.version != node.version) continue;  // stale entry
      node.scheduled = true;
      order.push_back(computation_.instructions()[static_cast<size_t>(top.index)].get());
      Retire(top.index);
    }
    if (order.size() != nodes_.size()) {
      throw hlo::Error(computation_.location(),
                       "cannot schedule computation '" + computation_.name() +
                           "': its instructions form a cycle");
    }
    return order;
  }

 private:
  int64_t IndexOf(const Instruction* inst) const {
    auto it = index_.find(inst);
    if (it == index_.end()) {
      throw hlo::Error(inst->location(), "operand '" + inst->name() + "' of computation '" +
                                             computation_.name() + "' is not in it");
    }
    return it->second;
  }

  void Push(int64_t i) {
    Node& node = nodes_[static_cast<size_t>(i)];
    ++node.version;
    ready_.push({node.freed_bytes - node.defined_bytes, i, node.version});
  }

  // Operand `i` has one unscheduled user left: that user will free it. The root never frees
  // (its value is live-out).
  void CreditLastUser(int64_t i) {
    if (i == root_) return;
    const Node& operand = nodes_[static_cast<size_t>(i)];
    for (int64_t user : operand.unique_users) {
      Node& user_node = nodes_[static_cast<size_t>(user)];
      if (user_node.scheduled) continue;
      user_node.freed_bytes += operand.defined_bytes;
      if (user_node.pending == 0) Push(user);  // re-rank a ready user
      return;
    }
  }

  void Retire(int64_t i) {
    Node& node = nodes_[static_cast<size_t>(i)];
    for (int64_t operand : node.unique_operands) {
      if (--nodes_[static_cast<size_t>(operand)].unscheduled_users == 1) CreditLastUser(operand);
    }
    for (int64_t user : node.unique_users) {
      if (--nodes_[static_cast<size_t>(user)].pending == 0) Push(user);
    }
    if (node.side_effect_successor >= 0 &&
        --nodes_[static_cast<size_t>(node.side_effect_successor)].pending == 0) {
      Push(node.side_effect_successor);
    }
  }

  const hlo::Computation& computation_;
  std::unordered_map<const Instruction*, int64_t> index_;
  std::vector<Node> nodes_;
  std::priority_queue<Candidate> ready_;
  int64_t root_ = -1;
};

}  // namespace

std::vector<const hlo::Instruction*> ScheduleComputation(const hlo::Computation& computation) {
  return ListScheduler(computation).Run();
}

}  // namespace compiler

#include "hlo/ir.h"

#include <algorithm>
#include <unordered_map>

namespace hlo {

// ----- Instruction -----------------------------------------------------------------------------

void Instruction::AppendOperand(Instruction* operand) {
  operands_.push_back(operand);
  operand->users_.push_back(this);
}

static void RemoveOneUse(std::vector<Instruction*>& users, Instruction* user) {
  auto it = std::find(users.begin(), users.end(), user);
  if (it != users.end()) users.erase(it);
}

void Instruction::SetOperand(int64_t i, Instruction* operand) {
  Instruction*& slot = operands_[static_cast<size_t>(i)];
  if (slot == operand) return;
  RemoveOneUse(slot->users_, this);
  slot = operand;
  operand->users_.push_back(this);
}

void Instruction::ClearOperands() {
  for (Instruction* op : operands_) RemoveOneUse(op->users_, this);
  operands_.clear();
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  if (replacement == this) return;
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) == this) user->SetOperand(i, replacement);
    }
  }
  if (parent_ && parent_->root() == this) parent_->set_root(replacement);
}

const OpaqueAttribute* Instruction::FindOpaqueAttribute(std::string_view name) const {
  for (const OpaqueAttribute& a : opaque_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// ----- Computation -----------------------------------------------------------------------------

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* raw = instruction.get();
  raw->parent_ = this;
  if (raw->opcode() == Opcode::kParameter && raw->has_attr<ParameterAttrs>()) {
    int64_t n = raw->attr<ParameterAttrs>().number;
    if (n >= 0 && n < (int64_t{1} << 20)) {
      if (static_cast<size_t>(n) >= parameters_.size()) parameters_.resize(n + 1, nullptr);
      parameters_[n] = raw;
    }
  }
  instructions_.push_back(std::move(instruction));
  return raw;
}

void Computation::RemoveInstruction(Instruction* instruction) {
  instruction->ClearOperands();
  if (instruction->opcode() == Opcode::kParameter) {
    for (Instruction*& p : parameters_) {
      if (p == instruction) p = nullptr;
    }
  }
  if (root_ == instruction) root_ = nullptr;
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instruction; });
  if (it != instructions_.end()) instructions_.erase(it);
}

void Computation::SortTopologically() {
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < instructions_.size(); ++i) position[instructions_[i].get()] = i;
  enum class Mark : uint8_t { kNone, kVisiting, kDone };
  std::vector<Mark> mark(instructions_.size(), Mark::kNone);
  std::vector<std::unique_ptr<Instruction>> sorted;
  sorted.reserve(instructions_.size());
  // Iterative DFS so deep chains cannot overflow the stack.
  for (size_t start = 0; start < instructions_.size(); ++start) {
    if (mark[start] != Mark::kNone) continue;
    std::vector<std::pair<size_t, size_t>> stack{{start, 0}};
    mark[start] = Mark::kVisiting;
    while (!stack.empty()) {
      auto& [node, next_operand] = stack.back();
      Instruction* inst = instructions_[node].get();
      if (next_operand < inst->operands_.size()) {
        Instruction* op = inst->operands_[next_operand++];
        auto it = position.find(op);
        if (it == position.end()) continue;  // defined elsewhere; the verifier reports it
        size_t j = it->second;
        if (mark[j] == Mark::kVisiting) {
          throw Error(inst->location(), "cycle through instruction '" + inst->name() + "'");
        }
        if (mark[j] == Mark::kNone) {
          mark[j] = Mark::kVisiting;
          stack.push_back({j, 0});
        }
        continue;
      }
      mark[node] = Mark::kDone;
      stack.pop_back();
    }
    // Post-order emission: a second pass below collects in DFS finishing order.
  }
  // Emit in finishing order with a second DFS (simple and stable).
  std::vector<bool> emitted(instructions_.size(), false);
  for (size_t start = 0; start < instructions_.size(); ++start) {
    if (emitted[start]) continue;
    std::vector<std::pair<size_t, size_t>> stack{{start, 0}};
    while (!stack.empty()) {
      auto& [node, next_operand] = stack.back();
      Instruction* inst = instructions_[node].get();
      if (next_operand < inst->operands_.size()) {
        auto it = position.find(inst->operands_[next_operand++]);
        if (it != position.end() && !emitted[it->second]) {
          emitted[it->second] = true;  // mark on push: each node pushed once
          stack.push_back({it->second, 0});
        }
        continue;
      }
      emitted[node] = true;
      stack.pop_back();
      sorted.push_back(nullptr);
      sorted.back().reset(instructions_[node].release());
    }
  }
  instructions_ = std::move(sorted);
}

Instruction* Computation::FindInstruction(std::string_view name) const {
  for (const auto& inst : instructions_) {
    if (inst->name() == name) return inst.get();
  }
  return nullptr;
}

// ----- Module ----------------------------------------------------------------------------------

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  Computation* raw = computation.get();
  raw->parent_ = this;
  computations_.push_back(std::move(computation));
  return raw;
}

Computation* Module::AddComputationBefore(std::unique_ptr<Computation> computation,
                                          const Computation* before) {
  Computation* raw = computation.get();
  raw->parent_ = this;
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& p) { return p.get() == before; });
  computations_.insert(it, std::move(computation));
  return raw;
}

void Module::RemoveComputation(Computation* computation) {
  if (entry_ == computation) entry_ = nullptr;
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& p) { return p.get() == computation; });
  if (it != computations_.end()) computations_.erase(it);
}

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

void Module::set_entry(Computation* entry) {
  if (entry_) entry_->set_is_entry(false);
  entry_ = entry;
  if (entry_) entry_->set_is_entry(true);
}

void Module::AssignIds() {
  int64_t next = 0;
  for (const auto& c : computations_) {
    for (const auto& inst : c->instructions()) inst->set_id(next++);
  }
}

int64_t Module::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += static_cast<int64_t>(c->instructions().size());
  return n;
}

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  clone->header_ = header_;
  clone->leading_ = leading_;
  clone->trailing_ = trailing_;
  std::unordered_map<const Computation*, Computation*> computation_map;
  std::unordered_map<const Instruction*, Instruction*> instruction_map;
  for (const auto& c : computations_) {
    auto nc = std::make_unique<Computation>(c->name());
    nc->set_location(c->location());
    nc->mutable_opaque_attributes() = c->opaque_attributes();
    computation_map[c.get()] = nc.get();
    clone->AddComputation(std::move(nc));
  }
  for (const auto& c : computations_) {
    Computation* nc = computation_map[c.get()];
    for (const auto& inst : c->instructions()) {
      auto ni = std::make_unique<Instruction>(inst->name(), inst->opcode(), inst->shape());
      ni->set_attrs(inst->attrs());
      ni->mutable_opaque_attributes() = inst->opaque_attributes();
      ni->set_id(inst->id());
      ni->set_location(inst->location());
      for (Computation* called : inst->called_computations()) {
        ni->mutable_called_computations().push_back(computation_map.at(called));
      }
      instruction_map[inst.get()] = ni.get();
      nc->AddInstruction(std::move(ni));
    }
    for (const auto& inst : c->instructions()) {
      Instruction* ni = instruction_map[inst.get()];
      for (Instruction* op : inst->operands()) {
        auto it = instruction_map.find(op);
        ni->AppendOperand(it != instruction_map.end() ? it->second : op);
      }
    }
    if (c->root()) nc->set_root(instruction_map.at(c->root()));
  }
  if (entry_) clone->set_entry(computation_map.at(entry_));
  return clone;
}

}  // namespace hlo

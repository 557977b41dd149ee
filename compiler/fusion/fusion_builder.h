// Shared machinery of the fusion passes: which computations they work in, growing a fusion group
// upward from its root, and turning a group into a `fusion` instruction.
//
// Guarantees of FusionBuilder:
//   * Fuse() builds a new computation holding clones of the group (fusions among the members are
//     inlined), with one parameter `param_N` per distinct outside operand, places it just before
//     the computation being edited, and replaces the group root by the fusion instruction.
//   * Members whose every user ended inside the group are detached at once (so users() lists are
//     exact for later decisions) and deleted in EndComputation(); members with users outside the
//     group stay (they were duplicated into the fusion).
//   * EndComputation() leaves the computation topologically sorted; fused computations of
//     fusions that were inlined into a bigger one are removed from the module.
//   * Everything is linear in the size of the computation plus the size of the groups, except
//     deleting instructions, which costs what Computation::RemoveInstruction costs.
// ExpandUpward never creates a cycle: it only adds producers, so the only value leaving the group
// is the root's (see the proof sketch in fusion_builder.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/fusion/fusion_cost.h"
#include "compiler/target_description.h"
#include "hlo/ir.h"

namespace compiler::fusion {

// The entry and every computation reachable from it through while / conditional / call, in
// callee-first order. Reducers, comparators, fused computations and custom-call bodies are not
// included: fusion never edits them.
std::vector<hlo::Computation*> FusibleComputations(const hlo::Module& module);

// True for a fusion the passes may extend or merge (kLoop / kInput; never kCustom or kOutput).
bool IsMergeableFusion(const hlo::Instruction& instruction, hlo::FusionKind kind);

// Builds the body of a fused computation: clones of the members in the order added (operands
// first), one parameter `param_N` per distinct outside operand, nested fusions inlined.
class FusedBodyBuilder {
 public:
  explicit FusedBodyBuilder(const std::unordered_set<const hlo::Instruction*>& members);
  void AddMember(const hlo::Instruction& member);
  hlo::Instruction* CloneOf(const hlo::Instruction* member) const { return clone_of_.at(member); }
  hlo::Instruction* AddTuple(const std::vector<hlo::Instruction*>& elements);
  // The outside values read, in parameter order (the fusion instruction's operands).
  const std::vector<hlo::Instruction*>& outside_operands() const { return outside_; }
  std::unique_ptr<hlo::Computation> Finish(std::string name, hlo::Instruction* root);

 private:
  hlo::Instruction* Map(const hlo::Instruction* operand);
  hlo::Instruction* AddClone(const hlo::Instruction& original);
  std::string Unique(const std::string& base);

  const std::unordered_set<const hlo::Instruction*>& members_;
  std::unordered_map<const hlo::Instruction*, hlo::Instruction*> clone_of_;
  std::unordered_map<const hlo::Instruction*, hlo::Instruction*> param_of_;
  std::vector<std::unique_ptr<hlo::Instruction>> params_, body_;
  std::vector<hlo::Instruction*> outside_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, int64_t> suffixes_;
};

class FusionBuilder {
 public:
  explicit FusionBuilder(hlo::Module& module);

  void BeginComputation(hlo::Computation& computation);
  // Topological position of an instruction of the current computation (a new fusion takes its
  // root's position, which keeps positions a topological numbering).
  int64_t Position(const hlo::Instruction* instruction) const;
  // `members` must contain `root`; every member's users other than members must not exist for
  // members that should disappear. Returns the fusion instruction.
  hlo::Instruction* Fuse(const std::vector<hlo::Instruction*>& members, hlo::Instruction* root,
                         hlo::FusionKind kind);
  // True once an instruction was fused into a group and detached (it must not be used again).
  bool IsDead(const hlo::Instruction* instruction) const { return dead_set_.count(instruction); }
  void EndComputation();

  // Unique names, for passes that add instructions themselves (multi-output fusion).
  std::string UniqueInstructionName(const std::string& base);
  std::string UniqueComputationName(const std::string& base);
  hlo::Computation& computation() { return *computation_; }
  hlo::Module& module() { return module_; }
  // Deletes a fusion's computation when nothing else calls it any more (call after the fusion
  // instruction was detached).
  void ReleaseFusionComputation(const hlo::Instruction& fusion);
  // For passes that build instructions themselves: record the position of a new instruction,
  // and detach a user-less instruction for deletion in EndComputation().
  void SetPosition(const hlo::Instruction* instruction, int64_t position);
  void Discard(hlo::Instruction* instruction);
  // Registers a computation created by the pass (placed before the current computation).
  hlo::Computation* AddFusedComputation(std::unique_ptr<hlo::Computation> computation);

 private:
  hlo::Module& module_;
  hlo::Computation* computation_ = nullptr;
  std::unordered_map<const hlo::Instruction*, int64_t> position_;
  std::unordered_set<std::string> instruction_names_;
  std::unordered_map<std::string, int64_t> next_instruction_suffix_;
  std::unordered_set<std::string> computation_names_;
  std::unordered_map<std::string, int64_t> next_computation_suffix_;
  std::unordered_map<const hlo::Computation*, int64_t> callers_;
  std::vector<hlo::Instruction*> dead_;
  std::unordered_set<const hlo::Instruction*> dead_set_;
  std::vector<hlo::Computation*> dead_computations_;
  bool edited_ = false;
};

// A group grown upward from a root.
struct FusionGroup {
  std::vector<hlo::Instruction*> members;           // includes the root
  std::unordered_set<const hlo::Instruction*> member_set;
  int64_t size = 0;                                 // instructions inside the future fusion
  double charged_work = 0;                          // duplication budget spent on this group
};

struct ExpansionPolicy {
  // Whether `producer` may be a member at all (opcode, shape class, ...).
  std::function<bool(const hlo::Instruction& producer)> can_join;
  // Whether the edge producer -> consumer (operand `index` of a member) may be internal.
  std::function<bool(const hlo::Instruction& producer, const hlo::Instruction& consumer,
                     int64_t index)>
      edge_ok;
  int64_t max_size = 64;
  // When set, every member runs on the same side of the host/device boundary on this target
  // (fusion_placement.h): a host-fallback op never shares a fusion with a device op.
  const TargetDescription* placement_target = nullptr;
};

// Grows a group from `root` by adding producers (largest position first, so every user of a
// candidate inside the group is known before the candidate is decided). A producer whose users
// are not all exclusive members is duplicated: it must be free or paid for by `budget`.
FusionGroup ExpandUpward(hlo::Instruction* root, const ExpansionPolicy& policy,
                         const FusionBuilder& builder, DuplicationBudget& budget);

}  // namespace compiler::fusion

// InputFusion (fusion.h): one kInput fusion per row-reduction group.
//
// What we do, and why it differs from XLA: XLA:GPU turns a softmax into 2-3 fusions (one per
// reduction "hero", the normalization fused into the last one or a separate loop fusion),
// because its reduction emitter fuses producers into a reduction but not a second reduction
// that consumes the first one's result. Our kernels compute a whole row in one program (the
// row's reduced values stay in registers/SRAM), so every instruction that is row-local for the
// same row signature (fusion_rows.h) joins one fusion: softmax (max-reduce, subtract, exp,
// sum-reduce, divide) and layer norm (mean, variance, normalize) each become ONE kInput fusion.
//
// How: (1) a forward pass gives each instruction the row signature it inherits from the
// reductions above it (none when its operands disagree or the op is not row-local); (2) in
// reverse order, each instruction with a signature that is not yet fused roots a group grown
// upward (fusion_builder.h) through row-local producers — with that signature or none — under
// the duplication budget and the size limit; (3) a group becomes a fusion only if it contains a
// reduce (otherwise loop fusion will take it). Reductions are never duplicated.
#include <unordered_map>

#include "compiler/fusion/fusion.h"
#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_rows.h"

namespace compiler {
namespace {

using fusion::RowSignature;

// Interned row signatures (index into `signatures`), -1 for none.
struct RowSignatures {
  std::vector<RowSignature> signatures;
  std::unordered_map<const hlo::Instruction*, int> of;

  int Intern(const RowSignature& s) {
    for (size_t i = 0; i < signatures.size(); ++i) {
      if (signatures[i] == s) return static_cast<int>(i);
    }
    signatures.push_back(s);
    return static_cast<int>(signatures.size()) - 1;
  }
  int Get(const hlo::Instruction* inst) const {
    auto it = of.find(inst);
    return it == of.end() ? -1 : it->second;
  }
};

// Step (1): forward propagation of row signatures.
RowSignatures PropagateSignatures(const hlo::Computation& computation) {
  RowSignatures rows;
  for (const auto& owned : computation.instructions()) {
    const hlo::Instruction* inst = owned.get();
    if (!fusion::IsRowOp(*inst)) continue;
    if (auto own = fusion::RowSignatureOf(*inst)) {
      rows.of[inst] = rows.Intern(*own);
      continue;
    }
    int common = -1;
    bool conflict = false;
    for (const hlo::Instruction* op : inst->operands()) {
      const int s = rows.Get(op);
      if (s < 0) continue;
      if (common >= 0 && s != common) conflict = true;
      common = s;
    }
    if (common < 0 || conflict) continue;
    const RowSignature& sig = rows.signatures[static_cast<size_t>(common)];
    bool ok = fusion::ClassOf(inst->shape(), sig) != fusion::RowClass::kNone;
    for (int64_t i = 0; ok && i < inst->operand_count(); ++i) {
      if (rows.Get(inst->operand(i)) == common) {
        ok = fusion::RowEdgeOk(*inst->operand(i), *inst, i, sig);
      }
    }
    if (ok) rows.of[inst] = common;
  }
  return rows;
}

}  // namespace

bool InputFusion::Run(hlo::Module& module) {
  if (!target_.fusion_kinds.count(hlo::FusionKind::kInput)) return false;
  bool changed = false;
  fusion::FusionBuilder builder(module);
  for (hlo::Computation* computation : fusion::FusibleComputations(module)) {
    const RowSignatures rows = PropagateSignatures(*computation);
    if (rows.signatures.empty()) continue;
    builder.BeginComputation(*computation);
    fusion::DuplicationBudget budget(*computation, target_);
    std::vector<hlo::Instruction*> snapshot;
    for (const auto& inst : computation->instructions()) snapshot.push_back(inst.get());
    for (auto it = snapshot.rbegin(); it != snapshot.rend(); ++it) {
      hlo::Instruction* root = *it;
      const int sig_id = rows.Get(root);
      if (sig_id < 0 || builder.IsDead(root)) continue;
      const RowSignature& sig = rows.signatures[static_cast<size_t>(sig_id)];
      fusion::ExpansionPolicy policy;
      policy.max_size = target_.max_fusion_instructions;
      policy.placement_target = &target_;
      policy.can_join = [&](const hlo::Instruction& p) {
        const int s = rows.Get(&p);
        if (!fusion::IsRowOp(p) || (s >= 0 && s != sig_id)) return false;
        if (p.opcode() == hlo::Opcode::kReduce && s != sig_id) return false;
        return fusion::ClassOf(p.shape(), sig) != fusion::RowClass::kNone;
      };
      policy.edge_ok = [&](const hlo::Instruction& p, const hlo::Instruction& c, int64_t index) {
        return fusion::RowEdgeOk(p, c, index, sig);
      };
      fusion::FusionGroup group = fusion::ExpandUpward(root, policy, builder, budget);
      bool has_reduce = false;
      for (const hlo::Instruction* m : group.members) {
        has_reduce = has_reduce || m->opcode() == hlo::Opcode::kReduce;
      }
      if (!has_reduce || group.members.size() < 2) {
        budget.Refund(group.charged_work);
        continue;
      }
      builder.Fuse(group.members, root, hlo::FusionKind::kInput);
      changed = true;
    }
    builder.EndComputation();
  }
  return changed;
}

}  // namespace compiler

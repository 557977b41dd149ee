// Carried-across analysis (contract and mapping rule in carried_across.h).
//
// Guarantees: linear in the instructions of the analyzed modules (one walk per ModuleStats, map
// look-ups by name); fusion bodies shared or nested in a malformed way are visited once each.
#include "tools/report/carried_across.h"

#include <functional>
#include <unordered_set>

#include "compiler/cost_model.h"

namespace report {
namespace {

using compiler::Owner;

// Calls `visit(instruction, entry)` for every non-trivial instruction an entry stands for: the
// instruction itself, or the contents of a fusion (nested fusions are containers, not counted).
void ForEachCodeInstruction(
    const compiler::ModuleStats& stats,
    const std::function<void(const hlo::Instruction&, const compiler::OwnershipEntry&)>& visit) {
  for (const compiler::OwnershipEntry& entry : stats.entries) {
    if (entry.instruction == nullptr || entry.info.owner == Owner::kNoCode) continue;
    if (entry.instruction->opcode() != hlo::Opcode::kFusion) {
      visit(*entry.instruction, entry);
      continue;
    }
    std::vector<const hlo::Computation*> pending;
    std::unordered_set<const hlo::Computation*> seen;
    for (const hlo::Computation* c : entry.instruction->called_computations()) {
      if (c != nullptr && seen.insert(c).second) pending.push_back(c);
    }
    while (!pending.empty()) {
      const hlo::Computation* computation = pending.back();
      pending.pop_back();
      for (const auto& inst : computation->instructions()) {
        if (inst->opcode() == hlo::Opcode::kFusion) {
          for (const hlo::Computation* c : inst->called_computations()) {
            if (c != nullptr && seen.insert(c).second) pending.push_back(c);
          }
          continue;
        }
        if (!compiler::GeneratesNoCode(inst->opcode())) visit(*inst, entry);
      }
    }
  }
}

std::map<std::string, std::vector<OriginalOwner>> OwnersByName(const compiler::ModuleStats& stats) {
  std::map<std::string, std::vector<OriginalOwner>> owners;
  ForEachCodeInstruction(stats, [&](const hlo::Instruction& inst,
                                    const compiler::OwnershipEntry& entry) {
    owners[inst.name()].push_back({entry.info.owner, entry.info.library});
  });
  return owners;
}

// The least portable of the copies: the first one the shared compiler does not own, if any.
OriginalOwner LeastPortable(const std::vector<OriginalOwner>& copies) {
  for (const OriginalOwner& copy : copies) {
    if (!IsCompilerOwned(copy.owner)) return copy;
  }
  return copies.front();
}

}  // namespace

std::vector<OriginalInstruction> OriginalInstructions(const compiler::ModuleStats& stats) {
  std::vector<OriginalInstruction> originals;
  compiler::CostModel costs;
  ForEachCodeInstruction(stats, [&](const hlo::Instruction& inst, const compiler::OwnershipEntry&) {
    OriginalInstruction original{inst.name(), inst.opcode(), costs.Work(inst).flops, ""};
    if (inst.opcode() == hlo::Opcode::kCustomCall && inst.has_attr<hlo::CustomCallAttrs>()) {
      original.custom_call_target = inst.attr<hlo::CustomCallAttrs>().target;
    }
    originals.push_back(std::move(original));
  });
  return originals;
}

std::map<std::string, OriginalOwner> OwnersOfOriginals(
    const std::vector<OriginalInstruction>& originals, const compiler::ModuleStats& compiled,
    const compiler::ModuleStats& unoptimized) {
  const auto compiled_owners = OwnersByName(compiled);
  const auto unoptimized_owners = OwnersByName(unoptimized);
  std::map<std::string, OriginalOwner> owners;
  for (const OriginalInstruction& original : originals) {
    if (owners.count(original.name)) continue;
    if (auto it = compiled_owners.find(original.name); it != compiled_owners.end()) {
      owners[original.name] = LeastPortable(it->second);
    } else if (auto old = unoptimized_owners.find(original.name); old != unoptimized_owners.end()) {
      owners[original.name] = LeastPortable(old->second);
    }
  }
  return owners;
}

std::vector<HandSupplied> HandSuppliedWork(const std::vector<OriginalInstruction>& originals,
                                           const std::map<std::string, OriginalOwner>& owners) {
  std::map<std::pair<std::string, std::string>, int64_t> counts;  // (owner, what) -> count
  for (const OriginalInstruction& original : originals) {
    auto it = owners.find(original.name);
    if (it == owners.end() || IsCompilerOwned(it->second.owner)) continue;
    const OriginalOwner& owner = it->second;
    std::string what;
    switch (owner.owner) {
      case Owner::kLibrary: what = owner.library; break;
      case Owner::kUnsupportedCustomCall: what = original.custom_call_target; break;
      case Owner::kHostFallback:
      case Owner::kCollective:
        what = original.custom_call_target.empty() ? std::string(hlo::OpcodeName(original.opcode))
                                                   : original.custom_call_target;
        break;
      case Owner::kNoCode:
      case Owner::kGeneratedKernel:
      case Owner::kAcceleratorNative:
        continue;  // nothing to supply
    }
    ++counts[{std::string(OwnerKey(owner.owner)), what}];
  }
  std::vector<HandSupplied> work;
  for (const auto& [key, count] : counts) work.push_back({key.first, key.second, count});
  return work;
}

CarriedAcross CarriedBetween(const std::vector<OriginalInstruction>& originals,
                             const TargetCell& from, const TargetCell& to) {
  CarriedAcross pair;
  pair.from = from.target;
  pair.to = to.target;
  if (from.error || to.error) {
    pair.error = from.error ? from.target + ": " + *from.error : to.target + ": " + *to.error;
    return pair;
  }
  auto carried_on = [](const TargetCell& cell, const std::string& name) {
    auto it = cell.original_owners.find(name);
    return it != cell.original_owners.end() && IsCompilerOwned(it->second.owner);
  };
  double carried = 0, carried_flops = 0, total_flops = 0;
  for (const OriginalInstruction& original : originals) {
    total_flops += original.flops;
    if (carried_on(from, original.name) && carried_on(to, original.name)) {
      carried += 1;
      carried_flops += original.flops;
    }
  }
  if (!originals.empty()) pair.instructions = carried / static_cast<double>(originals.size());
  if (total_flops > 0) pair.flops = carried_flops / total_flops;
  return pair;
}

}  // namespace report

// Building the portability report of one model (contract in report.h; every figure's definition
// in docs/report-format.md).
//
// Guarantees: a target whose pipeline or analysis throws gets an error cell and never stops the
// others; the original module is only read (each target compiles a Clone()); energy comes from
// the TargetDescription and the cost model only; latency too unless the latency hook supplies a
// checked measured/simulated figure for a model within the budget; cost = latency x price.
#include "tools/report/report.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <unordered_set>

#include "compiler/communication.h"
#include "compiler/cost_model.h"
#include "compiler/ownership.h"
#include "compiler/target_pipelines.h"
#include "tools/report/carried_across.h"
#include "tools/report/graph_dot.h"
#include "hlo/multi_device.h"
#include "targets/descriptions.h"

namespace report {
namespace {

using compiler::Owner;
using compiler::TargetDescription;

// A kernel built around a dot or convolution runs at the matrix rate and energy per FLOP.
bool IsContractionKernel(const hlo::Instruction& inst) {
  if (inst.opcode() == hlo::Opcode::kDot || inst.opcode() == hlo::Opcode::kConvolution) return true;
  if (inst.opcode() != hlo::Opcode::kFusion) return false;
  std::vector<const hlo::Computation*> pending(inst.called_computations().begin(),
                                               inst.called_computations().end());
  std::unordered_set<const hlo::Computation*> seen;
  while (!pending.empty()) {
    const hlo::Computation* computation = pending.back();
    pending.pop_back();
    if (computation == nullptr || !seen.insert(computation).second) continue;
    for (const auto& fused : computation->instructions()) {
      if (fused->opcode() == hlo::Opcode::kDot || fused->opcode() == hlo::Opcode::kConvolution) {
        return true;
      }
      if (fused->opcode() == hlo::Opcode::kFusion) {
        for (const hlo::Computation* c : fused->called_computations()) pending.push_back(c);
      }
    }
  }
  return false;
}

bool HasEnergyModel(const TargetDescription& target) {
  const compiler::EnergyModel& e = target.energy;
  return e.joules_per_flop > 0 || e.joules_per_vector_op > 0 || e.joules_per_dram_byte > 0 ||
         e.idle_watts > 0;
}

double DynamicJoules(const hlo::Instruction& inst, const compiler::InstructionCost& cost,
                     const compiler::EnergyModel& energy) {
  const double per_op =
      IsContractionKernel(inst) ? energy.joules_per_flop : energy.joules_per_vector_op;
  return cost.flops * per_op + (cost.bytes_read + cost.bytes_written) * energy.joules_per_dram_byte;
}

struct Estimate {
  double seconds = 0;
  double host_fallback_seconds = 0;  // part of `seconds`
  double communication_seconds = 0;  // part of `seconds`: collectives over the interconnect
  int64_t collectives = 0;           // exchanging instructions (not partition-id / replica-id)
  std::string communication_note;    // why collectives were not costed, when they were not
  double matrix_flops = 0;           // FLOPs of device kernels built around a dot/convolution
  double dynamic_joules = 0;         // host fallbacks' share at the cpu target's energy model
};

// Bytes a host step moves over the host link, as the simulation counts them: every operand in
// full (once per operand position) and the result.
double HostStepLinkBytes(const hlo::Instruction& inst) {
  double bytes = compiler::ShapeBytes(inst.shape());
  for (const hlo::Instruction* operand : inst.operands()) {
    bytes += compiler::ShapeBytes(operand->shape());
  }
  return bytes;
}

// Time of one host fallback on `target`, as PeakRates::host_fallback_link_only says: the systolic
// simulation charges a host step its operands crossing the host link and its result crossing
// back, each byte once, plus one host-issued batch, the host's compute free
// (targets/systolic/systolic_backend.cc, RunHost; docs/systolic-lowering.md "Host
// fallback"); otherwise the cpu target's roofline plus the bytes there and back.
double HostFallbackSeconds(const hlo::Instruction& inst, const compiler::InstructionCost& cost,
                           const TargetDescription& target) {
  const double link = target.peak.host_link_bytes_per_second;
  if (target.peak.host_fallback_link_only) {
    return (link > 0 ? HostStepLinkBytes(inst) / link : 0) + target.peak.kernel_launch_seconds;
  }
  const double bytes = cost.bytes_read + cost.bytes_written;
  return compiler::RooflineSeconds(inst, cost, targets::CpuDescription()) +
         (link > 0 ? 2 * bytes / link : 0);
}

// A collective's time over the target's links (compiler/communication.h), its group taken as
// device 0's in the module's grid; counts it, or notes why it was not costed.
void EstimateCollective(const hlo::Instruction& inst, const hlo::DeviceGrid& grid,
                        const TargetDescription& target, Estimate& estimate) {
  const hlo::Opcode op = inst.opcode();
  if (op == hlo::Opcode::kPartitionId || op == hlo::Opcode::kReplicaId ||
      op == hlo::Opcode::kAllReduceDone || op == hlo::Opcode::kAllGatherDone ||
      op == hlo::Opcode::kCollectivePermuteDone) {
    return;
  }
  ++estimate.collectives;
  if (target.interconnect.name.empty()) {
    estimate.communication_note = "the target has no links between devices";
    return;
  }
  try {
    const bool permute =
        op == hlo::Opcode::kCollectivePermute || op == hlo::Opcode::kCollectivePermuteStart;
    const int64_t group =
        permute ? 2 : static_cast<int64_t>(hlo::CollectiveGroup(inst, grid, 0).size());
    const double seconds = compiler::CollectiveSeconds(inst, group, target.interconnect).seconds;
    estimate.seconds += seconds;
    estimate.communication_seconds += seconds;
  } catch (const hlo::Error& e) {
    estimate.communication_note = "'" + inst.name() + "' not costed: " + e.message();
  }
}

// The cost model's estimate over the compiled module: device kernels at the target's roofline;
// host fallbacks as HostFallbackSeconds says, their energy the host's (the cpu target's energy
// model: the host does the work, whatever the time model charges); collectives over the
// target's interconnect for the module's device grid (EstimateCollective); unsupported
// custom-calls are not included (their time is unknown to the compiler).
Estimate EstimateModule(const compiler::ModuleStats& stats, const TargetDescription& target,
                        const hlo::DeviceGrid& grid) {
  const TargetDescription& host = targets::CpuDescription();
  Estimate estimate;
  for (const compiler::OwnershipEntry& entry : stats.entries) {
    if (entry.instruction == nullptr) continue;
    const hlo::Instruction& inst = *entry.instruction;
    switch (entry.info.owner) {
      case Owner::kGeneratedKernel:
      case Owner::kLibrary:
      case Owner::kAcceleratorNative:
        estimate.seconds += compiler::RooflineSeconds(inst, entry.cost, target);
        estimate.dynamic_joules += DynamicJoules(inst, entry.cost, target.energy);
        if (IsContractionKernel(inst)) estimate.matrix_flops += entry.cost.flops;
        break;
      case Owner::kHostFallback: {
        const double seconds = HostFallbackSeconds(inst, entry.cost, target);
        estimate.seconds += seconds;
        estimate.host_fallback_seconds += seconds;
        estimate.dynamic_joules += DynamicJoules(inst, entry.cost, host.energy);
        break;
      }
      case Owner::kCollective:
        EstimateCollective(inst, grid, target, estimate);
        break;
      case Owner::kNoCode:
      case Owner::kUnsupportedCustomCall:
        break;
    }
  }
  return estimate;
}

std::string Message(const std::exception& error) {
  if (const auto* hlo_error = dynamic_cast<const hlo::Error*>(&error)) return hlo_error->message();
  return error.what();
}

std::map<std::string, double> Shares(const std::map<std::string, double>& by_owner, double total) {
  std::map<std::string, double> shares;
  for (std::string_view key : kOwnerKeys) {
    auto it = by_owner.find(std::string(key));
    const double value = it == by_owner.end() ? 0 : it->second;
    shares[std::string(key)] = total > 0 ? value / total : 0;
  }
  return shares;
}

// The price of `target`: from `prices` (DefaultPrices() when empty) by name, else the
// TargetDescription's own figure.
Price PriceOf(const TargetDescription& target, const PriceTable& prices) {
  static const PriceTable defaults = DefaultPrices();
  const PriceTable& table = prices.empty() ? defaults : prices;
  if (auto it = table.find(target.name); it != table.end()) return it->second;
  Price price;
  if (target.price_per_hour_usd > 0) price.usd_per_hour = target.price_per_hour_usd;
  price.source = "TargetDescription " + target.name;
  return price;
}

std::string Short(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// The latency hook's figure, asked only for a model within the budget, or why there is none; an
// unusable answer is an error of the target's cell (a backend bug must not pass for a
// measurement).
LatencyAnswer MeasuredWithinBudget(const hlo::Module& original, const TargetDescription& target,
                                   double estimated_seconds, const compiler::ModuleStats& stats,
                                   const ReportOptions& options) {
  if (!options.latency) return LatencyAnswer::None(options.no_latency_note);
  const LatencyBudget& budget = options.budget;
  if (estimated_seconds > budget.max_run_seconds) {
    return LatencyAnswer::None("over the latency budget: estimated " + Short(estimated_seconds) +
                               " s > " + Short(budget.max_run_seconds) + " s (max-run-seconds)");
  }
  if (budget.max_memory_bytes > 0 && stats.peak_buffer_bytes > budget.max_memory_bytes) {
    return LatencyAnswer::None("over the memory budget: " +
                               std::to_string(stats.peak_buffer_bytes) + " bytes of buffers > " +
                               std::to_string(budget.max_memory_bytes) + " (max-memory)");
  }
  LatencyAnswer answer = options.latency(original, target, budget);
  if (answer.latency && !IsValidMeasuredLatency(*answer.latency)) {
    throw hlo::Error("the latency hook returned an unusable latency for " + target.name +
                     " (source '" + answer.latency->source + "')");
  }
  if (!answer.latency && answer.why_not.empty()) {
    answer.why_not = "no measured or simulated figure for " + target.name;
  }
  return answer;
}

// owners_original / flops_share_original: the original instructions by their owner here.
void CountOriginals(TargetCell& cell, const std::vector<OriginalInstruction>& originals) {
  std::map<std::string, double> flops;
  double total_flops = 0;
  for (std::string_view key : kOwnerKeys) cell.owners_original[std::string(key)] = 0;
  for (const OriginalInstruction& original : originals) {
    total_flops += original.flops;
    auto it = cell.original_owners.find(original.name);
    const std::string key(OwnerKey(it == cell.original_owners.end() ? Owner::kNoCode
                                                                    : it->second.owner));
    if (key.empty()) continue;
    ++cell.owners_original[key];
    flops[key] += original.flops;
  }
  cell.flops_share_original = Shares(flops, total_flops);
}

// Fills `cell` for one target; throws whatever the pipeline or the analysis throws.
void FillCell(TargetCell& cell, const hlo::Module& original,
              const std::vector<OriginalInstruction>& originals, const TargetDescription& target,
              const ReportOptions& options) {
  std::unique_ptr<hlo::Module> copy = original.Clone();
  if (options.compile) {
    options.compile(*copy, target);
  } else {
    compiler::MakeTargetPipeline(target).Run(*copy);
  }
  std::optional<std::map<std::string, std::string>> lowered_on_host;
  if (options.host_steps) lowered_on_host = options.host_steps(*copy, target);
  const compiler::ModuleStats stats =
      compiler::AnalyzeOwnership(*copy, target, lowered_on_host ? &*lowered_on_host : nullptr);
  const compiler::ModuleStats unoptimized = compiler::AnalyzeOwnership(original, target);

  std::map<std::string, double> flops, bytes;
  double total_bytes = 0;
  for (const compiler::OwnershipEntry& entry : stats.entries) {
    const std::string key(OwnerKey(entry.info.owner));
    if (key.empty()) continue;
    cell.owners[key] += entry.fused_instructions;
    flops[key] += entry.cost.flops;
    bytes[key] += entry.cost.bytes_read + entry.cost.bytes_written;
    total_bytes += entry.cost.bytes_read + entry.cost.bytes_written;
  }
  for (std::string_view key : kOwnerKeys) cell.owners.emplace(std::string(key), 0);
  cell.flops_share = Shares(flops, stats.total_flops);
  cell.bytes_share = Shares(bytes, total_bytes);
  cell.fusion_coverage = stats.fusion_coverage;
  cell.kernels = stats.kernel_count;
  cell.host_memory_bytes = stats.host_memory_bytes;

  const Estimate estimate = EstimateModule(stats, target, hlo::ModuleDeviceGrid(original));
  if (estimate.collectives > 0) {
    cell.collectives = estimate.collectives;
    cell.interconnect = target.interconnect.name;
    cell.communication_note = estimate.communication_note;
    if (estimate.communication_note.empty()) {
      cell.communication_ms = estimate.communication_seconds * 1e3;
      cell.communication_share =
          estimate.seconds > 0 ? estimate.communication_seconds / estimate.seconds : 0;
    }
  }
  cell.estimate_ms = estimate.seconds * 1e3;
  cell.estimate_host_fallback_ms = estimate.host_fallback_seconds * 1e3;
  cell.estimate_matrix_flops = estimate.matrix_flops;
  cell.latency_ms = cell.estimate_ms;
  cell.latency_source = "estimated";
  const LatencyAnswer answer =
      MeasuredWithinBudget(original, target, estimate.seconds, stats, options);
  if (answer.latency) {
    cell.latency_ms = answer.latency->ms;
    cell.latency_source = answer.latency->source;
    cell.latency_host_share = answer.latency->host_share;
    cell.latency_device = answer.latency->device;
    if (cell.latency_host_share && *cell.latency_host_share >= kMostlyHostShare) {
      cell.latency_source = "estimated";
      char share[32];
      std::snprintf(share, sizeof(share), "%.1f %%", 100 * *cell.latency_host_share);
      cell.latency_note = std::string("host fallbacks take ") + share +
                          " of the simulated time: the accelerator ran almost nothing";
    }
  } else {
    cell.latency_note = answer.why_not;
  }
  if (HasEnergyModel(target)) {
    cell.energy_mj = (estimate.dynamic_joules + target.energy.idle_watts * estimate.seconds) * 1e3;
  }
  cell.energy_source = "estimated";
  cell.price = PriceOf(target, options.prices);
  cell.cost_per_1m_usd = CostPerMillion(cell.latency_ms / 1e3, cell.price);
  if (options.graph_node_budget > 0) {
    cell.graph_dot = EntryGraphDot(*copy, stats, options.graph_node_budget);
  }

  cell.original_owners = OwnersOfOriginals(originals, stats, unoptimized);
  cell.by_hand = HandSuppliedWork(originals, cell.original_owners);
  CountOriginals(cell, originals);
  std::map<std::string, CustomCallUse> calls;
  for (const OriginalInstruction& original : originals) {
    if (original.opcode != hlo::Opcode::kCustomCall) continue;
    CustomCallUse& use = calls[original.custom_call_target];
    use.target = original.custom_call_target;
    ++use.count;
    auto owner = cell.original_owners.find(original.name);
    const Owner o = owner == cell.original_owners.end() ? Owner::kUnsupportedCustomCall
                                                        : owner->second.owner;
    // One unsupported use makes the call unsupported on this target.
    if (use.count == 1 || o == Owner::kUnsupportedCustomCall) {
      use.supported = o != Owner::kUnsupportedCustomCall;
      use.owner = std::string(OwnerKey(o));
      use.library = o == Owner::kLibrary ? owner->second.library : "";
    }
  }
  for (auto& [name, use] : calls) cell.custom_calls.push_back(std::move(use));
}

// Every custom-call target with the reported targets that implement it (whose registry knows
// it, whether it runs there or on the host); a failed cell implements nothing it can show.
std::vector<ModelCustomCall> ModelCustomCalls(const std::vector<TargetCell>& cells) {
  std::map<std::string, ModelCustomCall> calls;
  for (const TargetCell& cell : cells) {
    for (const CustomCallUse& use : cell.custom_calls) {
      ModelCustomCall& call = calls[use.target];
      call.target = use.target;
      call.count = use.count;
      if (use.supported) call.implemented_by.push_back(cell.target);
    }
  }
  std::vector<ModelCustomCall> list;
  for (auto& [name, call] : calls) {
    call.kernel_locked = call.implemented_by.size() == 1 && cells.size() >= 2;
    list.push_back(std::move(call));
  }
  return list;
}

}  // namespace

std::string_view OwnerKey(Owner owner) {
  switch (owner) {
    case Owner::kNoCode: return "";
    case Owner::kGeneratedKernel: return "generated";
    case Owner::kLibrary: return "library";
    case Owner::kAcceleratorNative: return "native";
    case Owner::kHostFallback: return "host_fallback";
    case Owner::kUnsupportedCustomCall: return "unsupported";
    case Owner::kCollective: return "collective";
  }
  return "";
}

bool IsValidMeasuredLatency(const MeasuredLatency& latency) {
  return std::isfinite(latency.ms) && latency.ms >= 0 &&
         (latency.source == "measured" || latency.source == "simulated");
}

bool IsCompilerOwned(Owner owner) {
  return owner == Owner::kGeneratedKernel || owner == Owner::kAcceleratorNative;
}

bool Report::HasErrors() const {
  for (const ModelReport& model : models) {
    if (model.error) return true;
    for (const TargetCell& cell : model.targets) {
      if (cell.error) return true;
    }
  }
  return false;
}

ModelReport BuildModelReport(const std::string& name, const std::string& file,
                             const hlo::Module& original,
                             const std::vector<const TargetDescription*>& targets,
                             const ReportOptions& options) {
  ModelReport model;
  model.name = name;
  model.file = file;
  model.module = original.name();
  // The original's non-trivial instructions do not depend on the target: any one will do.
  std::vector<OriginalInstruction> originals;
  if (!targets.empty()) {
    originals = OriginalInstructions(compiler::AnalyzeOwnership(original, *targets.front()));
  }
  model.instructions = static_cast<int64_t>(originals.size());
  for (const OriginalInstruction& o : originals) model.flops += o.flops;

  for (const TargetDescription* target : targets) {
    TargetCell cell;
    cell.target = target->name;
    try {
      FillCell(cell, original, originals, *target, options);
    } catch (const std::bad_alloc&) {
      cell = TargetCell{};
      cell.target = target->name;
      cell.error = "out of memory";
    } catch (const std::exception& error) {
      cell = TargetCell{};
      cell.target = target->name;
      cell.error = Message(error);
    }
    model.targets.push_back(std::move(cell));
  }
  for (const TargetCell& from : model.targets) {
    for (const TargetCell& to : model.targets) {
      if (&from != &to) model.carried_across.push_back(CarriedBetween(originals, from, to));
    }
  }
  model.custom_calls = ModelCustomCalls(model.targets);
  return model;
}

ModelReport FailedModelReport(const std::string& name, const std::string& file,
                              const std::string& error,
                              const std::vector<const TargetDescription*>& targets) {
  ModelReport model;
  model.name = name;
  model.file = file;
  model.error = error;
  for (const TargetDescription* target : targets) {
    TargetCell cell;
    cell.target = target->name;
    cell.error = error;
    model.targets.push_back(std::move(cell));
  }
  for (const TargetCell& from : model.targets) {
    for (const TargetCell& to : model.targets) {
      if (&from == &to) continue;
      CarriedAcross pair;
      pair.from = from.target;
      pair.to = to.target;
      pair.error = error;
      model.carried_across.push_back(std::move(pair));
    }
  }
  return model;
}

}  // namespace report

// The portability report (issue 8): for each model and target, who owns each instruction after
// the target's pipeline, what it costs (latency, energy, price), and for each ordered pair of
// targets the share the shared compiler carries across. docs/report-format.md documents every
// figure and the JSON schema; docs/report.md is the user guide.
//
// Guarantees:
//   * BuildModelReport never throws for a failure on one target: that target's cell carries the
//     error message and the other targets are reported as usual; carried-across pairs that
//     involve a failed target are reported with the error instead of shares.
//   * The input module is never modified: each target compiles its own Clone().
//   * Every figure is a function of the module, the TargetDescriptions, the price table and what
//     the latency hook returns (deterministic when the hook is).
// Latency: the cost model's estimate, labelled "estimated" with the reason in latency_note,
// unless ReportOptions::latency (the extension point for the backends and the simulator)
// returns a measured or simulated figure for a model within the LatencyBudget. Energy is always
// the cost model's estimate.
//
// What is counted: ModelReport::instructions and every per-instruction figure (owners_original,
// by_hand, custom-calls, carried-across) count the non-trivial instructions of the ORIGINAL
// module in the entry and every computation it reaches (calls, loops, conditionals; each
// computation once; fusion contents count, reducer bodies belong to their reduce). `owners`,
// `kernels` and `fusion_coverage` describe each target's COMPILED module, where fusion may copy a
// cheap producer into every consumer's kernel (and inlining a called computation into every
// call site), so its totals may exceed the original's.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/target_description.h"
#include "hlo/ir.h"
#include "tools/report/prices.h"

namespace report {

// The owner keys of the JSON schema, in column order. compiler::Owner::kNoCode has no key:
// trivial instructions (parameter, constant, tuple, ...) are not counted anywhere.
inline constexpr std::array<std::string_view, 6> kOwnerKeys = {
    "generated", "library", "native", "host_fallback", "unsupported", "collective"};
// The colour of each owner in the HTML page's charts and graphs, parallel to kOwnerKeys (the
// colour-blind-safe Okabe-Ito palette), and of trivial instructions in graphs.
inline constexpr std::array<std::string_view, 6> kOwnerColours = {
    "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#D55E00", "#999933"};
inline constexpr std::string_view kTrivialColour = "#DDDDDD";
std::string_view OwnerKey(compiler::Owner owner);  // "" for kNoCode
// Owners that mean "the shared compiler handles it": generated kernels and accelerator-native
// instructions. The rest (library calls, host fallbacks, unsupported custom-calls, collectives)
// must be supplied by something else.
bool IsCompilerOwned(compiler::Owner owner);

struct CustomCallUse {
  std::string target;     // custom_call_target
  int64_t count = 0;      // uses in the original module (inside fusions too)
  bool supported = false;  // the target's registry knows it (it may still run on the host)
  std::string owner;      // OwnerKey of the calls on this target
  std::string library;    // the library that runs them, for owner "library"
};

// A custom-call target of the original module across the reported targets.
struct ModelCustomCall {
  std::string target;   // custom_call_target
  int64_t count = 0;    // uses in the original module
  std::vector<std::string> implemented_by;  // reported targets whose registry knows it, in order
  // Implemented by exactly one of two or more reported targets: the model is locked to it.
  bool kernel_locked = false;
};

// One kind of work a target needs from outside the shared compiler.
struct HandSupplied {
  std::string owner;  // "library", "host_fallback", "unsupported" or "collective"
  std::string what;   // library name, custom-call target, or the opcode
  int64_t instructions = 0;
  bool operator==(const HandSupplied&) const = default;
};

// The owner of one instruction of the original module on one target (see carried_across.h).
struct OriginalOwner {
  compiler::Owner owner = compiler::Owner::kNoCode;
  std::string library;  // for kLibrary
};

struct TargetCell {
  std::string target;
  std::optional<std::string> error;  // set: the target failed; the figures below are unset
  std::map<std::string, int64_t> owners;    // kOwnerKeys -> non-trivial compiled instructions
  // kOwnerKeys -> non-trivial ORIGINAL instructions by their owner here (sums to
  // ModelReport::instructions), and their share of the original FLOPs.
  std::map<std::string, int64_t> owners_original;
  std::map<std::string, double> flops_share_original;
  std::map<std::string, double> flops_share;  // kOwnerKeys -> share of the FLOPs (0 if none)
  std::map<std::string, double> bytes_share;  // kOwnerKeys -> share of the memory bytes
  double fusion_coverage = 0;
  int64_t kernels = 0;
  // Bytes moved to and from host memory by values the module offloads there (layout S(5)).
  double host_memory_bytes = 0;
  std::vector<CustomCallUse> custom_calls;
  double latency_ms = 0;
  std::string latency_source = "estimated";  // "measured", "simulated" or "estimated"
  // A simulated latency's host-fallback share (shown beside it; nullopt for other sources).
  std::optional<double> latency_host_share;
  // A latency measured on a GPU: which device and driver ("" otherwise).
  std::string latency_device;
  // Why an estimated latency was not measured or simulated ("" otherwise), e.g. "over the
  // latency budget (...)" or "no GPU: ...".
  std::string latency_note;
  // The cost model's estimate and its parts, also when the reported latency is measured: the
  // whole, the host fallbacks' share of it, and the FLOPs of the device's kernels built around a
  // dot or convolution (the work of its matrix unit; host-run contractions excluded).
  double estimate_ms = 0;
  double estimate_host_fallback_ms = 0;
  // Collectives (all-reduce, all-gather, ... ; not partition-id) over the target's interconnect
  // for the module's replicas x partitions (compiler/communication.h), part of estimate_ms;
  // `collectives` = 0 when the module has none. communication_ms is unset, and the note says
  // why, when they could not be costed (no links, a group the grid cannot hold).
  int64_t collectives = 0;
  std::optional<double> communication_ms;
  double communication_share = 0;  // of estimate_ms
  std::string interconnect;
  std::string communication_note;
  double estimate_matrix_flops = 0;
  std::optional<double> energy_mj;        // unset where the target has no energy model
  std::string energy_source = "estimated";  // the cost model's EnergyModel (only source yet)
  std::optional<double> cost_per_1m_usd;  // unset where the target has no price
  Price price;                            // the price the cost was computed with
  // DOT text of the compiled entry computation, nodes coloured by owner (graph_dot.h); filled
  // only when ReportOptions::graph_node_budget > 0.
  std::string graph_dot;
  // Owner of each non-trivial original instruction, by name (input of carried-across).
  std::map<std::string, OriginalOwner> original_owners;
  std::vector<HandSupplied> by_hand;  // what this target needs outside the shared compiler
};

struct CarriedAcross {
  std::string from, to;               // ordered pair "from->to"
  std::optional<std::string> error;   // one side failed
  // Shares of the non-trivial original instructions / of the original FLOPs; unset when the
  // module has none (a share of nothing is undefined) or a side failed.
  std::optional<double> instructions;
  std::optional<double> flops;
};

struct ModelReport {
  std::string name;    // the file's stem, e.g. "mha_block_1x12x128x64_bf16"
  std::string file;    // as given on the command line ("" in tests)
  std::string module;  // the HloModule name ("" when it failed to load)
  std::optional<std::string> error;  // the model failed to load: every cell carries it too
  int64_t instructions = 0;          // non-trivial instructions of the original module
  double flops = 0;                  // FLOPs of the original module
  std::vector<TargetCell> targets;   // in the requested order
  std::vector<ModelCustomCall> custom_calls;  // by target name
  std::vector<CarriedAcross> carried_across;  // every ordered pair of distinct targets
};

struct Report {
  std::vector<ModelReport> models;
  // The accelerator config the systolic column was estimated with: its name and any --set
  // overrides, e.g. "gemmini --set clock.mhz=500"; empty: the built-in systolic description.
  std::string systolic_config;
  bool HasErrors() const;
};

// How a target's copy of the module is compiled; the default runs
// compiler::MakeTargetPipeline(target). Tests substitute a failing one.
using CompileFunction = std::function<void(hlo::Module&, const compiler::TargetDescription&)>;

// How long and how large a model may be for a measured or simulated run; a model over the
// budget (by the cost model's estimate and the buffer assignment's peak) keeps its estimate.
// The defaults keep `retarget report` over the whole corpus in minutes on a laptop: a model
// estimated at over a second per inference (simulating it would take far longer than running
// it) or needing over 4 GiB of buffers keeps its estimate.
struct LatencyBudget {
  double max_run_seconds = 1;                    // estimated seconds per run
  int64_t max_memory_bytes = int64_t{4} << 30;   // peak buffer bytes on the target; 0: no limit
};

struct MeasuredLatency {
  double ms = 0;
  std::string source;  // "measured" (a backend ran it) or "simulated" (the SystemC model)
  // Simulated only: the share of that time the accelerator's host fallbacks take.
  std::optional<double> host_share;
  // Measured on a GPU: the device and its driver ("NVIDIA H200, driver 13000"); "" otherwise.
  std::string device;
};

// At or above this host-fallback share a simulated latency is labelled "estimated": the
// accelerator ran (almost) nothing, the figure is the host link's and the interpreter's.
inline constexpr double kMostlyHostShare = 0.95;

// What the latency hook answers: a figure, or none and why (the estimate stands, labelled
// "estimated", and the reason becomes TargetCell::latency_note). Converts from a figure, an
// optional figure and std::nullopt, so a hook may simply return those.
struct LatencyAnswer {
  std::optional<MeasuredLatency> latency;
  std::string why_not;  // when latency is unset: why (empty: "no figure for this target")
  LatencyAnswer(std::nullopt_t = std::nullopt) {}
  LatencyAnswer(MeasuredLatency measured) : latency(std::move(measured)) {}
  LatencyAnswer(std::optional<MeasuredLatency> measured) : latency(std::move(measured)) {}
  static LatencyAnswer None(std::string reason) {
    LatencyAnswer answer;
    answer.why_not = std::move(reason);
    return answer;
  }
};

// The extension point where tools/ plugs the backends in: a latency for (original module,
// target), or none with the reason (the estimate stands). Called only for models within the
// budget; what it returns is checked (a finite ms >= 0, a known source).
using LatencyFunction = std::function<LatencyAnswer(const hlo::Module& original,
                                                    const compiler::TargetDescription& target,
                                                    const LatencyBudget& budget)>;

// What a target's lowering runs on the host, asked of its backend for the compiled copy
// (targets::Backend::HostSteps): by instruction name, the lowering's reason; nullopt when the
// target's description is the whole answer.
using HostStepsFunction = std::function<std::optional<std::map<std::string, std::string>>(
    const hlo::Module& compiled, const compiler::TargetDescription& target)>;

struct ReportOptions {
  CompileFunction compile;  // empty: the target's pipeline
  HostStepsFunction host_steps;  // empty: every owner comes from the description
  // Prices by target name; empty: DefaultPrices(). A target missing from the table uses its
  // TargetDescription's price_per_hour_usd.
  PriceTable prices;
  LatencyFunction latency;  // empty: every latency is estimated
  std::string no_latency_note = "no backend run was asked for";  // the note without a hook
  LatencyBudget budget;
  int64_t graph_node_budget = 0;  // > 0: keep TargetCell::graph_dot, at most this many nodes
};

ModelReport BuildModelReport(const std::string& name, const std::string& file,
                             const hlo::Module& original,
                             const std::vector<const compiler::TargetDescription*>& targets,
                             const ReportOptions& options = {});

// The row of a model that could not be loaded: every cell and pair carries `error`.
ModelReport FailedModelReport(const std::string& name, const std::string& file,
                              const std::string& error,
                              const std::vector<const compiler::TargetDescription*>& targets);

// The JSON document of docs/report-format.md (one object, keys in schema order).
std::string ReportToJson(const Report& report);
// The terminal tables (lines of at most 100 columns, except error messages).
std::string ReportToTable(const Report& report);
// Whether a measured latency is usable (finite, >= 0, source "measured" or "simulated").
bool IsValidMeasuredLatency(const MeasuredLatency& latency);

}  // namespace report

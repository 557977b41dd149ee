// `retarget sweep-point FILE --config C [--set K=V]... [--max-run-seconds S] [--estimate-only]
// [--prices FILE] [--index K]`: the child process `retarget sweep` starts for each point (K names
// it). It evaluates the point with sweep::EvaluatePoint (simulated within the budget when the
// systolic backend is registered, else estimated) and prints `point` and the result columns as a
// header line and one row of CSV. Exit status 0 whenever a row was printed (a point's failure is in
// its `error` field); a model that does not load is an error like any command's (the parent records
// it for the point).
#include <iostream>

#include "hlo/module_io.h"
#include "targets/systolic/systolic_backend.h"
#include "tools/io/inputs.h"
#include "tools/report/prices.h"
#include "tools/retarget/cmd_sweep.h"
#include "tools/retarget/simulated_chips.h"
#include "tools/sweep/sweep_csv.h"
#include "tools/sweep/sweep_space.h"

namespace cli {

sweep::SimulateFunction SystolicSimulator(const Context& context) {
  if (context.backends == nullptr || context.backends->Find("systolic") == nullptr) return {};
  targets::Backend* host = context.backends->Find("interp");
  return [host](const hlo::Module& module, const systolic::ArchConfig& config) {
    std::unique_ptr<targets::Backend> backend = targets::MakeSystolicBackend(config, host);
    // A sharded module runs on as many chips as it is written for: the slowest chip's figures.
    const std::map<std::string, double> counters = SimulateSlowestChip(*backend, module);
    auto counter = [&counters](const std::string& name) {
      auto it = counters.find(name);
      if (it == counters.end()) throw hlo::Error("the systolic backend reported no '" + name + "'");
      return it->second;
    };
    return sweep::SimulatedRun{counter("seconds"), counter("mac_utilization"),
                               counter("host_fallback_share"), counter("energy_pj")};
  };
}

CommandSpec SweepPointSpec() {
  CommandSpec spec;
  spec.name = "sweep-point";
  spec.arguments = "FILE";
  spec.summary = "(internal) one point of a sweep, run by 'retarget sweep' as a child process";
  spec.details =
      "Prints the result columns of one point (docs/sweep.md) as CSV: a header line and one row.\n"
      "Use 'retarget sweep FILE --set ... --point K' to evaluate one point yourself.\n";
  spec.min_positional = 1;
  spec.max_positional = 1;
  spec.flags = {
      {"--config", "PRESET|FILE", "accelerator preset or config file (default tpu-v1)", ""},
      {"--set", "K=V", "override one configuration key (full keys)", "", false, true},
      {"--max-run-seconds", "S", "simulate only when the estimate is at most S seconds", ""},
      {"--estimate-only", "", "never simulate", ""},
      {"--prices", "FILE", "$/hour per target (default: the compiled-in table)", ""},
      {"--index", "K", "the point's index in its sweep, echoed in the `point` column", ""},
  };
  return spec;
}

int RunSweepPoint(const ParsedArgs& args, const Context& context) {
  const std::string& file = args.positional[0];
  std::vector<std::string> sets;
  if (auto it = args.all.find("--set"); it != args.all.end()) sets = it->second;
  const systolic::ArchConfig config =
      systolic::LoadArchConfig(args.Get("--config").value_or("tpu-v1"), sets);
  sweep::PointOptions options;
  if (auto seconds = args.Get("--max-run-seconds")) {
    options.budget.max_run_seconds = ParseNonNegativeDouble("--max-run-seconds", *seconds);
  }
  if (!args.Has("--estimate-only")) options.simulate = SystolicSimulator(context);
  if (auto prices = args.Get("--prices")) options.prices = report::LoadPrices(*prices);

  hlo::LoadedModule loaded = hlo::LoadModule(file);
  std::string config_text;
  for (const std::string& set : sets) config_text += (config_text.empty() ? "" : " ") + set;
  sweep::SweepTable table;
  table.columns = {"point"};
  table.columns.insert(table.columns.end(), sweep::kResultColumns.begin(),
                       sweep::kResultColumns.end());
  const int64_t index = args.Has("--index") ? ParsePointIndex("--index", *args.Get("--index")) : 0;
  table.rows.push_back({std::to_string(index)});
  for (std::string& field :
       sweep::ResultFields(sweep::EvaluatePoint(*loaded.module, config, options), config_text)) {
    table.rows.back().push_back(std::move(field));
  }
  std::cout << sweep::WriteCsv(table);
  return std::cout.flush() ? kExitOk : kExitFailure;
}

}  // namespace cli

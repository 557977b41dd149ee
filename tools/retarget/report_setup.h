// How a portability report is set up from what its user asked for — targets by name, an
// accelerator config, prices, a latency budget — shared by `retarget report` and the Python
// package (tools/python), so both build the same report from the same choices.
//
// Guarantees: PrepareReport checks every choice before any model is compiled (an unknown target
// is a UsageError listing the valid names, an unknown preset or config key an hlo::Error, a
// config given without the systolic target a UsageError); the setup owns what the options point
// at, so a report built with it may outlive the request.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/target_description.h"
#include "hlo/ir.h"
#include "tools/report/report.h"
#include "tools/retarget/cli.h"

namespace cli {

struct ReportRequest {
  std::vector<std::string> targets = {"cpu", "gpu", "systolic"};  // in the order given
  std::optional<std::string> config;  // systolic column from a preset or file
  std::vector<std::string> sets;      // KEY=VALUE overrides (on tpu-v1 without a config)
  std::optional<std::string> prices_file;  // default: report::DefaultPrices()
  report::LatencyBudget budget;
  bool estimate_only = false;  // never run or simulate
  bool graphs = false;         // keep each target's graph for the HTML page
};

struct ReportSetup {
  std::vector<const compiler::TargetDescription*> targets;
  std::unique_ptr<compiler::TargetDescription> configured_systolic;  // under a config
  report::ReportOptions options;
  std::string systolic_config;  // "" or the config's label ("gemmini --set array=16x16")
};

// Resolves `request` against the registered backends of `context`. Throws UsageError or
// hlo::Error as above.
std::unique_ptr<ReportSetup> PrepareReport(const ReportRequest& request, const Context& context);

// One model's row: its targets' cells, or a row of errors when the model fails as a whole
// (out of memory, an error outside any one target). `file` is shown in the report.
report::ModelReport ReportOnModel(const ReportSetup& setup, const std::string& name,
                                  const std::string& file, const hlo::Module& module);

}  // namespace cli
